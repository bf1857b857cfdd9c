//! `POST /session/{reference}`: code execution by long poll (the SDK's `execute`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What to run, or how to go on with a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExecuteRequest {
    /// `query` (code in the kernel's REPL), `batch` (the `options` commands), `continue` (the
    /// next output of `runId`), `input` (the line `code` for a run waiting for input). Left
    /// out: a completion request, answered with no completions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The code (`query`), or the line (`input`).
    #[serde(default, deserialize_with = "null_as_empty")]
    pub code: String,
    /// The run to go on with; a new run takes this id when given (else one is made).
    #[serde(rename = "runId", default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// `batch`: `clean`, `build`, `exec` commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<serde_json::Value>,
}

impl ExecuteRequest {
    /// `options.KEY` when it is a text (`batch`: `clean`, `build`, `exec`).
    pub fn option(&self, key: &str) -> Option<String> {
        self.options
            .as_ref()
            .and_then(|o| o.get(key))
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
    }
}

/// A text where clients may send `null` for the empty one.
fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Option::<String>::deserialize(d).map(Option::unwrap_or_default)
}

/// The answer: `{"result": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExecuteReply {
    pub result: ExecuteResult,
}

impl ExecuteResult {
    /// Output since the last answer, and how the run stands (`finished` with its exit
    /// code, or `continued`).
    pub fn new(status: &str, console: Vec<(String, String)>, exit_code: Option<i32>) -> Self {
        ExecuteResult {
            run_id: None,
            status: status.into(),
            console,
            exit_code,
            options: None,
            files: Vec::new(),
            completions: None,
        }
    }

    /// The run waits for a line of input (a password when `password`).
    pub fn waiting_input(console: Vec<(String, String)>, password: bool) -> Self {
        ExecuteResult {
            options: Some(serde_json::json!({ "is_password": password })),
            ..ExecuteResult::new("waiting-input", console, None)
        }
    }

    /// One frame of the WebSocket stream: this result as JSON text.
    pub fn frame(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Output since the last answer, and how the run stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExecuteResult {
    /// The run's id (give it back with `continue` or `input`). Absent for a completion.
    #[serde(rename = "runId", default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// `finished`, `continued` (ask again) or `waiting-input`.
    pub status: String,
    /// Output records in order: `["stdout", text]`, `["stderr", text]`.
    #[serde(default)]
    pub console: Vec<(String, String)>,
    /// The exit code once `finished`.
    #[serde(rename = "exitCode", default)]
    pub exit_code: Option<i32>,
    /// `waiting-input`: `{"is_password": bool}`.
    #[serde(default)]
    pub options: Option<serde_json::Value>,
    /// Files the run made available (none).
    #[serde(default)]
    pub files: Vec<serde_json::Value>,
    /// A completion request: the completions (none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<Vec<String>>,
}

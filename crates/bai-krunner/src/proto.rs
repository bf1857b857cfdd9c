//! The socket protocol: one JSON line in, JSON lines out. Byte-compatible with
//! `bai_core::agent::{ExecRequest, ExecEvent}` (krunner stays free of bai dependencies).

use serde::{Deserialize, Serialize};

#[derive(Debug, Deserialize)]
pub struct Request {
    pub op: String,
    #[serde(default)]
    pub mode: Option<String>,
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub line: Option<String>,
    #[serde(default)]
    pub clean: Option<String>,
    #[serde(default)]
    pub build: Option<String>,
    #[serde(default)]
    pub exec: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, Clone, PartialEq)]
#[serde(tag = "t", rename_all = "kebab-case")]
pub enum Event {
    Pong,
    Stdout { data: String },
    Stderr { data: String },
    WaitingInput { prompt: String, password: bool },
    Finished { exit_code: i32 },
}

impl Event {
    pub fn line(&self) -> String {
        let mut s = serde_json::to_string(self)
            .unwrap_or_else(|_| "{\"t\":\"finished\",\"exit_code\":1}".into());
        s.push('\n');
        s
    }
}

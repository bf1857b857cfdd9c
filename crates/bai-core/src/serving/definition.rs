//! `model-definition.yaml`: what a model folder says about serving it, in Backend.AI's schema
//! (the current one and 24.03's: `start_command` as a string or a list, also spelled
//! `command` / `start-command`; `health_check` with `path`, `interval`, `max_retries`,
//! `max_wait_time`, `expected_status_code`, `initial_delay`, `enable`), and the shell command a
//! replica runs: `cd` to the model path, the pre-start actions bai can honour, then the start
//! command through the definition's shell.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The file names tried, in order, when a service names none.
pub const DEFAULT_PATHS: &[&str] = &["model-definition.yaml", "model-definition.yml"];

/// A parsed definition: its first model is served.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Definition {
    pub models: Vec<Model>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    pub name: String,
    pub model_path: String,
    #[serde(default)]
    pub service: Option<Service>,
    #[serde(default)]
    pub metadata: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Service {
    #[serde(default)]
    pub pre_start_actions: Vec<Action>,
    #[serde(alias = "command", alias = "start-command")]
    pub start_command: Command,
    #[serde(default = "default_shell")]
    pub shell: Option<String>,
    pub port: u16,
    #[serde(default)]
    pub health_check: Option<HealthCheck>,
}

fn default_shell() -> Option<String> {
    Some("/bin/bash".into())
}

/// `start_command`: a shell string, or a list of words (joined with shell quoting).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Command {
    Line(String),
    Words(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Action {
    pub action: String,
    #[serde(default)]
    pub args: serde_json::Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealthCheck {
    /// Declaring a health check turns it on unless `enable: false`.
    #[serde(default)]
    pub enable: Option<bool>,
    #[serde(default = "default_health_path")]
    pub path: String,
    #[serde(default = "default_interval")]
    pub interval: f64,
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    #[serde(default = "default_max_wait")]
    pub max_wait_time: f64,
    #[serde(default = "default_status")]
    pub expected_status_code: u16,
    #[serde(default = "default_initial_delay")]
    pub initial_delay: f64,
}

fn default_health_path() -> String {
    "/health".into()
}
fn default_interval() -> f64 {
    10.0
}
fn default_max_retries() -> u32 {
    10
}
fn default_max_wait() -> f64 {
    15.0
}
fn default_status() -> u16 {
    200
}
fn default_initial_delay() -> f64 {
    60.0
}

impl HealthCheck {
    pub fn enabled(&self) -> bool {
        self.enable.unwrap_or(true)
    }
}

/// Quotes a word for `/bin/sh`.
pub fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `def` if it can be served: a first model with a name, an absolute model path and a
/// service whose port, start command, health check and pre-start actions bai can use; else
/// what is wrong, by its path in the file.
pub fn check(def: Definition) -> Result<Definition, String> {
    let model = def
        .models
        .first()
        .ok_or("models: the list is empty; declare the model to serve")?;
    if model.name.trim().is_empty() {
        return Err("models[0].name: must not be empty".into());
    }
    if !model.model_path.starts_with('/') {
        return Err(format!(
            "models[0].model_path: {:?} must be an absolute path inside the container (e.g. /models/my-model)",
            model.model_path
        ));
    }
    let service = model.service.as_ref().ok_or(
        "models[0].service: missing; a served model needs service.start_command and service.port",
    )?;
    if service.port <= 1 {
        return Err(format!(
            "models[0].service.port: {} is not a port a server can listen on",
            service.port
        ));
    }
    let empty = match &service.start_command {
        Command::Line(s) => s.trim().is_empty(),
        Command::Words(w) => w.is_empty(),
    };
    if empty {
        return Err("models[0].service.start_command: must not be empty".into());
    }
    if let Some(h) = &service.health_check {
        if !h.path.starts_with('/') {
            return Err(format!(
                "models[0].service.health_check.path: {:?} must start with /",
                h.path
            ));
        }
        for (field, v) in [
            ("interval", h.interval),
            ("max_wait_time", h.max_wait_time),
            ("initial_delay", h.initial_delay),
        ] {
            if !v.is_finite() || v < 0.0 || (field != "initial_delay" && v == 0.0) {
                return Err(format!(
                    "models[0].service.health_check.{field}: {v} must be a positive number of seconds"
                ));
            }
        }
        if !(100..=599).contains(&h.expected_status_code) {
            return Err(format!(
                "models[0].service.health_check.expected_status_code: {} is not an HTTP status",
                h.expected_status_code
            ));
        }
    }
    for (i, a) in service.pre_start_actions.iter().enumerate() {
        action_line(a).map_err(|e| format!("models[0].service.pre_start_actions[{i}]: {e}"))?;
    }
    Ok(def)
}

fn arg_str<'a>(a: &'a Action, k: &str) -> Result<&'a str, String> {
    a.args
        .get(k)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("action {} needs args.{k} (a string)", a.action))
}

/// One pre-start action as a shell line.
fn action_line(a: &Action) -> Result<String, String> {
    match a.action.as_str() {
        "run_command" => match a.args.get("command") {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            Some(Value::Array(words)) if !words.is_empty() => words
                .iter()
                .map(|w| {
                    w.as_str()
                        .map(quote)
                        .ok_or_else(|| "run_command: args.command words must be strings".into())
                })
                .collect::<Result<Vec<_>, String>>()
                .map(|w| w.join(" ")),
            _ => Err("run_command needs args.command (a string or a list of words)".into()),
        },
        "mkdir" => Ok(format!("mkdir -p {}", quote(arg_str(a, "path")?))),
        "log" => Ok(format!(
            "echo {} >&2",
            quote(&format!("pre-start: {}", arg_str(a, "message")?))
        )),
        "write_file" | "write_tempfile" => {
            let name = arg_str(a, "filename")?;
            let body = arg_str(a, "body")?;
            let mut line = format!("printf '%s' {} > {}", quote(body), quote(name));
            if let Some(mode) = a.args.get("mode").and_then(Value::as_str) {
                if !mode.chars().all(|c| c.is_digit(8)) {
                    return Err(format!("write_file: mode {mode:?} is not octal"));
                }
                line.push_str(&format!(" && chmod {mode} {}", quote(name)));
            }
            Ok(line)
        }
        other => Err(format!(
            "action {other:?} is not supported here (run_command, mkdir, log, write_file)"
        )),
    }
}

impl Definition {
    pub fn model(&self) -> &Model {
        &self.models[0]
    }

    #[expect(
        clippy::expect_used,
        reason = "parse() refuses a model without a service"
    )]
    pub fn service(&self) -> &Service {
        self.models[0]
            .service
            .as_ref()
            .expect("parse() refuses a model without service")
    }

    pub fn port(&self) -> u16 {
        self.service().port
    }

    /// The health check when it is on.
    pub fn health(&self) -> Option<&HealthCheck> {
        self.service().health_check.as_ref().filter(|h| h.enabled())
    }

    /// The replica's command: set up in the model path, then run the server in its place
    /// (its exit ends the replica).
    pub fn command_line(&self) -> String {
        let model = self.model();
        let service = self.service();
        let start = match &service.start_command {
            Command::Line(s) => s.clone(),
            Command::Words(w) => w.iter().map(|x| quote(x)).collect::<Vec<_>>().join(" "),
        }
        .replace("{model_path}", &model.model_path);
        let mut lines = vec![
            "set -e".to_string(),
            format!("cd {}", quote(&model.model_path)),
        ];
        for a in &service.pre_start_actions {
            if let Ok(l) = action_line(a) {
                lines.push(l);
            }
        }
        lines.push(match &service.shell {
            Some(sh) => format!("exec {} -c {}", quote(sh), quote(&start)),
            None => format!("exec {start}"),
        });
        lines.join("\n")
    }
}

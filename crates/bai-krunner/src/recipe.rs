//! An image's own web apps, started from recipes in Backend.AI's format: a JSON file
//! `/etc/backend.ai/service-defs/<app>.json` in the image, for an app its
//! `ai.backend.service-ports` label declares. So an image made for Backend.AI (code-server,
//! MLflow, a model's demo page) offers the same apps here. A recipe has:
//!
//! - `command`: the program and its arguments, or one string run by `shell` (`bash` unless
//!   the recipe names another) with `-c`;
//! - `prestart` (also `prestart_actions`): steps run before each start, in order:
//!   `write_file {filename, body: [lines], mode: "644", append: false}`,
//!   `write_tempfile {body, mode}` (its path is the step's value), `mkdir {path}`,
//!   `run_command {command: [args], echo: false}` (`{out, err}` is its value) and
//!   `log {message}`; a step with a `ref` keeps its value under that name;
//! - `env`: variables for the app; `default_arguments`: `name → value`, a list of values or
//!   `null` (a flag alone), added after the command, in name order;
//! - `noop: true`: nothing to start (the image's own process serves the port).
//!
//! Every string may name values as `{name}`, `{name[0]}`, `{name[key]}` or `${{ name }}`
//! (`{{` and `}}` are braces): `runtime_path` (the image's `ai.backend.runtime-path` label,
//! else `python3`), `ports` (the app's port, `{ports[0]}`) and the steps' values. The
//! session's ports and runtime path come from the manager in the kernel's environment
//! ([`PORTS_VAR`], [`RUNTIME_PATH_VAR`]). `url_template`, `allowed_envs` and
//! `allowed_arguments` are read and not used (apps take no arguments here).

use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// Where images keep their recipes.
pub const DIR: &str = "/etc/backend.ai/service-defs";
/// The session's apps as `name:protocol:port,…` (the image's service-ports label).
pub const PORTS_VAR: &str = "BAI_SERVICE_PORTS";
/// The image's runtime path label.
pub const RUNTIME_PATH_VAR: &str = "BAI_RUNTIME_PATH";

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Program {
    Script(String),
    Args(Vec<String>),
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ArgValue {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Deserialize)]
struct Step {
    action: String,
    #[serde(default)]
    args: serde_json::Map<String, serde_json::Value>,
    #[serde(rename = "ref", default)]
    keep_as: Option<String>,
}

/// One app's recipe and the port it serves on.
#[derive(Debug, Deserialize)]
pub struct Recipe {
    command: Program,
    #[serde(default = "bash")]
    shell: String,
    #[serde(default)]
    noop: bool,
    #[serde(default, alias = "prestart_actions")]
    prestart: Vec<Step>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    default_arguments: BTreeMap<String, Option<ArgValue>>,
    #[serde(skip)]
    pub port: u16,
}

fn bash() -> String {
    "bash".into()
}

/// What starts the app: its program and arguments, and variables of its own.
#[derive(Debug, PartialEq)]
pub struct Launch {
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

/// A value recipes may name.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Text(String),
    List(Vec<String>),
    Map(BTreeMap<String, String>),
}

type Values = BTreeMap<String, Value>;

impl Recipe {
    /// The recipe of `app` in `dir`, with its port from `ports` (a [`PORTS_VAR`] value).
    pub fn find(dir: &Path, app: &str, ports: &str) -> Result<Recipe, String> {
        if app.is_empty()
            || !app
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            || app.starts_with('.')
        {
            return Err(format!("{app:?} is not an app name"));
        }
        let file = dir.join(format!("{app}.json"));
        let text = match std::fs::read(&file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!(
                    "krunner does not know how to start the app {app:?}: the image has no \
                     recipe for it ({})",
                    file.display()
                ));
            }
            Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
        };
        let mut recipe: Recipe = serde_json::from_slice(&text)
            .map_err(|e| format!("the image's recipe {} is not valid: {e}", file.display()))?;
        recipe.port = ports
            .split(',')
            .filter_map(|item| {
                let mut parts = item.trim().split(':');
                let (name, _, port) = (parts.next()?, parts.next()?, parts.next()?);
                (name == app).then(|| port.parse().ok()).flatten()
            })
            .next()
            .ok_or_else(|| format!("the session declares no port for the app {app:?}"))?;
        Ok(recipe)
    }

    /// Whether starting the app runs a program.
    pub fn spawns(&self) -> bool {
        !self.noop
    }

    /// Runs the recipe's steps in `workdir`, then gives the app's command and variables.
    pub fn prepare(&self, workdir: &Path, runtime_path: &str) -> Result<Launch, String> {
        let mut values = Values::new();
        values.insert("runtime_path".into(), Value::Text(runtime_path.into()));
        values.insert("ports".into(), Value::List(vec![self.port.to_string()]));
        for step in &self.prestart {
            let value = run_step(step, &values, workdir)?;
            if let Some(name) = &step.keep_as {
                values.insert(name.clone(), value);
            }
        }
        let mut args = match &self.command {
            Program::Script(s) => vec![self.shell.clone(), "-c".into(), s.clone()],
            Program::Args(a) => a.clone(),
        };
        for (name, value) in &self.default_arguments {
            args.push(name.clone());
            match value {
                Some(ArgValue::One(v)) => args.push(v.clone()),
                Some(ArgValue::Many(v)) => args.extend(v.iter().cloned()),
                None => {}
            }
        }
        let args = args
            .iter()
            .map(|a| fill(a, &values))
            .collect::<Result<Vec<_>, _>>()?;
        if args.first().is_none_or(|p| p.is_empty()) {
            return Err("the recipe's command is empty".into());
        }
        let env = self
            .env
            .iter()
            .map(|(k, v)| Ok((fill(k, &values)?, fill(v, &values)?)))
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Launch { args, env })
    }
}

fn text_arg(step: &Step, name: &str) -> Result<String, String> {
    match step.args.get(name) {
        Some(serde_json::Value::String(s)) => Ok(s.clone()),
        _ => Err(format!("{}: {name} must be a string", step.action)),
    }
}

fn lines_arg(step: &Step, name: &str) -> Result<Vec<String>, String> {
    match step.args.get(name) {
        Some(serde_json::Value::Array(a)) => a
            .iter()
            .map(|v| v.as_str().map(String::from))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("{}: {name} must be a list of strings", step.action)),
        _ => Err(format!("{}: {name} must be a list of strings", step.action)),
    }
}

fn flag_arg(step: &Step, name: &str) -> bool {
    step.args
        .get(name)
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

/// A file mode in octal text (`"755"`), 644 when not given.
fn mode_arg(step: &Step) -> Result<u32, String> {
    match step.args.get("mode") {
        None => Ok(0o644),
        Some(serde_json::Value::String(m)) => u32::from_str_radix(m, 8)
            .ok()
            .filter(|m| *m <= 0o7777)
            .ok_or_else(|| format!("{}: mode {m:?} is not an octal file mode", step.action)),
        Some(_) => Err(format!("{}: mode must be a string", step.action)),
    }
}

fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("cannot set the mode of {}: {e}", path.display()))
}

/// Runs one step; its value (empty text for steps that give none).
fn run_step(step: &Step, values: &Values, workdir: &Path) -> Result<Value, String> {
    let none = Value::Text(String::new());
    match step.action.as_str() {
        "write_file" => {
            let file = workdir.join(fill(&text_arg(step, "filename")?, values)?);
            let mut body = String::new();
            for line in lines_arg(step, "body")? {
                body.push_str(&fill(&line, values)?);
                body.push('\n');
            }
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .append(flag_arg(step, "append"))
                .truncate(!flag_arg(step, "append"))
                .open(&file)
                .map_err(|e| format!("write_file: cannot open {}: {e}", file.display()))?;
            f.write_all(body.as_bytes())
                .map_err(|e| format!("write_file: {}: {e}", file.display()))?;
            set_mode(&file, mode_arg(step)?)?;
            Ok(none)
        }
        "write_tempfile" => {
            let mut body = String::new();
            for line in lines_arg(step, "body")? {
                body.push_str(&fill(&line, values)?);
            }
            let (path, mut f) = temp_file()?;
            f.write_all(body.as_bytes())
                .map_err(|e| format!("write_tempfile: {}: {e}", path.display()))?;
            set_mode(&path, mode_arg(step)?)?;
            Ok(Value::Text(path.display().to_string()))
        }
        "mkdir" => {
            let dir = workdir.join(fill(&text_arg(step, "path")?, values)?);
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("mkdir: cannot make {}: {e}", dir.display()))?;
            Ok(none)
        }
        "run_command" => {
            let args = lines_arg(step, "command")?
                .iter()
                .map(|a| fill(a, values))
                .collect::<Result<Vec<_>, _>>()?;
            let Some(program) = args.first() else {
                return Err("run_command: the command is empty".into());
            };
            let out = Command::new(program)
                .args(&args[1..])
                .current_dir(workdir)
                .stdin(Stdio::null())
                .output()
                .map_err(|e| format!("run_command: cannot run {program}: {e}"))?;
            let (stdout, stderr) = (
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            );
            if flag_arg(step, "echo") {
                say!(
                    "krunner: {program}: {}{}",
                    stdout.trim_end(),
                    stderr.trim_end()
                );
            }
            Ok(Value::Map(BTreeMap::from([
                ("out".to_string(), stdout),
                ("err".to_string(), stderr),
            ])))
        }
        "log" => {
            say!("krunner: {}", fill(&text_arg(step, "message")?, values)?);
            Ok(none)
        }
        other => Err(format!(
            "the recipe has a step krunner does not know: {other:?}"
        )),
    }
}

/// A new file of this kernel's user in the temporary directory.
fn temp_file() -> Result<(std::path::PathBuf, std::fs::File), String> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let dir = std::env::temp_dir();
    loop {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.join(format!("bai-app-{}-{n}.py", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(format!(
                    "write_tempfile: cannot make {}: {e}",
                    path.display()
                ));
            }
        }
    }
}

/// `text` with the values it names put in.
fn fill(text: &str, values: &Values) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(['{', '}', '$']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("${{") {
            let end = after
                .find("}}")
                .ok_or_else(|| format!("{text:?}: an unclosed ${{{{"))?;
            out.push_str(&lookup(after[..end].trim(), values, text)?);
            rest = &after[end + 2..];
        } else if let Some(after) = tail.strip_prefix("{{") {
            out.push('{');
            rest = after;
        } else if let Some(after) = tail.strip_prefix("}}") {
            out.push('}');
            rest = after;
        } else if let Some(after) = tail.strip_prefix('{') {
            let end = after
                .find('}')
                .ok_or_else(|| format!("{text:?}: an unclosed {{"))?;
            out.push_str(&lookup(after[..end].trim(), values, text)?);
            rest = &after[end + 1..];
        } else {
            // A lone `}` or `$`.
            out.push_str(&tail[..1]);
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// `name`, `name[3]` or `name[key]`.
fn lookup(expr: &str, values: &Values, text: &str) -> Result<String, String> {
    let (name, index) = match expr.split_once('[') {
        Some((name, rest)) => {
            let index = rest
                .strip_suffix(']')
                .ok_or_else(|| format!("{text:?}: cannot read {{{expr}}}"))?;
            (name.trim(), Some(index.trim()))
        }
        None => (expr, None),
    };
    let unknown = || format!("{text:?} names {{{expr}}}, which the recipe does not have");
    match (values.get(name), index) {
        (Some(Value::Text(t)), None) => Ok(t.clone()),
        (Some(Value::List(l)), None) => Ok(format!("{l:?}")),
        (Some(Value::List(l)), Some(i)) => i
            .parse::<usize>()
            .ok()
            .and_then(|i| l.get(i).cloned())
            .ok_or_else(unknown),
        (Some(Value::Map(m)), Some(k)) => m
            .get(k.trim_matches(['\'', '"']))
            .cloned()
            .ok_or_else(unknown),
        _ => Err(unknown()),
    }
}

#[cfg(test)]
#[path = "recipe_tests.rs"]
mod tests;

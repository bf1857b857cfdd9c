//! Command line arguments.

use clap::{Args, Parser, Subcommand};
use serde_json::{Map, Value};

#[derive(Parser, Debug)]
#[command(
    name = "bai",
    version,
    about = "bai command line client (Backend.AI compatible)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Start a session and run code or files in it.
    Run(RunArgs),
    /// Start a session (interactive, or batch with a startup command).
    Start(StartArgs),
    /// List your sessions, most recently changed first.
    Ps(PsArgs),
    /// Lifecycle events of a session as they happen.
    Events(EventsArgs),
    /// Logs of a session's container.
    Logs(RefArg),
    /// Terminate sessions (queued ones are cancelled).
    #[command(visible_alias = "kill")]
    Rm(RmArgs),
    /// Session commands.
    #[command(subcommand)]
    Session(SessionCmd),
    /// Administrator commands.
    #[command(subcommand)]
    Admin(AdminCmd),
    /// Print the client version.
    Version,
}

#[derive(Subcommand, Debug)]
pub enum SessionCmd {
    /// Same as `bai start`.
    Create(Box<StartArgs>),
    /// Details of a session.
    Info(InfoArgs),
    /// Rename a session.
    Rename { reference: String, new_name: String },
    /// Logs of a session's container.
    Logs(RefArg),
    /// Lifecycle events of a session.
    Events(EventsArgs),
    /// When the session entered each status, and its scheduling history.
    History(RefArg),
    /// Same as `bai rm`.
    Destroy(RmArgs),
}

#[derive(Subcommand, Debug)]
pub enum AdminCmd {
    /// Every user's sessions (administrators only).
    Sessions(AdminPsArgs),
    /// Session administration.
    #[command(subcommand)]
    Session(AdminSessionCmd),
}

#[derive(Subcommand, Debug)]
pub enum AdminSessionCmd {
    /// Every user's sessions (administrators only).
    List(AdminPsArgs),
}

#[derive(Args, Debug, Clone)]
pub struct RefArg {
    /// Session name or id.
    pub reference: String,
}

#[derive(Args, Debug, Clone)]
pub struct InfoArgs {
    pub reference: String,
    /// Print the raw JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct RmArgs {
    #[arg(required = true)]
    pub references: Vec<String>,
    /// Force termination.
    #[arg(short, long)]
    pub forced: bool,
}

#[derive(Args, Debug, Clone)]
pub struct EventsArgs {
    pub reference: String,
    /// session, kernel, or * for both.
    #[arg(long, default_value = "*")]
    pub scope: String,
    /// Exit when this event arrives (batch_session_result: exit 0 on success, 1 on failure).
    #[arg(long)]
    pub wait: Option<String>,
}

#[derive(Args, Debug, Clone, Default)]
pub struct PsArgs {
    /// Running sessions only.
    #[arg(long, conflicts_with_all = ["dead", "all", "status"])]
    pub running: bool,
    /// Terminated and cancelled sessions only.
    #[arg(long, conflicts_with_all = ["all", "status"])]
    pub dead: bool,
    /// Sessions in every status, every page.
    #[arg(long, conflicts_with = "status")]
    pub all: bool,
    /// Comma-separated statuses.
    #[arg(short, long)]
    pub status: Option<String>,
    #[arg(long, default_value_t = 10)]
    pub limit: i64,
    #[arg(long, default_value_t = 0)]
    pub offset: i64,
}

#[derive(Args, Debug, Clone)]
pub struct AdminPsArgs {
    #[command(flatten)]
    pub ps: PsArgs,
    /// Only this keypair's sessions.
    #[arg(long)]
    pub access_key: Option<String>,
}

/// Options shared by `run` and `start`.
#[derive(Args, Debug, Clone, Default)]
pub struct CreateArgs {
    /// Session name (4–64 letters, digits, '-', '_', '.'); random when not given.
    #[arg(short = 't', long = "name")]
    pub name: Option<String>,
    /// interactive, batch or inference.
    #[arg(long = "type", default_value = "interactive")]
    pub session_type: String,
    /// Resources, e.g. -r cpu=2 -r mem=1g -r shmem=64m (a mem value without unit is MiB).
    #[arg(short = 'r', long = "resources", value_name = "KEY=VALUE")]
    pub resources: Vec<String>,
    /// Environment variables, e.g. -e K=V.
    #[arg(short = 'e', long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Return right after the session is queued.
    #[arg(long)]
    pub enqueue_only: bool,
    /// Wait at most this many seconds for the session to start.
    #[arg(long, default_value_t = 0)]
    pub max_wait: u64,
    /// Batch: never start before this time (ISO-8601, or a delay like 30s, 5m, 2h).
    #[arg(long)]
    pub starts_at: Option<String>,
    /// Batch: terminate with task-timeout after this long (seconds, or 30s, 5m, 2h).
    #[arg(long, alias = "timeout")]
    pub batch_timeout: Option<String>,
    #[arg(long)]
    pub tag: Option<String>,
    /// A shell script file run once before the session is ready.
    #[arg(long)]
    pub bootstrap_script: Option<std::path::PathBuf>,
    /// Resource group.
    #[arg(long)]
    pub scaling_group: Option<String>,
    /// Administrators: create the session for this access key.
    #[arg(short = 'o', long = "owner")]
    pub owner: Option<String>,
    /// Fail instead of reusing a live session with the same name.
    #[arg(long)]
    pub no_reuse: bool,
    /// Print less.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub create: CreateArgs,
    /// Python code to run (query mode).
    #[arg(short = 'c', long = "code")]
    pub code: Option<String>,
    /// Shell command to run after uploading FILES (batch mode).
    #[arg(long)]
    pub exec: Option<String>,
    #[arg(long)]
    pub clean: Option<String>,
    #[arg(long)]
    pub build: Option<String>,
    /// Batch sessions: the command that makes up the session.
    #[arg(long)]
    pub startup_command: Option<String>,
    /// Terminate the session afterwards.
    #[arg(long)]
    pub rm: bool,
    /// Upload paths relative to this directory.
    #[arg(long, default_value = ".")]
    pub basedir: std::path::PathBuf,
    /// Image name or alias, e.g. python.
    pub image: String,
    /// Files to upload into /home/work.
    pub files: Vec<std::path::PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct StartArgs {
    #[command(flatten)]
    pub create: CreateArgs,
    /// Batch sessions: the command that makes up the session.
    #[arg(short = 'c', long = "startup-command")]
    pub startup_command: Option<String>,
    /// Image name or alias, e.g. python.
    pub image: String,
}

/// Splits `K=V` (the value may contain `=`).
pub fn split_kv(s: &str, what: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("{what} {s:?} must look like KEY=VALUE")),
    }
}

/// `-r` values: `mem` without a unit letter gets `m` (as the official client); `shmem`
/// goes to resource options.
/// Resource slots and resource options (`shmem`).
pub type ResourceMaps = (Map<String, Value>, Map<String, Value>);

pub fn resources(items: &[String]) -> Result<ResourceMaps, String> {
    let mut res = Map::new();
    let mut opts = Map::new();
    for it in items {
        let (k, mut v) = split_kv(it, "resource")?;
        if (k == "mem" || k == "shmem") && v.chars().last().is_some_and(|c| c.is_ascii_digit()) {
            v.push('m');
        }
        if k == "shmem" {
            opts.insert(k, Value::String(v));
        } else {
            res.insert(k, Value::String(v));
        }
    }
    Ok((res, opts))
}

pub fn environ(items: &[String]) -> Result<Map<String, Value>, String> {
    let mut m = Map::new();
    for it in items {
        let (k, v) = split_kv(it, "environment variable")?;
        m.insert(k, Value::String(v));
    }
    Ok(m)
}

pub const ALL_STATUSES: &str = "PENDING,SCHEDULED,PULLING,PREPARED,PREPARING,CREATING,RUNNING,RESTARTING,RUNNING_DEGRADED,TERMINATING,TERMINATED,ERROR,CANCELLED";

impl PsArgs {
    pub fn statuses(&self) -> String {
        if let Some(s) = &self.status {
            return s.to_ascii_uppercase();
        }
        if self.running {
            "PREPARING,PULLING,CREATING,RUNNING,RUNNING_DEGRADED".into()
        } else if self.dead {
            "CANCELLED,TERMINATED".into()
        } else if self.all {
            ALL_STATUSES.into()
        } else {
            "PENDING,SCHEDULED,PULLING,PREPARED,PREPARING,CREATING,RUNNING,RESTARTING,RUNNING_DEGRADED,TERMINATING,ERROR".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_values_follow_the_official_client() {
        let (r, o) = resources(&[
            "cpu=2".into(),
            "mem=4096".into(),
            "shmem=64".into(),
            "gpu=0.5".into(),
        ])
        .unwrap();
        assert_eq!(r["cpu"], "2");
        assert_eq!(r["mem"], "4096m");
        assert_eq!(r["gpu"], "0.5");
        assert_eq!(o["shmem"], "64m");
        let (r, _) = resources(&["mem=1g".into()]).unwrap();
        assert_eq!(r["mem"], "1g");
        assert!(resources(&["cpu".into()]).is_err());
    }

    #[test]
    fn env_values_may_contain_equals() {
        let e = environ(&["A=b=c".into(), "EMPTY=".into()]).unwrap();
        assert_eq!(e["A"], "b=c");
        assert_eq!(e["EMPTY"], "");
        assert!(environ(&["=x".into()]).is_err());
    }

    #[test]
    fn status_filters() {
        let ps = PsArgs {
            dead: true,
            ..Default::default()
        };
        assert_eq!(ps.statuses(), "CANCELLED,TERMINATED");
        let ps = PsArgs::default();
        assert!(ps.statuses().contains("PENDING") && !ps.statuses().contains("TERMINATED"));
        let ps = PsArgs {
            all: true,
            ..Default::default()
        };
        assert!(ps.statuses().contains("CANCELLED"));
    }

    #[test]
    fn cli_parses_the_seed_commands() {
        let c = Cli::try_parse_from(["bai", "run", "--rm", "-c", "print(1)", "python"]).unwrap();
        assert!(matches!(c.cmd, Cmd::Run(ref r) if r.rm && r.code.as_deref() == Some("print(1)")));
        let c = Cli::try_parse_from([
            "bai",
            "run",
            "--rm",
            "--exec",
            "python myscript.py arg1 arg2",
            "python",
            "./myscript.py",
        ])
        .unwrap();
        assert!(matches!(c.cmd, Cmd::Run(ref r) if r.files.len() == 1 && r.image == "python"));
        let c = Cli::try_parse_from([
            "bai", "start", "--type", "batch", "-c", "ls", "-t", "mysess", "python",
        ])
        .unwrap();
        assert!(matches!(c.cmd, Cmd::Start(ref s) if s.startup_command.as_deref() == Some("ls")));
        assert!(Cli::try_parse_from(["bai", "admin", "sessions", "--access-key", "AK"]).is_ok());
        assert!(Cli::try_parse_from(["bai", "ps", "--running", "--dead"]).is_err());
    }
}

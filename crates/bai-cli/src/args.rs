//! Command line arguments (clap derive) and the pure helpers that turn them into requests.

use clap::{Args, Parser, Subcommand};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "bai",
    version,
    about = "bai command line client (Backend.AI compatible; also installed as backend.ai)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Start a session (or reuse one by name) and run code or files in it.
    Run(Box<RunArgs>),
    /// Start a session (interactive, or batch with a startup command).
    Start(Box<StartArgs>),
    /// List your sessions, most recently changed first.
    Ps(PsArgs),
    /// Print a session's lifecycle events as they happen.
    Events(EventsArgs),
    /// Print the logs of a session's container.
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
    /// The resource groups you may launch in, with their free resources.
    #[command(visible_alias = "scaling-groups")]
    ResourceGroups,
    /// Resource presets (`--check`: which fit right now).
    Presets(PresetsArgs),
    /// Agents of your resource groups with their free resources.
    Agents,
    /// Your projects.
    Projects,
    /// Data folders: create, list, info, rename, delete, and their files.
    #[command(subcommand, visible_alias = "folder")]
    Vfolder(VfolderCmd),
    /// Forward a local TCP port to an app of a session (e.g. sshd) until Ctrl-C.
    App(AppArgs),
    /// The apps of a session.
    Apps(RefArg),
    /// Open a web app of a session (Jupyter, the web terminal `ttyd`, a preopen port): prints
    /// its URL, with a permit for your browser.
    Open(OpenArgs),
    /// Download files from a session's /home/work.
    Download(DownloadArgs),
    /// Upload files into a session's /home/work.
    Upload(UploadArgs),
    /// Print the client version.
    Version,
}

#[derive(Subcommand, Debug)]
pub enum SessionCmd {
    /// Same as `bai start`.
    Create(Box<StartArgs>),
    /// Same as `bai ps`.
    List(PsArgs),
    /// Show a session's fields (GET /session/REF).
    Info(InfoArgs),
    /// A session's recent resource use (CPU, memory, network, disk) and idle checks.
    Stats(InfoArgs),
    /// Rename a session.
    Rename {
        /// Session name or id.
        reference: String,
        /// The new name (4–64 letters, digits, '-', '_', '.').
        new_name: String,
    },
    /// Print the logs of a session's container.
    Logs(RefArg),
    /// Print a session's lifecycle events as they happen.
    Events(EventsArgs),
    /// When the session entered each status.
    #[command(visible_alias = "status-history")]
    History(HistoryArgs),
    /// Same as `bai download`.
    Download(DownloadArgs),
    /// Same as `bai upload`.
    Upload(UploadArgs),
    /// Same as `bai apps`.
    Apps(RefArg),
    /// Same as `bai rm`.
    #[command(visible_alias = "rm")]
    Destroy(RmArgs),
}

#[derive(Subcommand, Debug)]
pub enum AdminCmd {
    /// Every user's sessions (administrators only).
    Sessions(AdminPsArgs),
    /// Session administration.
    #[command(subcommand)]
    Session(AdminSessionCmd),
    /// Resource groups: create, update, delete, allow keypairs.
    #[command(subcommand, visible_alias = "scaling-group")]
    ResourceGroup(AdminGroupCmd),
    /// Resource presets: create or replace, delete.
    #[command(subcommand)]
    Preset(AdminPresetCmd),
    /// Keypair resource policies: list, create or replace, delete, assign.
    #[command(subcommand, visible_alias = "resource-policy")]
    Policy(AdminPolicyCmd),
    /// Projects and their members.
    #[command(subcommand)]
    Project(AdminProjectCmd),
}

#[derive(Subcommand, Debug)]
pub enum VfolderCmd {
    /// Create a data folder.
    Create {
        name: String,
        /// Storage host, e.g. nfs:shared (default: the server's default; see `bai vfolder hosts`).
        host: Option<String>,
        /// rw or ro (read-only inside sessions).
        #[arg(short, long, default_value = "rw")]
        permission: String,
        /// Size limit, e.g. 10g (the folder becomes a filesystem of that size).
        #[arg(long)]
        quota: Option<String>,
        /// Make it a project folder, shared with the project's members (administrators only).
        #[arg(short = 'g', long = "project")]
        project: Option<String>,
    },
    /// Your data folders and your projects' folders.
    List,
    /// The storage hosts folders can be created on, and the default one.
    #[command(visible_alias = "list-hosts")]
    Hosts,
    /// A folder's details.
    Info { name: String },
    /// Rename a folder.
    Rename { name: String, new_name: String },
    /// Delete a folder and its files.
    Delete { name: String },
    /// Files in a folder's directory.
    Ls {
        name: String,
        #[arg(default_value = ".")]
        path: String,
    },
    /// Create directories.
    Mkdir {
        name: String,
        #[arg(required = true)]
        paths: Vec<String>,
        /// Create parents as needed.
        #[arg(short, long)]
        parents: bool,
        /// No error when it exists.
        #[arg(short, long)]
        exist_ok: bool,
    },
    /// Upload files (paths relative to --base-dir keep their directories).
    Upload {
        name: String,
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long, default_value = ".")]
        base_dir: PathBuf,
        /// No progress bar.
        #[arg(short, long)]
        quiet: bool,
    },
    /// Download files into --base-dir.
    Download {
        name: String,
        #[arg(required = true)]
        files: Vec<String>,
        #[arg(long, default_value = ".")]
        base_dir: PathBuf,
        /// No progress bar.
        #[arg(short, long)]
        quiet: bool,
    },
    /// Rename a file or directory in place.
    RenameFile {
        name: String,
        path: String,
        new_name: String,
    },
    /// Move a file or directory inside the folder.
    Mv {
        name: String,
        src: String,
        dst: String,
    },
    /// Delete files (-r for directories).
    Rm {
        name: String,
        #[arg(required = true)]
        files: Vec<String>,
        #[arg(short, long)]
        recursive: bool,
    },
}

#[derive(Args, Debug, Clone)]
pub struct PresetsArgs {
    /// Also say which presets fit right now (for you, in the group).
    #[arg(long)]
    pub check: bool,
    /// Resource group to check in (default: default).
    #[arg(long)]
    pub group: Option<String>,
}

/// Fields of a resource group; only those given are set.
#[derive(Args, Debug, Clone, Default)]
pub struct GroupFields {
    #[arg(long)]
    pub description: Option<String>,
    /// Queue order: fifo, lifo or drf.
    #[arg(long)]
    pub scheduler: Option<String>,
    /// Agent choice: dispersed, concentrated or round-robin.
    #[arg(long)]
    pub selector: Option<String>,
    /// Open to every keypair (true) or only to those allowed (false).
    #[arg(long)]
    pub public: Option<bool>,
    /// Seconds a session may be passed over by smaller ones before it holds the queue.
    #[arg(long, value_name = "SECS")]
    pub starvation: Option<i64>,
    /// Cancel sessions PENDING longer than this (0: never).
    #[arg(long, value_name = "SECS")]
    pub pending_timeout: Option<i64>,
}

#[derive(Subcommand, Debug)]
pub enum AdminGroupCmd {
    /// Every resource group.
    List,
    /// Create a resource group.
    Create {
        name: String,
        #[command(flatten)]
        fields: GroupFields,
    },
    /// Change a resource group.
    Update {
        name: String,
        #[command(flatten)]
        fields: GroupFields,
    },
    /// Delete a resource group without agents and sessions.
    Delete { name: String },
    /// Let a keypair (or, with --project, every member of a project) use a non-public group.
    Allow {
        name: String,
        #[arg(required_unless_present = "project")]
        access_key: Option<String>,
        #[arg(long, conflicts_with = "access_key")]
        project: Option<String>,
    },
    /// Stop letting a keypair (or a project) use a non-public group.
    Deny {
        name: String,
        #[arg(required_unless_present = "project")]
        access_key: Option<String>,
        #[arg(long, conflicts_with = "access_key")]
        project: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum AdminProjectCmd {
    /// Every project and its members.
    List,
    /// Create a project.
    Create {
        name: String,
        #[arg(long, default_value = "")]
        description: String,
    },
    /// Delete a project.
    Delete { name: String },
    /// Add a user (by email) to a project.
    AddMember { name: String, email: String },
    /// Remove a user (by email) from a project.
    RemoveMember { name: String, email: String },
}

#[derive(Subcommand, Debug)]
pub enum AdminPresetCmd {
    /// Create or replace a preset, e.g. `bai admin preset create small -r cpu=1 -r mem=2g`.
    Create {
        name: String,
        /// cpu=N, mem=SIZE, shmem=SIZE, or an accelerator slot.
        #[arg(short = 'r', long = "resources", value_name = "KEY=VALUE", value_parser = parse_kv, required = true)]
        resources: Vec<(String, String)>,
    },
    /// Delete a preset.
    Delete { name: String },
}

#[derive(Subcommand, Debug)]
pub enum AdminPolicyCmd {
    /// Every policy and the keypairs that use it.
    List,
    /// Create or replace a policy.
    Create {
        name: String,
        #[arg(long, value_name = "N")]
        max_concurrent: Option<i64>,
        #[arg(long, value_name = "N")]
        max_pending: Option<i64>,
        /// Total slots of all the keypair's sessions, e.g. -r cpu=8 -r mem=32g.
        #[arg(short = 'r', long = "resources", value_name = "KEY=VALUE", value_parser = parse_kv)]
        total: Vec<(String, String)>,
        /// Seconds a session may live (0: no limit).
        #[arg(long, value_name = "SECS")]
        max_lifetime: Option<i64>,
        /// Seconds of inactivity before a session is reclaimed (0: never).
        #[arg(long, value_name = "SECS")]
        idle_timeout: Option<i64>,
    },
    /// Delete a policy no keypair uses.
    Delete { name: String },
    /// Give a keypair a policy.
    Assign { access_key: String, policy: String },
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
pub struct AppArgs {
    /// Session name or id.
    pub reference: String,
    /// The app, e.g. sshd, or a preopen port number.
    pub app: String,
    /// Where to listen: PORT or HOST:PORT.
    #[arg(short = 'b', long = "bind", default_value = "127.0.0.1:8080")]
    pub bind: String,
}

#[derive(Args, Debug, Clone)]
pub struct OpenArgs {
    /// Session name or id.
    pub reference: String,
    /// The app, e.g. jupyter, jupyterlab, ttyd, or a preopen port number.
    pub app: String,
    /// Serve it under the API's own address instead of a port of its own.
    #[arg(long)]
    pub path: bool,
    /// Try this host port first (port mode).
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,
    /// Anyone with the URL may open it, no permit needed.
    #[arg(long)]
    pub public: bool,
}

#[derive(Args, Debug, Clone)]
pub struct DownloadArgs {
    /// Session name or id.
    pub reference: String,
    /// Paths relative to /home/work (files or directories).
    #[arg(required = true)]
    pub files: Vec<String>,
    /// Where to put them.
    #[arg(long, default_value = ".")]
    pub dest: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct UploadArgs {
    /// Session name or id.
    pub reference: String,
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Paths relative to this directory keep their directories under /home/work.
    #[arg(long, default_value = ".")]
    pub base_dir: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct InfoArgs {
    /// Session name or id.
    pub reference: String,
    /// Print the raw JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct HistoryArgs {
    /// Session name or id.
    pub reference: String,
    /// Also print the scheduler's phase-by-phase history (implied by any filter).
    #[arg(long)]
    pub scheduling: bool,
    /// Scheduling history: only this phase (e.g. schedule, launch).
    #[arg(long)]
    pub phase: Option<String>,
    /// Scheduling history: SUCCESS, FAILURE, STALE, NEED_RETRY, EXPIRED, GIVE_UP or SKIPPED.
    #[arg(long)]
    pub result: Option<String>,
    /// Scheduling history: status before the step.
    #[arg(long)]
    pub from_status: Option<String>,
    /// Scheduling history: status after the step.
    #[arg(long)]
    pub to_status: Option<String>,
    /// Scheduling history: this error code.
    #[arg(long)]
    pub error_code: Option<String>,
    /// Scheduling history: messages containing this text.
    #[arg(long)]
    pub message: Option<String>,
    /// Scheduling history: only the record with this id.
    #[arg(long, value_parser = clap::value_parser!(i64))]
    pub id: Option<i64>,
    /// Scheduling history: also print each record's sub-steps.
    #[arg(long)]
    pub steps: bool,
}

impl HistoryArgs {
    /// The filter bar's fields that were given.
    pub fn filter(&self) -> Vec<(&'static str, String)> {
        let id = self.id.map(|i| i.to_string());
        [
            ("id", &id),
            ("phase", &self.phase),
            ("result", &self.result),
            ("from_status", &self.from_status),
            ("to_status", &self.to_status),
            ("error_code", &self.error_code),
            ("message", &self.message),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.clone().map(|v| (k, v)))
        .collect()
    }
}

#[derive(Args, Debug, Clone)]
pub struct RmArgs {
    /// Session names or ids.
    #[arg(required = true)]
    pub references: Vec<String>,
    /// Force termination.
    #[arg(short, long)]
    pub forced: bool,
}

#[derive(Args, Debug, Clone)]
pub struct EventsArgs {
    /// Session name or id (it may not exist yet).
    pub reference: String,
    /// session, kernel, session,kernel or * (all).
    #[arg(long, default_value = "*")]
    pub scope: String,
    /// Exit 0 when this event arrives; `batch_session_result` exits 0 on
    /// session_success and 1 on session_failure.
    #[arg(long, value_name = "EVENT")]
    pub wait: Option<String>,
}

#[derive(Args, Debug, Clone, Default)]
pub struct PsArgs {
    /// Running sessions only (CREATING, RUNNING, RUNNING_DEGRADED).
    #[arg(long, conflicts_with_all = ["dead", "all", "status"])]
    pub running: bool,
    /// Ended sessions only (CANCELLED, TERMINATED).
    #[arg(long, conflicts_with_all = ["all", "status"])]
    pub dead: bool,
    /// Sessions in every status, every page.
    #[arg(long, conflicts_with = "status")]
    pub all: bool,
    /// Comma-separated statuses (ALL for every status).
    #[arg(short, long)]
    pub status: Option<String>,
    /// How many sessions to show.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(i64).range(1..))]
    pub limit: i64,
    /// Skip this many sessions.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(i64).range(0..))]
    pub offset: i64,
    /// Also show the tag, creation time and occupied resources.
    #[arg(long)]
    pub detail: bool,
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
    /// Session name (4–64 letters, digits, '-', '_', '.'); a live session with this name is
    /// reused.
    #[arg(short = 't', long = "name")]
    pub name: Option<String>,
    /// interactive, batch or inference.
    #[arg(long = "type", default_value = "interactive", value_parser = parse_type)]
    pub session_type: bai_core::SessionType,
    /// Resources, e.g. -r cpu=2 -r mem=1g -r shmem=64m (mem without a unit is MiB).
    #[arg(short = 'r', long = "resources", value_name = "KEY=VALUE", value_parser = parse_kv)]
    pub resources: Vec<(String, String)>,
    /// Environment variables, e.g. -e K=V (the value may contain '=').
    #[arg(short = 'e', long = "env", value_name = "KEY=VALUE", value_parser = parse_kv)]
    pub env: Vec<(String, String)>,
    /// Return right after the session is queued (no code is run).
    #[arg(long)]
    pub enqueue_only: bool,
    /// Wait at most this many seconds for the session to start (0: no limit).
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    pub max_wait: u64,
    /// Batch: not before this time (ISO-8601, or a delay like 30s, 5m, 2h).
    #[arg(long, value_name = "TIME", value_parser = parse_starts_at)]
    pub starts_at: Option<String>,
    /// Batch: terminate with task-timeout after this long (seconds, or 30s, 5m, 2h).
    #[arg(long, visible_alias = "timeout", value_name = "SECS", value_parser = parse_batch_timeout)]
    pub batch_timeout: Option<String>,
    /// A tag kept with the session.
    #[arg(long)]
    pub tag: Option<String>,
    /// A shell script run once before the session is ready.
    #[arg(long, value_name = "FILE")]
    pub bootstrap_script: Option<PathBuf>,
    /// Resource group.
    #[arg(long)]
    pub scaling_group: Option<String>,
    /// Administrators: create the session for this access key.
    #[arg(short = 'o', long = "owner", value_name = "ACCESS_KEY")]
    pub owner: Option<String>,
    /// Fail instead of reusing a live session with the same name.
    #[arg(long)]
    pub no_reuse: bool,
    /// Mount a data folder: NAME (at /home/work/NAME) or NAME:PATH (repeatable).
    #[arg(
        short = 'm',
        long = "mount",
        visible_alias = "volume",
        value_name = "NAME[:PATH]"
    )]
    pub mounts: Vec<String>,
    /// Container ports to open as apps, 1024–65535, comma or space separated (repeatable).
    #[arg(long = "preopen", value_name = "PORTS")]
    pub preopen: Vec<String>,
    /// Project to create the session in (default: default).
    #[arg(short = 'g', long = "project", visible_alias = "group")]
    pub project: Option<String>,
    /// Start from a resource preset (see `bai presets`); -r values override it.
    #[arg(long)]
    pub preset: Option<String>,
    /// Create this many sessions (named NAME-1 … NAME-N); those that do not fit wait.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub count: Option<u32>,
    /// Run on this agent only (see `bai agents`).
    #[arg(long, value_name = "AGENT_ID")]
    pub assign_agent: Option<String>,
    /// Start only after this session ended successfully (repeatable).
    #[arg(long = "depends", value_name = "SESSION")]
    pub depends: Vec<String>,
    /// Scheduling priority (0–100, higher first; default 10).
    #[arg(long)]
    pub priority: Option<i64>,
    /// No progress output.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub create: CreateArgs,
    /// Code to run in the kernel's REPL (query mode).
    #[arg(short = 'c', long = "code", conflicts_with = "exec")]
    pub code: Option<String>,
    /// Shell command to run after uploading FILES (batch mode).
    #[arg(long, value_name = "CMD")]
    pub exec: Option<String>,
    /// Batch mode: clean command (default: the kernel's).
    #[arg(long, value_name = "CMD")]
    pub clean: Option<String>,
    /// Batch mode: build command (default: the kernel's).
    #[arg(long, value_name = "CMD")]
    pub build: Option<String>,
    /// Batch sessions: the command that makes up the session.
    #[arg(long, value_name = "CMD")]
    pub startup_command: Option<String>,
    /// Terminate the session afterwards (also on errors and Ctrl-C).
    #[arg(long)]
    pub rm: bool,
    /// Upload FILES with paths relative to this directory.
    #[arg(long, default_value = ".")]
    pub basedir: PathBuf,
    /// Image name or alias, e.g. python.
    pub image: String,
    /// Files to upload into /home/work.
    pub files: Vec<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct StartArgs {
    #[command(flatten)]
    pub create: CreateArgs,
    /// Batch sessions: the command that makes up the session.
    #[arg(short = 'c', long = "startup-command", value_name = "CMD")]
    pub startup_command: Option<String>,
    /// Image name or alias, e.g. python.
    pub image: String,
}

fn parse_type(s: &str) -> Result<bai_core::SessionType, String> {
    s.parse()
}

/// Splits `K=V`; the value may contain `=` and may be empty.
pub fn parse_kv(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("{s:?} must look like KEY=VALUE")),
    }
}

/// Resource slots and resource options.
pub type ResourceMaps = (Map<String, Value>, Map<String, Value>);

/// `-r` values as the official client sends them: strings, keys verbatim, and a `mem`
/// (or `shmem`) value without a unit letter gets `m`. `shmem` goes to resource options.
pub fn resources(items: &[(String, String)]) -> ResourceMaps {
    let mut res = Map::new();
    let mut opts = Map::new();
    for (k, v) in items {
        let mut v = v.trim().to_string();
        if (k == "mem" || k == "shmem") && v.chars().last().is_some_and(|c| c.is_ascii_digit()) {
            v.push('m');
        }
        if k == "shmem" {
            opts.insert(k.clone(), Value::String(v));
        } else {
            res.insert(k.clone(), Value::String(v));
        }
    }
    (res, opts)
}

/// `-e` pairs; a later one wins.
pub fn environ(items: &[(String, String)]) -> BTreeMap<String, String> {
    items.iter().cloned().collect()
}

/// Parses a delay: `90`, `90s`, `5m`, `2h`, `1d`, `1w`, or combinations like `1h30m`.
pub fn parse_delay_secs(s: &str) -> Option<u64> {
    let s = s.trim().to_ascii_lowercase();
    if s.is_empty() {
        return None;
    }
    if let Ok(n) = s.parse::<f64>() {
        return (n.is_finite() && n >= 0.0).then(|| n.round() as u64);
    }
    let mut total = 0f64;
    let mut num = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let unit = match c {
            's' => 1.0,
            'm' => 60.0,
            'h' => 3600.0,
            'd' => 86400.0,
            'w' => 604800.0,
            _ => return None,
        };
        let n: f64 = num.parse().ok()?;
        total += n * unit;
        num.clear();
    }
    if !num.is_empty() || !total.is_finite() {
        return None;
    }
    Some(total.round() as u64)
}

/// `--starts-at`: an ISO-8601 time (sent as given) or a delay (sent as `<secs>s`, so the
/// server adds it to its own clock).
pub fn parse_starts_at(s: &str) -> Result<String, String> {
    let t = s.trim();
    if chrono::DateTime::parse_from_rfc3339(t).is_ok() {
        return Ok(t.to_string());
    }
    for fmt in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"] {
        if chrono::NaiveDateTime::parse_from_str(t, fmt).is_ok() {
            return Ok(t.to_string());
        }
    }
    match parse_delay_secs(t) {
        Some(secs) => Ok(format!("{secs}s")),
        None => Err(format!(
            "{s:?} is neither an ISO-8601 time (2026-11-22T10:00:00+00:00) nor a delay (30s, 5m, 2h)"
        )),
    }
}

/// `--batch-timeout`: seconds or a delay; sent as a number of seconds.
pub fn parse_batch_timeout(s: &str) -> Result<String, String> {
    match parse_delay_secs(s) {
        Some(secs) if secs > 0 => Ok(secs.to_string()),
        _ => Err(format!(
            "{s:?} is not a positive duration: use seconds, or 30s, 5m, 2h"
        )),
    }
}

pub const DEFAULT_STATUSES: &str = "PENDING,SCHEDULED,PULLING,PREPARED,PREPARING,CREATING,RUNNING,RUNNING_DEGRADED,TERMINATING,ERROR";
pub const RUNNING_STATUSES: &str = "CREATING,RUNNING,RUNNING_DEGRADED";
pub const DEAD_STATUSES: &str = "CANCELLED,TERMINATED";
pub const ALL_STATUSES: &str = "PENDING,SCHEDULED,PULLING,PREPARED,PREPARING,CREATING,RUNNING,RESTARTING,RUNNING_DEGRADED,TERMINATING,TERMINATED,ERROR,CANCELLED";

impl PsArgs {
    /// The `status` variable of `compute_session_list` (wire contract §5.1).
    pub fn statuses(&self) -> String {
        match &self.status {
            Some(s) if s.trim().eq_ignore_ascii_case("all") => ALL_STATUSES.into(),
            Some(s) => s
                .split(',')
                .map(|p| p.trim().to_ascii_uppercase())
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
                .join(","),
            None if self.running => RUNNING_STATUSES.into(),
            None if self.dead => DEAD_STATUSES.into(),
            None if self.all => ALL_STATUSES.into(),
            None => DEFAULT_STATUSES.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(items: &[&str]) -> Vec<(String, String)> {
        items.iter().map(|s| parse_kv(s).unwrap()).collect()
    }

    #[test]
    fn resource_values_follow_the_official_client() {
        let (r, o) = resources(&kv(&["cpu=2", "mem=4096", "shmem=64", "gpu=0.5"]));
        assert_eq!(r["cpu"], "2");
        assert_eq!(r["mem"], "4096m");
        assert_eq!(r["gpu"], "0.5");
        assert!(!r.contains_key("shmem"));
        assert_eq!(o["shmem"], "64m");
        let (r, _) = resources(&kv(&["mem=1g", "cpu.shares=1"]));
        assert_eq!(r["mem"], "1g");
        assert_eq!(r["cpu.shares"], "1");
        let (r, _) = resources(&kv(&["mem=lots"]));
        assert_eq!(r["mem"], "lots", "bad values are the server's to judge");
        assert!(parse_kv("cpu").is_err());
        assert!(parse_kv("=1").is_err());
    }

    #[test]
    fn env_values_may_contain_equals() {
        let e = environ(&kv(&["A=b=c", "EMPTY=", "A2=x"]));
        assert_eq!(e["A"], "b=c");
        assert_eq!(e["EMPTY"], "");
        assert_eq!(e["A2"], "x");
        let c = Cli::try_parse_from(["bai", "start", "-e", "GREETING=hi=there", "python"]).unwrap();
        let Cmd::Start(s) = c.cmd else { panic!() };
        assert_eq!(s.create.env, vec![("GREETING".into(), "hi=there".into())]);
        assert!(Cli::try_parse_from(["bai", "start", "-e", "novalue", "python"]).is_err());
    }

    #[test]
    fn starts_at_accepts_times_and_delays() {
        assert_eq!(parse_starts_at("10s").unwrap(), "10s");
        assert_eq!(parse_starts_at("5m").unwrap(), "300s");
        assert_eq!(parse_starts_at("1h30m").unwrap(), "5400s");
        assert_eq!(parse_starts_at("2d").unwrap(), "172800s");
        assert_eq!(parse_starts_at("45").unwrap(), "45s");
        assert_eq!(
            parse_starts_at("2026-11-22T10:00:00+00:00").unwrap(),
            "2026-11-22T10:00:00+00:00"
        );
        assert_eq!(
            parse_starts_at("2026-11-22T10:00:00").unwrap(),
            "2026-11-22T10:00:00"
        );
        for bad in ["", "soon", "5x", "m5", "-3s", "1h30"] {
            assert!(parse_starts_at(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_batch_timeout("2").unwrap(), "2");
        assert_eq!(parse_batch_timeout("5m").unwrap(), "300");
        assert!(parse_batch_timeout("0").is_err());
    }

    #[test]
    fn status_lists_per_flag() {
        let ps = |args: &[&str]| {
            let mut v = vec!["bai", "ps"];
            v.extend_from_slice(args);
            match Cli::try_parse_from(v).unwrap().cmd {
                Cmd::Ps(p) => p,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(ps(&[]).statuses(), DEFAULT_STATUSES);
        assert_eq!(
            ps(&["--running"]).statuses(),
            "CREATING,RUNNING,RUNNING_DEGRADED"
        );
        assert_eq!(ps(&["--dead"]).statuses(), "CANCELLED,TERMINATED");
        assert_eq!(ps(&["--all"]).statuses(), ALL_STATUSES);
        assert_eq!(ps(&["-s", "ALL"]).statuses(), ALL_STATUSES);
        assert_eq!(ps(&["-s", "running, error"]).statuses(), "RUNNING,ERROR");
        assert_eq!(ps(&[]).limit, 10);
        assert!(!DEFAULT_STATUSES.contains("TERMINATED"));
        assert!(Cli::try_parse_from(["bai", "ps", "--running", "--dead"]).is_err());
        assert!(Cli::try_parse_from(["bai", "ps", "--limit", "0"]).is_err());
    }

    #[test]
    fn vfolder_create_takes_the_host_second_and_hosts_lists_them() {
        let vf = |args: &[&str]| {
            let mut v = vec!["bai", "vfolder"];
            v.extend_from_slice(args);
            match Cli::try_parse_from(v).unwrap().cmd {
                Cmd::Vfolder(c) => c,
                other => panic!("{other:?}"),
            }
        };
        let VfolderCmd::Create {
            name,
            host,
            permission,
            quota,
            ..
        } = vf(&["create", "data", "nfs:shared", "-p", "ro", "--quota", "1g"])
        else {
            panic!()
        };
        assert_eq!(
            (name.as_str(), host.as_deref(), permission.as_str()),
            ("data", Some("nfs:shared"), "ro")
        );
        assert_eq!(quota.as_deref(), Some("1g"));
        assert!(matches!(
            vf(&["create", "data"]),
            VfolderCmd::Create { host: None, .. }
        ));
        assert!(matches!(vf(&["hosts"]), VfolderCmd::Hosts));
        assert!(matches!(vf(&["list-hosts"]), VfolderCmd::Hosts));
    }

    #[test]
    fn cli_parses_the_seed_commands() {
        let c = Cli::try_parse_from([
            "backend.ai",
            "run",
            "--rm",
            "-c",
            "print(\"hello world\")",
            "python:3.6-ubuntu18.04",
        ])
        .unwrap();
        assert!(
            matches!(c.cmd, Cmd::Run(ref r) if r.rm && r.code.as_deref() == Some("print(\"hello world\")"))
        );
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
        let c =
            Cli::try_parse_from(["bai", "run", "--rm", "-r", "gpu=0.5", "img", "./a.py"]).unwrap();
        assert!(matches!(c.cmd, Cmd::Run(ref r) if r.create.resources[0].1 == "0.5"));
        let c = Cli::try_parse_from([
            "bai", "start", "--type", "batch", "-c", "ls", "-t", "mysess", "python",
        ])
        .unwrap();
        assert!(
            matches!(c.cmd, Cmd::Start(ref s) if s.startup_command.as_deref() == Some("ls")
            && s.create.session_type == bai_core::SessionType::Batch)
        );
        for args in [
            &["bai", "admin", "sessions", "--access-key", "AK"][..],
            &["bai", "admin", "session", "list", "--all"],
            &["bai", "ps"],
            &["bai", "events", "sess", "--wait", "batch_session_result"],
            &[
                "bai",
                "session",
                "events",
                "sess",
                "--scope",
                "session,kernel",
            ],
            &["bai", "logs", "sess"],
            &["bai", "session", "logs", "sess"],
            &["bai", "session", "rename", "a", "b"],
            &["bai", "session", "info", "--json", "s"],
            &["bai", "session", "history", "s"],
            &["bai", "rm", "a", "b", "-f"],
            &["bai", "kill", "a"],
            &["bai", "session", "destroy", "a"],
            &["bai", "session", "create", "-t", "x1234", "python"],
            &[
                "bai",
                "start",
                "--starts-at",
                "10s",
                "--type",
                "batch",
                "-c",
                "date",
                "python",
            ],
            &[
                "bai",
                "run",
                "--enqueue-only",
                "--max-wait",
                "5",
                "-q",
                "python",
            ],
            &["bai", "version"],
        ] {
            assert!(Cli::try_parse_from(args).is_ok(), "{args:?}");
        }
        assert!(Cli::try_parse_from(["bai", "rm"]).is_err());
        assert!(Cli::try_parse_from(["bai", "start", "--type", "weird", "python"]).is_err());
        assert!(Cli::try_parse_from(["bai", "start", "--starts-at", "soon", "python"]).is_err());
    }
}

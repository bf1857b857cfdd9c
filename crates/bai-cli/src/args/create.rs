//! Creating sessions: the options `bai run` and `bai start` share, and the request maps built
//! from their `-r` and `-e` pairs.

use super::{parse_batch_timeout, parse_kv, parse_secs, parse_starts_at, values::parse_type};
use clap::Args;
use std::collections::BTreeMap;
use std::path::PathBuf;

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
    #[arg(long, value_name = "SECS", default_value_t = 0, value_parser = parse_secs)]
    pub max_wait: u64,
    /// Batch: not before this time (ISO-8601, or a delay like 30s, 5m, 2h).
    #[arg(long, value_name = "TIME", value_parser = parse_starts_at)]
    pub starts_at: Option<String>,
    /// Batch: terminate with task-timeout after this long (seconds, or 30s, 5m, 2h).
    #[arg(long, visible_alias = "timeout", value_name = "SECS", value_parser = parse_batch_timeout)]
    pub batch_timeout: Option<String>,
    /// Batch: when preempted for a more urgent session, go back to the queue (same id and
    /// name) and run again instead of ending.
    #[arg(long)]
    pub requeue: bool,
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
    /// Number of kernels (containers): main1, sub1 … subN-1, each with the -r resources;
    /// they reach each other by hostname and `ssh sub1` works between them.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub cluster_size: u32,
    /// Where the kernels run: single-node (all on one agent) or multi-node.
    #[arg(long, value_name = "MODE", default_value = "single-node", value_parser = ["single-node", "multi-node"])]
    pub cluster_mode: String,
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

/// Resource slots and resource options.
pub type ResourceMaps = (BTreeMap<String, String>, BTreeMap<String, String>);

/// `-r` values as the official client sends them: strings, keys verbatim, and a `mem`
/// (or `shmem`) value without a unit letter gets `m`. `shmem` goes to resource options.
pub fn resources(items: &[(String, String)]) -> ResourceMaps {
    let mut res = BTreeMap::new();
    let mut opts = BTreeMap::new();
    for (k, v) in items {
        let mut v = v.trim().to_string();
        if (k == "mem" || k == "shmem") && v.chars().last().is_some_and(|c| c.is_ascii_digit()) {
            v.push('m');
        }
        if k == "shmem" {
            opts.insert(k.clone(), v);
        } else {
            res.insert(k.clone(), v);
        }
    }
    (res, opts)
}

/// `-e` pairs; a later one wins.
pub fn environ(items: &[(String, String)]) -> BTreeMap<String, String> {
    items.iter().cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Cmd};
    use clap::Parser;

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
}

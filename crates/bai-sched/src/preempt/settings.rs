//! A group's preemption settings and the running sessions it lets be preempted: plain data,
//! what the snapshot carries ([`crate::types`]) and the planner reads ([`super`]).

use bai_core::resources::ResourceSlots;
use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

/// Which running sessions a group's pending sessions may end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Nothing is preempted.
    #[default]
    Off,
    /// A session of a higher priority may end ones of a lower priority.
    Priority,
    /// A session of an account under its share may end ones of accounts far over theirs.
    FairShare,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Off, Mode::Priority, Mode::FairShare];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Priority => "priority",
            Mode::FairShare => "fairshare",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

/// A group's preemption settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub mode: Mode,
    /// Between SIGTERM and the end (SIGKILL).
    pub grace: Duration,
    /// A session runs at least this long before it may be preempted.
    pub min_runtime: Duration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            mode: Mode::Off,
            grace: Duration::seconds(60),
            min_runtime: Duration::zero(),
        }
    }
}

/// A running session that may be preempted (the manager lists only those its group and its
/// type allow).
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub id: Uuid,
    /// What it holds on each of its agents (one agent, or several for a multi-node session:
    /// ending it frees room on all of them), each agent once.
    pub held: Vec<(String, ResourceSlots)>,
    pub priority: i64,
    /// Its owner's fair-share factor (`fairshare` mode; None: at its share, 0.5).
    pub factor: Option<f64>,
    pub running_since: DateTime<Utc>,
}

impl Candidate {
    /// What it holds on `agent` (nothing when it has no kernel there).
    pub fn on(&self, agent: &str) -> ResourceSlots {
        self.held
            .iter()
            .filter(|(a, _)| a == agent)
            .fold(ResourceSlots::default(), |t, (_, s)| t.add(s))
    }

    /// What it holds in all (what ending it costs).
    pub fn slots(&self) -> ResourceSlots {
        self.held
            .iter()
            .fold(ResourceSlots::default(), |t, (_, s)| t.add(s))
    }

    /// Whether it has a kernel on `agent`.
    pub fn is_on(&self, agent: &str) -> bool {
        self.held.iter().any(|(a, _)| a == agent)
    }
}

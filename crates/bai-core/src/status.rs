//! The one session state machine. Legal transitions are listed next to the enum; every
//! status change in the manager goes through [`SessionStatus::can_transition_to`].

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Status of a session (and of its kernels), as the Backend.AI API spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SessionStatus {
    /// Queued, waiting for the scheduler to place it.
    Pending,
    /// Placed on an agent; its kernel is about to be prepared.
    Scheduled,
    /// The agent prepares the kernel.
    Preparing,
    /// The agent pulls the image.
    Pulling,
    /// The image is there; the container is about to be created.
    Prepared,
    /// The container is being created.
    Creating,
    /// The kernel runs and can be used.
    Running,
    /// The kernel restarts.
    Restarting,
    /// The kernel runs, but not everything of it is healthy.
    RunningDegraded,
    /// Chosen to make room for a more urgent session: its processes were sent SIGTERM and it
    /// ends when its grace is over (or earlier, when they exit). It still holds its
    /// resources; it then ends or, started with `--requeue`, goes back to PENDING.
    Preempted,
    /// The kernel is being destroyed.
    Terminating,
    /// Ended after it ran (final).
    Terminated,
    /// Failed; it still has to be terminated.
    Error,
    /// Ended before it ran (final).
    Cancelled,
}

use SessionStatus::*;

impl SessionStatus {
    pub const ALL: [SessionStatus; 14] = [
        Pending,
        Scheduled,
        Preparing,
        Pulling,
        Prepared,
        Creating,
        Running,
        Restarting,
        RunningDegraded,
        Preempted,
        Terminating,
        Terminated,
        Error,
        Cancelled,
    ];

    /// Legal transitions. Anything not listed here is a bug and is refused.
    pub fn can_transition_to(self, to: SessionStatus) -> bool {
        matches!(
            (self, to),
            (Pending, Scheduled | Cancelled | Error)
                | (Scheduled, Preparing | Pending | Cancelled | Error | Terminating)
                // `Pending` from the creation phases = requeued after a manager restart
                // interrupted the launch (the partial kernel is destroyed first).
                | (Preparing, Pulling | Prepared | Error | Terminating | Pending)
                | (Pulling, Prepared | Error | Terminating | Pending)
                | (Prepared, Creating | Error | Terminating | Pending)
                | (Creating, Running | Error | Terminating | Pending)
                | (Running, Terminating | Restarting | RunningDegraded | Error | Preempted)
                | (Restarting, Running | Terminating | Error | Preempted)
                | (RunningDegraded, Running | Terminating | Error | Preempted)
                // A preempted session's kernels are destroyed while it is PREEMPTED; then it
                // ends, or (`--requeue`) waits again with new kernels.
                | (Preempted, Terminating | Terminated | Pending | Error)
                | (Terminating, Terminated | Error)
                | (Error, Terminating | Terminated)
        )
    }

    /// The creation phases between a placement and RUNNING: a launch task drives them, a
    /// restart requeues them, the sweeper ends them when they make no progress.
    pub const CREATION_PHASES: [SessionStatus; 5] =
        [Scheduled, Preparing, Pulling, Prepared, Creating];

    /// Statuses in which the kernel is up on its agent (the session can be used).
    pub const UP: [SessionStatus; 3] = [Running, Restarting, RunningDegraded];

    /// Every status that holds (or is about to hold) resources on an agent; see
    /// [`SessionStatus::occupies_resources`].
    pub const HOLDS_RESOURCES: [SessionStatus; 10] = [
        Scheduled,
        Preparing,
        Pulling,
        Prepared,
        Creating,
        Running,
        Restarting,
        RunningDegraded,
        Preempted,
        Terminating,
    ];

    /// `ps` with no filter (seed 004): everything not yet ended.
    pub const LIST_DEFAULT: [SessionStatus; 12] = [
        Pending,
        Scheduled,
        Preparing,
        Pulling,
        Prepared,
        Creating,
        Running,
        Restarting,
        RunningDegraded,
        Preempted,
        Terminating,
        Error,
    ];

    /// `ps --running`: seed 004's PREPARING, PULLING and RUNNING, with the other creation
    /// phases after a placement and the running variants.
    pub const LIST_RUNNING: [SessionStatus; 7] = [
        Preparing,
        Pulling,
        Prepared,
        Creating,
        Running,
        Restarting,
        RunningDegraded,
    ];

    /// `ps --dead`.
    pub const LIST_DEAD: [SessionStatus; 2] = [Cancelled, Terminated];

    /// In a creation phase (see [`SessionStatus::CREATION_PHASES`]).
    pub fn is_creating(self) -> bool {
        Self::CREATION_PHASES.contains(&self)
    }

    /// The kernel is up (see [`SessionStatus::UP`]).
    pub fn is_up(self) -> bool {
        Self::UP.contains(&self)
    }

    /// Comma-separated names, as `ps` filters and GraphQL `status` arguments spell a set.
    pub fn join(set: &[SessionStatus]) -> String {
        set.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(",")
    }

    /// A status the session never leaves.
    pub fn is_terminal(self) -> bool {
        matches!(self, Terminated | Cancelled)
    }

    /// Statuses that hold (or are about to hold) resources on an agent.
    pub fn occupies_resources(self) -> bool {
        Self::HOLDS_RESOURCES.contains(&self)
    }

    /// Not yet terminated or cancelled: the name is still taken.
    pub fn is_live(self) -> bool {
        !self.is_terminal()
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Pending => "PENDING",
            Scheduled => "SCHEDULED",
            Preparing => "PREPARING",
            Pulling => "PULLING",
            Prepared => "PREPARED",
            Creating => "CREATING",
            Running => "RUNNING",
            Restarting => "RESTARTING",
            RunningDegraded => "RUNNING_DEGRADED",
            Preempted => "PREEMPTED",
            Terminating => "TERMINATING",
            Terminated => "TERMINATED",
            Error => "ERROR",
            Cancelled => "CANCELLED",
        }
    }
}

impl fmt::Display for SessionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, thiserror::Error)]
#[error("unknown session status {0:?}")]
pub struct UnknownStatus(pub String);

impl FromStr for SessionStatus {
    type Err = UnknownStatus;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let up = s.trim().to_ascii_uppercase();
        SessionStatus::ALL
            .into_iter()
            .find(|st| st.as_str() == up)
            .ok_or_else(|| UnknownStatus(s.to_string()))
    }
}

/// Interactive, batch or inference; and system sessions, which the platform makes for its
/// own services (SFTP access to a data folder) and no user creates through `POST /session`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum SessionType {
    /// Used by a person: apps, terminals, code execution (the default).
    #[default]
    Interactive,
    /// Runs its startup command and ends with it.
    Batch,
    /// Serves a model.
    Inference,
    /// Made by the platform (SFTP to a data folder): only sshd, counted under the keypair
    /// policy's `max_concurrent_sftp_sessions`, listed only when asked for.
    System,
}

impl SessionType {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionType::Interactive => "interactive",
            SessionType::Batch => "batch",
            SessionType::Inference => "inference",
            SessionType::System => "system",
        }
    }
}

impl FromStr for SessionType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "interactive" => Ok(SessionType::Interactive),
            "batch" => Ok(SessionType::Batch),
            "inference" => Ok(SessionType::Inference),
            "system" => Ok(SessionType::System),
            other => Err(format!(
                "unknown session type {other:?}: use interactive, batch or inference"
            )),
        }
    }
}

/// Outcome of a finished session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SessionResult {
    /// Not ended, or ended without an outcome (interactive sessions).
    #[default]
    Undefined,
    /// A batch session whose command exited with 0.
    Success,
    /// A batch session whose command failed, or a session that failed to start.
    Failure,
}

impl SessionResult {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionResult::Undefined => "UNDEFINED",
            SessionResult::Success => "SUCCESS",
            SessionResult::Failure => "FAILURE",
        }
    }
    pub fn parse(s: &str) -> SessionResult {
        match s {
            "SUCCESS" => SessionResult::Success,
            "FAILURE" => SessionResult::Failure,
            _ => SessionResult::Undefined,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn happy_path_is_legal() {
        let path = [
            Pending,
            Scheduled,
            Preparing,
            Prepared,
            Creating,
            Running,
            Terminating,
            Terminated,
        ];
        for w in path.windows(2) {
            assert!(w[0].can_transition_to(w[1]), "{} -> {}", w[0], w[1]);
        }
    }

    #[test]
    fn terminal_states_are_final() {
        for to in SessionStatus::ALL {
            assert!(!Terminated.can_transition_to(to));
            assert!(!Cancelled.can_transition_to(to));
        }
    }

    #[test]
    fn only_pending_or_scheduled_can_be_cancelled() {
        for from in SessionStatus::ALL {
            let ok = from.can_transition_to(Cancelled);
            assert_eq!(ok, matches!(from, Pending | Scheduled), "{from}");
        }
    }

    #[test]
    fn a_preempted_session_ends_or_waits_again_but_never_runs_on() {
        for up in SessionStatus::UP {
            assert!(up.can_transition_to(Preempted), "{up}");
        }
        assert!(
            Preempted.occupies_resources(),
            "its kernels run during the grace"
        );
        assert!(Preempted.can_transition_to(Pending) && Preempted.can_transition_to(Terminated));
        assert!(!Preempted.can_transition_to(Running));
        assert!(!Pending.can_transition_to(Preempted));
        assert_eq!("preempted".parse::<SessionStatus>().ok(), Some(Preempted));
    }

    #[test]
    fn running_cannot_go_back_to_pending() {
        assert!(!Running.can_transition_to(Pending));
        assert!(!Terminating.can_transition_to(Running));
    }

    #[test]
    fn sets_agree_with_the_predicates() {
        for s in SessionStatus::ALL {
            assert_eq!(
                SessionStatus::LIST_DEFAULT.contains(&s),
                !matches!(s, Terminated | Cancelled),
                "{s}"
            );
            assert_eq!(
                s.is_creating(),
                s.occupies_resources() && !s.is_up() && !matches!(s, Terminating | Preempted),
                "{s}"
            );
        }
        assert_eq!(
            SessionStatus::join(&SessionStatus::LIST_DEAD),
            "CANCELLED,TERMINATED"
        );
    }

    #[test]
    fn parse_round_trip() {
        for s in SessionStatus::ALL {
            assert_eq!(s.as_str().parse::<SessionStatus>().unwrap(), s);
        }
        assert!("bogus".parse::<SessionStatus>().is_err());
    }
}

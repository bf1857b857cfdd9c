//! The one session state machine. Legal transitions are listed next to the enum; every
//! status change in the manager goes through [`SessionStatus::can_transition_to`].

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Status of a session (and of its kernels), as the Backend.AI API spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SessionStatus {
    Pending,
    Scheduled,
    Preparing,
    Pulling,
    Prepared,
    Creating,
    Running,
    Restarting,
    RunningDegraded,
    Terminating,
    Terminated,
    Error,
    Cancelled,
}

use SessionStatus::*;

impl SessionStatus {
    pub const ALL: [SessionStatus; 13] = [
        Pending,
        Scheduled,
        Preparing,
        Pulling,
        Prepared,
        Creating,
        Running,
        Restarting,
        RunningDegraded,
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
                | (Running, Terminating | Restarting | RunningDegraded | Error)
                | (Restarting, Running | Terminating | Error)
                | (RunningDegraded, Running | Terminating | Error)
                | (Terminating, Terminated | Error)
                | (Error, Terminating | Terminated)
        )
    }

    /// A status the session never leaves.
    pub fn is_terminal(self) -> bool {
        matches!(self, Terminated | Cancelled)
    }

    /// Statuses that hold (or are about to hold) resources on an agent.
    pub fn occupies_resources(self) -> bool {
        matches!(
            self,
            Scheduled
                | Preparing
                | Pulling
                | Prepared
                | Creating
                | Running
                | Restarting
                | RunningDegraded
                | Terminating
        )
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

/// Interactive, batch or inference (system sessions are internal and never user-created).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SessionType {
    #[default]
    Interactive,
    Batch,
    Inference,
}

impl SessionType {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionType::Interactive => "interactive",
            SessionType::Batch => "batch",
            SessionType::Inference => "inference",
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
            other => Err(format!(
                "unknown session type {other:?}: use interactive, batch or inference"
            )),
        }
    }
}

/// Outcome of a finished session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SessionResult {
    #[default]
    Undefined,
    Success,
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
    fn running_cannot_go_back_to_pending() {
        assert!(!Running.can_transition_to(Pending));
        assert!(!Terminating.can_transition_to(Running));
    }

    #[test]
    fn parse_round_trip() {
        for s in SessionStatus::ALL {
            assert_eq!(s.as_str().parse::<SessionStatus>().unwrap(), s);
        }
        assert!("bogus".parse::<SessionStatus>().is_err());
    }
}

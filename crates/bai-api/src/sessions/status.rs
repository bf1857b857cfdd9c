//! The fixed words of a session: its status, type, result and cluster mode (`bai-core`'s,
//! with their schemas), and what create reports.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use bai_core::cluster::ClusterMode;
pub use bai_core::status::{SessionResult, SessionStatus, SessionType};

/// What `POST /session` reports: the session's status, or `TIMEOUT` when `maxWaitSeconds`
/// passed before it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CreateStatus {
    /// Queued (always the answer with `enqueueOnly`).
    Pending,
    /// Placed on an agent.
    Scheduled,
    /// The agent prepares the kernel.
    Preparing,
    /// The agent pulls the image.
    Pulling,
    /// The image is there.
    Prepared,
    /// The container is being created.
    Creating,
    /// Ready to use.
    Running,
    /// The kernel restarts.
    Restarting,
    /// Running, not everything healthy.
    RunningDegraded,
    /// Preempted for a more urgent session: it ends (or is requeued) after its grace.
    Preempted,
    /// Being destroyed (a batch session that finished).
    Terminating,
    /// Ended (a batch session that finished).
    Terminated,
    /// Failed to start.
    Error,
    /// Cancelled before it ran.
    Cancelled,
    /// `maxWaitSeconds` passed while the session was still on its way; it goes on.
    Timeout,
}

/// The word on the wire (`RUNNING`, `TIMEOUT`, …).
impl From<SessionStatus> for CreateStatus {
    /// The status a session has, as create reports it.
    fn from(s: SessionStatus) -> CreateStatus {
        match s {
            SessionStatus::Pending => CreateStatus::Pending,
            SessionStatus::Scheduled => CreateStatus::Scheduled,
            SessionStatus::Preparing => CreateStatus::Preparing,
            SessionStatus::Pulling => CreateStatus::Pulling,
            SessionStatus::Prepared => CreateStatus::Prepared,
            SessionStatus::Creating => CreateStatus::Creating,
            SessionStatus::Running => CreateStatus::Running,
            SessionStatus::Restarting => CreateStatus::Restarting,
            SessionStatus::RunningDegraded => CreateStatus::RunningDegraded,
            SessionStatus::Preempted => CreateStatus::Preempted,
            SessionStatus::Terminating => CreateStatus::Terminating,
            SessionStatus::Terminated => CreateStatus::Terminated,
            SessionStatus::Error => CreateStatus::Error,
            SessionStatus::Cancelled => CreateStatus::Cancelled,
        }
    }
}

impl std::fmt::Display for CreateStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::String(word)) => f.write_str(&word),
            _ => Err(std::fmt::Error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_modes_are_read_in_any_spelling_and_written_in_one() {
        for m in [ClusterMode::SingleNode, ClusterMode::MultiNode] {
            assert_eq!(serde_json::to_value(m).unwrap(), m.as_str());
            assert_eq!(m.as_str().to_uppercase().replace('-', "_").parse(), Ok(m));
        }
        assert!("ring".parse::<ClusterMode>().is_err());
    }

    #[test]
    fn a_session_status_is_reported_in_its_own_word() {
        for st in SessionStatus::ALL {
            assert_eq!(CreateStatus::from(st).to_string(), st.as_str());
        }
    }

    #[test]
    fn create_statuses_print_as_their_wire_words() {
        assert_eq!(
            CreateStatus::RunningDegraded.to_string(),
            "RUNNING_DEGRADED"
        );
        assert_eq!(CreateStatus::Timeout.to_string(), "TIMEOUT");
        assert_eq!(format!("({})", CreateStatus::Terminated), "(TERMINATED)");
    }
}

//! The sessions of an agent whose kernels cannot be reached, whichever the cause: the agent
//! itself is lost or gone ([`super::states`]) or it answers but its Kubernetes node is down
//! ([`super::node_down`]). Both degrade the running sessions first and end them all later;
//! they differ in the reason given, the phase named and whether the agent can still destroy
//! its own kernels.

use super::Remote;
use crate::lifecycle::terminate::finish_termination;
use crate::lifecycle::transition::{Change, transition, transition_or_log};
use bai_core::Reason;
use bai_core::event::EventKind as E;
use bai_core::status::{SessionResult, SessionStatus as S};
use bai_store::SessionRow;

/// How the sessions of one unreachable agent are degraded or ended.
pub(super) struct Loss<'a> {
    pub agent: &'a str,
    /// The phase the status changes name (`agent-watch`, `node-watch`).
    pub phase: &'static str,
    /// Whether the agent still answers, so that it can destroy its own kernels; when not,
    /// only a cluster session's kernels on other agents are destroyed.
    pub agent_answers: bool,
}

/// The sessions on `agent` (none, logged, when the store cannot answer).
pub(super) fn sessions_on(remote: &Remote, agent: &str) -> Vec<SessionRow> {
    match remote.store.sessions_on(agent) {
        Ok(rows) => rows,
        Err(e) => {
            tracing::error!(error = %e, "cannot read the sessions");
            vec![]
        }
    }
}

/// Running sessions on the agent become RUNNING_DEGRADED, with `reason` for each.
pub(super) fn degrade_sessions(
    remote: &Remote,
    loss: &Loss<'_>,
    reason: impl Fn(&SessionRow) -> Reason,
) {
    for row in sessions_on(remote, loss.agent) {
        if row.state.status == S::Running {
            let c = Change::new(S::Running, S::RunningDegraded, reason(&row), loss.phase);
            transition_or_log(&remote.lifecycle, row.id, c);
        }
    }
}

/// The sessions on the agent end with `reason` for each (a failure); their kernels are
/// destroyed where they can be reached (see [`Loss::agent_answers`]).
pub(super) async fn end_sessions(
    remote: &Remote,
    loss: &Loss<'_>,
    reason: impl Fn(&SessionRow) -> Reason,
) {
    for row in sessions_on(remote, loss.agent) {
        let destroy = loss.agent_answers || row.spec.cluster_size > 1;
        match row.state.status {
            s if s.is_up() => {
                let c = Change::new(s, S::Terminating, reason(&row), loss.phase)
                    .events(&[E::SessionTerminating])
                    .result(SessionResult::Failure, None);
                if let Ok(Some(row)) = transition(&remote.lifecycle, row.id, c) {
                    finish_termination(&remote.lifecycle, &row, destroy).await;
                }
            }
            S::Terminating => finish_termination(&remote.lifecycle, &row, destroy).await,
            // A launch in flight fails by itself (its kernels are unreachable).
            _ => {}
        }
    }
}

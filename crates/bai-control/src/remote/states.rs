//! Remote agents' states over time. A watcher looks at every remote agent a few times per
//! `lost_after`: on LOST its running sessions become RUNNING_DEGRADED (`agent-lost`) and a
//! silent link is closed; once it has been away for `gone_after`, its sessions end with
//! `agent-lost` and free their resources (its old kernels are destroyed if it ever comes
//! back, never resumed). An agent that is there but whose kernels are not (its Kubernetes
//! node is down) is handled alike by [`super::node_down`].

use super::Remote;
use crate::lifecycle::terminate::finish_termination;
use crate::lifecycle::transition::{Change, transition, transition_or_log};
use bai_core::Reason;
use bai_core::event::EventKind as E;
use bai_core::status::{SessionResult, SessionStatus as S};
use bai_ground::agents::AgentHandle;
use bai_ground::agents::slot::AgentStatus;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

pub fn spawn(remote: Arc<Remote>) {
    let tick = (remote.config.agent_lost_after / 8)
        .clamp(Duration::from_millis(100), Duration::from_secs(5));
    tokio::spawn(async move {
        let mut seen: HashMap<String, AgentStatus> = HashMap::new();
        let mut downs = super::node_down::Downs::default();
        loop {
            tokio::time::sleep(tick).await;
            for h in remote.agents.all() {
                let Some(slot) = h.remote.clone() else {
                    continue;
                };
                let now = h.status();
                let before = seen.insert(h.id.clone(), now);
                if before != Some(now) {
                    tracing::info!(agent = %h.id, from = ?before, to = now.as_str(), "agent status");
                }
                if now == AgentStatus::Lost {
                    if slot.connected() {
                        // Up but silent (a cut cable): stop waiting on it.
                        slot.disconnect();
                    }
                    let silent = slot.silent_for();
                    if silent >= remote.config.agent_gone_after {
                        if !slot.gone.swap(true, Ordering::Relaxed) {
                            tracing::warn!(agent = %h.id, secs = silent.as_secs(), "agent gone; its sessions end");
                            end_sessions(&remote, &h, silent).await;
                            slot.shared.close_listeners();
                        }
                    } else if before != Some(AgentStatus::Lost) {
                        degrade_sessions(&remote, &h, silent);
                    }
                }
                if now == AgentStatus::Alive {
                    // There, but its kernels may not be (a Kubernetes node that is down).
                    super::node_down::check(&remote, &h, &mut downs).await;
                }
            }
        }
    });
}

/// The sessions on `agent` (none, logged, when the store cannot answer).
pub(super) fn sessions_on(remote: &Remote, agent: &str) -> Vec<bai_store::SessionRow> {
    match remote.store.sessions_on(agent) {
        Ok(rows) => rows,
        Err(e) => {
            tracing::error!(error = %e, "cannot read the sessions");
            vec![]
        }
    }
}

/// Why a session of a lost agent is degraded or ended; a cluster session's names the
/// kernels that were on that agent.
fn lost_reason(
    remote: &Remote,
    row: &bai_store::SessionRow,
    agent: &str,
    silent: Duration,
) -> Reason {
    let mut why = format!("agent {agent} not heard from for {} s", silent.as_secs());
    if row.spec.cluster_size > 1 {
        let there = kernels_on(remote, row, agent);
        if !there.is_empty() {
            let word = if there.len() == 1 {
                "kernel"
            } else {
                "kernels"
            };
            why.push_str(&format!(" ({word} {} there)", there.join(", ")));
        }
    }
    Reason::AgentLost(why)
}

/// The hostnames of `row`'s kernels on `agent`.
fn kernels_on(remote: &Remote, row: &bai_store::SessionRow, agent: &str) -> Vec<String> {
    crate::lifecycle::kernels::kernels_on(&remote.lifecycle, row, agent)
        .into_iter()
        .map(|k| k.host)
        .collect()
}

/// Running sessions of a lost agent: RUNNING_DEGRADED, with the reason.
fn degrade_sessions(remote: &Arc<Remote>, h: &AgentHandle, silent: Duration) {
    for row in sessions_on(remote, &h.id) {
        if row.state.status == S::Running {
            let c = Change::new(
                S::Running,
                S::RunningDegraded,
                lost_reason(remote, &row, &h.id, silent),
                "agent-watch",
            );
            transition_or_log(&remote.lifecycle, row.id, c);
        }
    }
}

/// Sessions of a gone agent end with `agent-lost` (their kernels are not reachable to
/// destroy; the agent removes them if it comes back).
async fn end_sessions(remote: &Arc<Remote>, h: &AgentHandle, silent: Duration) {
    for row in sessions_on(remote, &h.id) {
        let reason = lost_reason(remote, &row, &h.id, silent);
        // A cluster's kernels on other agents are destroyed; those on this one cannot be.
        let others = row.spec.cluster_size > 1;
        match row.state.status {
            s if s.is_up() => {
                let c = Change::new(s, S::Terminating, reason, "agent-watch")
                    .events(&[E::SessionTerminating])
                    .result(SessionResult::Failure, None);
                if let Ok(Some(row)) = transition(&remote.lifecycle, row.id, c) {
                    finish_termination(&remote.lifecycle, &row, others).await;
                }
            }
            S::Terminating => finish_termination(&remote.lifecycle, &row, others).await,
            // A launch in flight fails by itself (its agent is unreachable).
            _ => {}
        }
    }
}

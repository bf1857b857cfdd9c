//! Remote agents' states over time. A watcher looks at every remote agent a few times per
//! `lost_after`: on LOST its running sessions become RUNNING_DEGRADED (`agent-lost`) and a
//! silent link is closed; once it has been away for `gone_after`, its sessions end with
//! `agent-lost` and free their resources (its old kernels are destroyed if it ever comes
//! back, never resumed). An agent that is there but whose kernels are not (its Kubernetes
//! node is down) is handled alike by [`super::node_down`].

use super::Remote;
use super::lost::{Loss, degrade_sessions, end_sessions};
use bai_core::Reason;
use bai_ground::agents::slot::AgentStatus;
use bai_store::SessionRow;
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
                    // The agent does not answer: its own kernels cannot be destroyed.
                    let loss = Loss {
                        agent: &h.id,
                        phase: "agent-watch",
                        agent_answers: false,
                    };
                    let why = |row: &SessionRow| lost_reason(&remote, row, &h.id, silent);
                    if silent >= remote.config.agent_gone_after {
                        if !slot.gone.swap(true, Ordering::Relaxed) {
                            tracing::warn!(agent = %h.id, secs = silent.as_secs(), "agent gone; its sessions end");
                            end_sessions(&remote, &loss, why).await;
                            slot.shared.close_listeners();
                        }
                    } else if before != Some(AgentStatus::Lost) {
                        degrade_sessions(&remote, &loss, why);
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

/// Why a session of a lost agent is degraded or ended; a cluster session's names the
/// kernels that were on that agent.
fn lost_reason(remote: &Remote, row: &SessionRow, agent: &str, silent: Duration) -> Reason {
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
fn kernels_on(remote: &Remote, row: &SessionRow, agent: &str) -> Vec<String> {
    crate::lifecycle::kernels::kernels_on(&remote.lifecycle, row, agent)
        .into_iter()
        .map(|k| k.host)
        .collect()
}

//! An agent that answers but whose kernels cannot be reached: its Kubernetes node is
//! NotReady or gone (`AgentInfo::kernels_unreachable`). Its sessions are handled as a lost
//! agent's: RUNNING_DEGRADED (`agent-lost`, naming the node's state) as soon as it is seen,
//! ended with `agent-lost` once the node has been down for the agent's gone time (their
//! kernels destroyed through the agent, which still answers: the pods are deleted), or
//! RUNNING again when the node comes back before that (the agent is reconciled, as a
//! returning one is). Kubernetes itself never evicts a kernel's pod for a down node (the pod
//! tolerates it), so this is the one place that decides.
//!
//! How long a node has been down is counted by the leading manager from when it first saw
//! it down; a manager that starts leading counts anew (a session ends later, never sooner).

use super::Remote;
use super::lost::{Loss, degrade_sessions, end_sessions};
use bai_core::Reason;
use bai_ground::agents::AgentHandle;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// Agents whose kernels are unreachable: since when, and whether their sessions were ended.
#[derive(Default)]
pub struct Downs(HashMap<String, Down>);

struct Down {
    since: Instant,
    ended: bool,
}

/// What to do for an agent now. Pure.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    Nothing,
    /// The node just went down: degrade its running sessions.
    Degrade,
    /// Down for the gone time: end its sessions.
    End,
    /// Back before that: reconcile the agent (degraded sessions run again).
    Resume,
}

impl Downs {
    /// The step for `agent`, whose kernels are `unreachable` now, and the record kept.
    pub fn step(
        &mut self,
        agent: &str,
        unreachable: bool,
        now: Instant,
        gone_after: std::time::Duration,
    ) -> Step {
        match (unreachable, self.0.get_mut(agent)) {
            (true, None) => {
                self.0.insert(
                    agent.to_string(),
                    Down {
                        since: now,
                        ended: false,
                    },
                );
                Step::Degrade
            }
            (true, Some(d)) if !d.ended && now.duration_since(d.since) >= gone_after => {
                d.ended = true;
                Step::End
            }
            (true, Some(_)) => Step::Nothing,
            (false, Some(d)) => {
                let ended = d.ended;
                self.0.remove(agent);
                // After an end there is nothing to resume; reconciling does no harm either
                // (it removes what no session wants), but the agent's own reconnection does
                // that.
                if ended { Step::Nothing } else { Step::Resume }
            }
            (false, None) => Step::Nothing,
        }
    }

    fn since(&self, agent: &str) -> Option<Instant> {
        self.0.get(agent).map(|d| d.since)
    }
}

/// Looks at one alive agent: degrades, ends or resumes its sessions as its node goes and
/// comes back.
pub async fn check(remote: &Arc<Remote>, h: &Arc<AgentHandle>, downs: &mut Downs) {
    let info = h.info();
    let now = Instant::now();
    let step = downs.step(
        &h.id,
        info.kernels_unreachable,
        now,
        remote.config.agent_gone_after,
    );
    let why = |since: Option<Instant>| {
        let what = info
            .withheld
            .clone()
            .unwrap_or_else(|| format!("the node of agent {} is down", h.id));
        let secs = since.map_or(0, |s| now.duration_since(s).as_secs());
        Reason::AgentLost(format!("{what}, its kernels unreachable for {secs} s"))
    };
    // The agent answers: it deletes its kernels' pods.
    let loss = Loss {
        agent: &h.id,
        phase: "node-watch",
        agent_answers: true,
    };
    match step {
        Step::Nothing => {}
        Step::Degrade => {
            tracing::warn!(agent = %h.id, withheld = info.withheld.as_deref().unwrap_or(""),
                "the agent's kernels are unreachable; its sessions are degraded");
            let reason = why(downs.since(&h.id));
            degrade_sessions(remote, &loss, |_| reason.clone());
        }
        Step::End => {
            tracing::warn!(agent = %h.id, "the agent's node stayed down; its sessions end");
            let reason = why(downs.since(&h.id));
            end_sessions(remote, &loss, |_| reason.clone()).await;
        }
        Step::Resume => {
            tracing::info!(agent = %h.id, "the agent's kernels are reachable again");
            if let Err(e) = crate::lifecycle::reconcile::reconcile_agent(&remote.lifecycle, h).await
            {
                tracing::warn!(agent = %h.id, error = %e, "cannot reconcile the agent");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_node_down_degrades_then_ends_once_or_resumes() {
        let gone = Duration::from_secs(600);
        let t0 = Instant::now();
        let mut d = Downs::default();
        assert_eq!(d.step("a", false, t0, gone), Step::Nothing);
        assert_eq!(d.step("a", true, t0, gone), Step::Degrade);
        assert_eq!(
            d.step("a", true, t0 + Duration::from_secs(599), gone),
            Step::Nothing
        );
        assert_eq!(d.step("a", true, t0 + gone, gone), Step::End);
        assert_eq!(d.step("a", true, t0 + gone * 2, gone), Step::Nothing);
        // Back after the end: nothing to resume.
        assert_eq!(d.step("a", false, t0 + gone * 2, gone), Step::Nothing);
        // Down and back in time: resumed; down again: degraded anew, counted from then.
        let t1 = t0 + gone * 3;
        assert_eq!(d.step("a", true, t1, gone), Step::Degrade);
        assert_eq!(
            d.step("a", false, t1 + Duration::from_secs(5), gone),
            Step::Resume
        );
        assert_eq!(
            d.step("a", true, t1 + Duration::from_secs(6), gone),
            Step::Degrade
        );
        assert_eq!(d.step("a", true, t1 + gone, gone), Step::Nothing);
        // Another agent is its own.
        assert_eq!(d.step("b", true, t1, gone), Step::Degrade);
    }
}

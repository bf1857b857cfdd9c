//! Waiting for a kernel's pod: until its runner answers, or Kubernetes says why it cannot
//! start. A cold pod that Kubernetes cannot place while this agent's pool pods hold room
//! makes them give it up ([`super::pool::room`]).

use super::Inner;
use super::observe::{Observed, Problem, why_pending};
use super::pool::room;
use crate::runner;
use bai_core::agent::AgentError;
use std::time::Duration;
use uuid::Uuid;

/// How long a kernel may take to become ready (bootstrap script included).
pub const READY_TIMEOUT: Duration = Duration::from_secs(60);
const PING_EVERY: Duration = Duration::from_millis(20);

/// Pings the runner until it answers; fails at once when Kubernetes says the pod cannot
/// start (no room, no image, no container) or ended.
pub(crate) async fn wait_ready(inner: &Inner, kernel: Uuid) -> Result<(), AgentError> {
    let socket = inner.dirs(kernel).socket;
    let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
    let mut evicted = false;
    loop {
        match inner.state(kernel) {
            // Pool pods may hold the room bai's scheduler counted as free: they give it
            // up, and Kubernetes places the pod once they are gone (until the deadline).
            Some(Observed::Waiting(Some(Problem::Unschedulable(_)))) if evicted => {}
            Some(Observed::Waiting(Some(Problem::Unschedulable(_))))
                if room::evict_for(inner, kernel).await =>
            {
                evicted = true;
            }
            Some(Observed::Waiting(Some(Problem::Unschedulable(why)))) => {
                return Err(AgentError::InsufficientResources(format!(
                    "Kubernetes cannot place the kernel on node {}: {why}",
                    inner.node
                )));
            }
            Some(Observed::Waiting(Some(Problem::Image(why) | Problem::Create(why)))) => {
                return Err(AgentError::NotReady(why));
            }
            Some(Observed::Ended(e)) if e.oom_killed => {
                return Err(AgentError::NotReady(format!(
                    "the kernel ran out of memory before its runner was ready (OOMKilled, exit \
                     code {}); ask for more memory",
                    e.exit_code.map_or("none".into(), |c| c.to_string())
                )));
            }
            Some(Observed::Ended(e)) => {
                return Err(AgentError::NotReady(format!(
                    "the kernel's pod ended before its runner was ready: {} (exit code {})",
                    e.reason,
                    e.exit_code.map_or("none".into(), |c| c.to_string())
                )));
            }
            Some(Observed::Running(_)) if runner::ping(&socket).await.is_ok() => return Ok(()),
            _ => {}
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(not_ready_in_time(inner, kernel).await);
        }
        // The next state change, or the next ping.
        let _ = tokio::time::timeout(PING_EVERY, inner.changed()).await;
    }
}

/// Why a kernel was not ready within [`READY_TIMEOUT`]: a pod still Pending says so in
/// Kubernetes' words (placed on no node: no room, as the scheduler's Unschedulable is; bound
/// but never started by its kubelet: the container's waiting reason); a running pod's runner
/// did not answer.
async fn not_ready_in_time(inner: &Inner, kernel: Uuid) -> AgentError {
    let secs = READY_TIMEOUT.as_secs();
    match inner.state(kernel) {
        Some(Observed::Running(_)) => {
            AgentError::NotReady(format!("the runner did not answer within {secs}s"))
        }
        _ => match inner.pods.get_opt(&inner.pod_of(kernel)).await {
            Ok(Some(pod)) => match why_pending(&pod) {
                (true, why) => AgentError::InsufficientResources(format!(
                    "Kubernetes did not place the kernel on node {} within {secs}s: {why}",
                    inner.node
                )),
                (false, why) => AgentError::NotReady(format!("not started within {secs}s: {why}")),
            },
            Ok(None) => AgentError::NotReady(format!(
                "the kernel's pod went before it started (within {secs}s)"
            )),
            Err(e) => AgentError::NotReady(format!(
                "the kernel's pod did not start within {secs}s (and cannot be read: {e})"
            )),
        },
    }
}

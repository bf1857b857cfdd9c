//! Waiting for a kernel's pod: until its runner answers, or Kubernetes says why it cannot
//! start. A cold pod that Kubernetes cannot place while this agent's pool pods hold room
//! makes them give it up ([`super::pool::room`]).
//!
//! The runner is pinged from the pod's create on, not only once the pod is seen running:
//! the kubelet reports a started container at its next relist (every second), so its
//! Running status trails the runner by up to a second. A lone kernel is ready when its
//! runner answers; what needs the kubelet's report waits for it where it is needed
//! ([`wait_reported`]: an app's address, the logs, a commit). A kernel of a cluster session
//! is pinged only once its pod runs with an IP: its session's host table needs every
//! address before the session runs, and a batch session's command starts at the first
//! ping.

use super::Inner;
use super::observe::{Observed, Problem, why_pending};
use super::pool::room;
use super::reach::{self, RunnerReach};
use crate::runner::{self, RunnerAt};
use bai_core::agent::AgentError;
use std::net::IpAddr;
use std::time::Duration;
use uuid::Uuid;

/// How long a kernel may take to become ready (bootstrap script included).
pub const READY_TIMEOUT: Duration = Duration::from_secs(60);
const PING_EVERY: Duration = Duration::from_millis(20);
/// How long what needs the kubelet's report of a ready kernel (its IP, its logs, its
/// container's id) waits for it: the kubelet relists every second.
pub const REPORT_WAIT: Duration = Duration::from_secs(10);

/// Pings the runner until it answers (with `needs_address`, or where the runner is reached
/// over the network, only once the pod runs with an IP); fails at once when Kubernetes says
/// the pod cannot start (no room, no image, no container) or ended.
pub(crate) async fn wait_ready(
    inner: &Inner,
    kernel: Uuid,
    needs_address: bool,
) -> Result<(), AgentError> {
    let needs_address = needs_address || inner.config.runner_reach == RunnerReach::Network;
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
            // Running with an IP; or, for a lone kernel, also waiting without a problem,
            // not seen yet, or running without an IP: its runner may answer already.
            ref s if !needs_address || matches!(s, Some(Observed::Running(Some(_)))) => {
                if let Some(at) = reach::now(inner, kernel, s.as_ref())
                    && runner::ping(at).await.is_ok()
                {
                    return Ok(());
                }
            }
            _ => {}
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(not_ready_in_time(inner, kernel).await);
        }
        // The next state change, or the next ping.
        let _ = tokio::time::timeout(PING_EVERY, inner.changed()).await;
    }
}

/// Waits (at most `within`) until the kubelet has reported a ready kernel's container:
/// running (with the pod's IP, if it has one) or ended. `None`: the kernel is unknown, or
/// not reported by then.
pub(crate) async fn wait_reported(
    inner: &Inner,
    kernel: Uuid,
    within: Duration,
) -> Option<Observed> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match inner.state(kernel) {
            None => return None,
            Some(o @ (Observed::Running(_) | Observed::Ended(_))) => return Some(o),
            Some(Observed::Waiting(_)) => {}
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        let _ = tokio::time::timeout(PING_EVERY, inner.changed()).await;
    }
}

/// The pod IP of a ready kernel, once the kubelet has reported it (at most `within`).
pub(crate) async fn wait_address(inner: &Inner, kernel: Uuid, within: Duration) -> Option<IpAddr> {
    match wait_reported(inner, kernel, within).await {
        Some(Observed::Running(ip)) => ip,
        _ => None,
    }
}

/// Where the runner of a known kernel answers, waiting (at most [`REPORT_WAIT`]) for the
/// kubelet to report its pod's IP where the runner is reached over the network.
pub(crate) async fn runner_of(inner: &Inner, kernel: Uuid) -> Result<RunnerAt, AgentError> {
    match inner.config.runner_reach {
        RunnerReach::Socket => Ok(RunnerAt::Socket(inner.dirs(kernel).socket)),
        RunnerReach::Network => match wait_address(inner, kernel, REPORT_WAIT).await {
            Some(ip) => reach::network(inner, kernel, ip).await,
            None => Err(AgentError::NotReady(
                "the kernel's pod has no IP, so its runner cannot be reached".into(),
            )),
        },
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

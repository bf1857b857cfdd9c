//! The session lifecycle: one verb per module. Every status change goes through
//! [`transition::transition`], which checks the state machine, writes the row, the history
//! record and the events in one transaction, and publishes the events.

mod addresses;
mod admit;
pub mod cluster_keys;
pub mod create;
mod ctx;
pub mod egress;
pub mod idempotent;
pub mod kernels;
pub mod launch;
pub mod mounts;
pub mod overlay;
pub mod preempt;
pub mod pull;
pub mod reconcile;
pub mod retention;
pub mod retry;
pub mod terminate;
pub mod timeouts;
pub mod transition;
pub mod watch;

pub use ctx::Lifecycle;
pub use transition::{Change, transition, transition_or_log};

use bai_ground::agents::AgentHandle;

/// Destroys a kernel whose session no longer needs it; a failure is logged (reconciliation
/// removes what is left at the next start).
pub(crate) async fn destroy_or_log(agent: &AgentHandle, kernel: uuid::Uuid) {
    match agent.rpc.destroy_kernel(kernel).await {
        Ok(_) | Err(bai_core::agent::AgentError::KernelNotFound(_)) => {}
        Err(e) => {
            tracing::warn!(agent = %agent.id, %kernel, error = %e, "cannot destroy a kernel");
        }
    }
}

//! A create asked again for a kernel that already has a container: its first answer was lost
//! with the agent's process or with its link, and the manager sends the same request again.
//! A running kernel is taken as made (one kernel, never two); anything else of it goes first,
//! so the create starts clean.

use super::{Inner, LABEL_CPUSET, LABEL_DEVICES, destroy, inspect, ready, watch};
use bai_core::agent::{AgentError, KernelCreated};
use std::sync::Arc;
use uuid::Uuid;

/// What an earlier create of `kernel_id` left: `Some` when the kernel runs and answers (it is
/// the answer to give again), `None` when there is nothing (any more) and the create goes on.
pub async fn earlier(
    inner: &Arc<Inner>,
    kernel_id: Uuid,
) -> Result<Option<KernelCreated>, AgentError> {
    // The usual create, of a kernel never seen: nothing to look for (no engine call).
    if !inner.knows(kernel_id) {
        return Ok(None);
    }
    // An end in progress (its watcher saw the container stop) is finished first.
    inner.wait_end(kernel_id).await;
    let Some(found) = inspect::existing(inner, kernel_id).await? else {
        return Ok(None);
    };
    if found.running && ready::wait(inner, kernel_id).await.is_ok() {
        // Watched already when the agent started with it; watching again replaces that.
        watch::spawn(inner, kernel_id);
        tracing::info!(kernel = %kernel_id, "kernel asked for again: the running one is kept");
        return Ok(Some(KernelCreated {
            kernel_id,
            container_id: found.container_id,
            cpuset: crate::owned::label(&found.labels, LABEL_CPUSET).map(String::from),
            devices: crate::owned::label(&found.labels, LABEL_DEVICES)
                .and_then(crate::accel::parse_alloc)
                .unwrap_or_default(),
            address: None,
        }));
    }
    tracing::info!(kernel = %kernel_id, "kernel asked for again: removing what its first creation left");
    destroy::destroy_now(inner, kernel_id).await?;
    Ok(None)
}

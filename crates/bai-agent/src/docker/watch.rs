//! Watching a kernel: when its container stops on its own (batch finished, crash, out of
//! memory), report why and clean up.

use super::{Inner, destroy};
use bai_core::agent::{AgentEvent, KernelExit};
use bollard::query_parameters::WaitContainerOptionsBuilder;
use futures::StreamExt;
use std::sync::Arc;
use uuid::Uuid;

pub fn spawn(inner: Arc<Inner>, kernel_id: Uuid) {
    tokio::spawn(async move {
        let name = Inner::container_name(kernel_id);
        let opts = WaitContainerOptionsBuilder::default()
            .condition("not-running")
            .build();
        let mut wait = inner.docker.wait_container(&name, Some(opts));
        // Ends with Ok (exit 0), or Err for a non-zero exit or a vanished container.
        let _ = wait.next().await;
        if !inner.claim_end(kernel_id) {
            return; // destroy_kernel owns it
        }
        let (exit_code, oom, running) = destroy::exit_state(&inner, kernel_id).await;
        if running {
            // The wait broke off (engine restart?) but the kernel lives: watch again.
            inner.release_end(kernel_id);
            spawn(inner, kernel_id);
            return;
        }
        let logs = destroy::logs(&inner, kernel_id, None)
            .await
            .unwrap_or_default();
        if let Err(e) = destroy::remove(&inner, kernel_id).await {
            tracing::warn!(kernel = %kernel_id, error = %e, "cleanup after exit failed");
        }
        inner.release_end(kernel_id);
        tracing::info!(kernel = %kernel_id, ?exit_code, oom, "kernel exited");
        let _ = inner.events.send(AgentEvent::KernelExited(KernelExit {
            kernel_id,
            exit_code,
            oom_killed: oom,
            logs,
        }));
    });
}

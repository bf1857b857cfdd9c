//! Watching a kernel: when its container stops on its own (batch command finished, crash,
//! out of memory), report why and clean up. `destroy` stops the watcher before it acts, so
//! every end is reported exactly once: by the event or by destroy's answer.

use super::{Inner, LOG_TAIL_BYTES, destroy, inspect};
use bai_core::agent::{AgentEvent, KernelExit};
use bollard::query_parameters::WaitContainerOptions;
use futures::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// Pause before watching again when the engine did not answer.
const RETRY: Duration = Duration::from_secs(1);

pub fn spawn(inner: &Arc<Inner>, kernel_id: Uuid) {
    let task = tokio::spawn(watch(inner.clone(), kernel_id));
    inner.set_watcher(kernel_id, task.abort_handle());
}

async fn watch(inner: Arc<Inner>, kernel_id: Uuid) {
    let name = Inner::container_name(kernel_id);
    let state = loop {
        let opts = WaitContainerOptions {
            condition: "not-running".into(),
        };
        // Ends with Ok (exit 0) or Err (non-zero exit, gone, or the engine broke off).
        let _ = inner.docker.wait_container(&name, Some(opts)).next().await;
        match inspect::state(&inner, kernel_id).await {
            Ok(Some(st)) if st.running => {}
            Ok(st) => break st,
            Err(e) => {
                tracing::warn!(kernel = %kernel_id, error = %e, "cannot inspect a kernel; watching again");
            }
        }
        tokio::time::sleep(RETRY).await;
    };
    if !inner.claim_end(kernel_id) {
        return; // destroy owns this end
    }
    inner.forget_watcher(kernel_id);
    let logs = if state.is_some() {
        inspect::logs(&inner, kernel_id, LOG_TAIL_BYTES)
            .await
            .unwrap_or_default()
    } else {
        String::new()
    };
    if let Err(e) = destroy::remove(&inner, kernel_id).await {
        tracing::warn!(kernel = %kernel_id, error = %e, "cleanup after the kernel's exit failed");
    }
    inner.release_end(kernel_id);
    let st = state.unwrap_or_default();
    tracing::info!(kernel = %kernel_id, exit_code = ?st.exit_code, oom = st.oom_killed, "kernel exited");
    // No subscriber is fine: the manager reconciles with list_kernels.
    let _ = inner.events.send(AgentEvent::KernelExited(KernelExit {
        kernel_id,
        exit_code: st.exit_code,
        oom_killed: st.oom_killed,
        logs,
    }));
}

//! Destroying a kernel: collect what it left (exit code, OOM flag, logs), remove the
//! container and its scratch directory.

use super::{Inner, LOG_TAIL_BYTES};
use bai_core::agent::{AgentError, KernelExit};
use bollard::query_parameters::{
    InspectContainerOptions, LogsOptionsBuilder, RemoveContainerOptionsBuilder,
};
use futures::StreamExt;
use uuid::Uuid;

/// The container's logs (stdout and stderr interleaved), at most `max` bytes from the end.
pub async fn logs(
    inner: &Inner,
    kernel_id: Uuid,
    max: Option<usize>,
) -> Result<String, AgentError> {
    let name = Inner::container_name(kernel_id);
    let opts = LogsOptionsBuilder::default()
        .stdout(true)
        .stderr(true)
        .follow(false)
        .build();
    let mut stream = inner.docker.logs(&name, Some(opts));
    let mut buf: Vec<u8> = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(chunk) => {
                buf.extend_from_slice(&chunk.into_bytes());
                let limit = max.unwrap_or(LOG_TAIL_BYTES);
                if buf.len() > 2 * limit {
                    buf.drain(..buf.len() - limit);
                }
            }
            Err(e) if buf.is_empty() => {
                let msg = e.to_string();
                return Err(if msg.contains("No such container") {
                    AgentError::KernelNotFound(kernel_id)
                } else {
                    AgentError::Runtime(msg)
                });
            }
            Err(_) => break,
        }
    }
    let limit = max.unwrap_or(LOG_TAIL_BYTES);
    if buf.len() > limit {
        buf.drain(..buf.len() - limit);
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Exit code and OOM flag of a stopped (or running) container.
pub async fn exit_state(inner: &Inner, kernel_id: Uuid) -> (Option<i32>, bool, bool) {
    let name = Inner::container_name(kernel_id);
    match inner
        .docker
        .inspect_container(&name, None::<InspectContainerOptions>)
        .await
    {
        Ok(i) => {
            let st = i.state.unwrap_or_default();
            (
                st.exit_code.map(|c| c as i32),
                st.oom_killed.unwrap_or(false),
                st.running.unwrap_or(false),
            )
        }
        Err(_) => (None, false, false),
    }
}

/// Removes the container (killing it if needed) and the kernel's directories.
pub async fn remove(inner: &Inner, kernel_id: Uuid) -> Result<bool, AgentError> {
    let name = Inner::container_name(kernel_id);
    let opts = RemoveContainerOptionsBuilder::default()
        .force(true)
        .v(true)
        .build();
    let existed = match inner.docker.remove_container(&name, Some(opts)).await {
        Ok(()) => true,
        Err(e) if e.to_string().contains("No such container") => false,
        Err(e) => return Err(AgentError::Runtime(format!("cannot remove {name}: {e}"))),
    };
    let root = inner.dirs(kernel_id).root;
    let dir_existed = root.exists();
    if dir_existed && let Err(e) = tokio::fs::remove_dir_all(&root).await {
        tracing::warn!(kernel = %kernel_id, error = %e, "cannot remove the kernel directory");
    }
    Ok(existed || dir_existed)
}

/// Destroys a kernel. Interactive kernels are killed at once (their state lives in the
/// REPL and in mounted folders, never in a graceful shutdown). Idempotent: a kernel that is
/// already gone yields an empty [`KernelExit`].
pub async fn destroy(inner: &Inner, kernel_id: Uuid) -> Result<KernelExit, AgentError> {
    if !inner.claim_end(kernel_id) {
        // The watcher is already reporting this kernel's end and cleaning up.
        return Ok(KernelExit {
            kernel_id,
            exit_code: None,
            oom_killed: false,
            logs: String::new(),
        });
    }
    // A kernel still running has no exit code of its own: we are the ones ending it.
    let (exit_code, oom, running) = exit_state(inner, kernel_id).await;
    let exit_code = if running { None } else { exit_code };
    let text = logs(inner, kernel_id, None).await.unwrap_or_default();
    let result = remove(inner, kernel_id).await;
    inner.release_end(kernel_id);
    result?;
    Ok(KernelExit {
        kernel_id,
        exit_code,
        oom_killed: oom,
        logs: text,
    })
}

//! Destroying a kernel: stop it ([`super::stop`]), answer with what it left (exit code, OOM
//! flag, logs), then remove the container and its scratch directory.

use super::{Inner, LABEL_SESSION, netpool, stop};
use crate::error::{is_not_found, runtime};
use bai_core::agent::{AgentError, KernelExit};
use bollard::query_parameters::RemoveContainerOptions;
use std::sync::Arc;
use uuid::Uuid;

/// Removes the container `name` by force (killing it if it runs); one already gone, or
/// being removed by a concurrent call, is fine.
pub async fn remove_container(inner: &Inner, name: &str) -> Result<(), AgentError> {
    let opts = RemoveContainerOptions {
        force: true,
        v: true,
        ..Default::default()
    };
    match inner.docker.remove_container(name, Some(opts)).await {
        Ok(()) => Ok(()),
        Err(e) if is_not_found(&e) => Ok(()),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 409, ..
        }) => Ok(()),
        Err(e) => Err(runtime(format_args!("cannot remove {name}"), e)),
    }
}

/// Removes the container (killing it if needed) and the kernel's directory. Either may
/// already be gone.
pub async fn remove(inner: &Inner, kernel_id: Uuid) -> Result<(), AgentError> {
    let name = Inner::container_name(kernel_id);
    // A cluster kernel's network goes with the session's last kernel.
    let network = inner
        .docker
        .inspect_container(&name, None)
        .await
        .ok()
        .and_then(|c| c.config?.labels)
        .and_then(|mut l| {
            let session = l.get(LABEL_SESSION).and_then(|s| Uuid::parse_str(s).ok());
            Some((l.remove(netpool::LABEL_NETWORK)?, session))
        });
    remove_container(inner, &name).await?;
    // The container is gone: its devices and cores are free again, room for the pools.
    inner.release(kernel_id);
    inner.pool_wake.notify_one();
    if let Some((net, session)) = network {
        netpool::release(inner, &net, session).await;
    }
    // The container is gone, its scratch directory not yet (test builds only).
    bai_fault::point("agent:container-removed");
    let root = inner.dirs(kernel_id).root;
    // A kernel claimed from a pool has its folders mounted under its home on this host:
    // they go first, and the directory stays if one cannot.
    crate::pool_folders::release(&root)?;
    match tokio::fs::remove_dir_all(&root).await {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(runtime(format_args!("cannot remove {}", root.display()), e)),
    }
}

/// Destroys a kernel: [`stop::stop`] (SIGTERM, then SIGKILL); answers once its processes
/// are gone, with its exit and logs, and the engine removes the stopped container and its
/// directory after the answer (a stopped kernel holds no CPU, memory or device: its cores and
/// devices are free at once). A cluster kernel is removed before the answer: its session's
/// network goes with it, and the network's name and overlay id may serve the next session
/// once this one ended. [`destroy_now`] also waits for the removal.
///
/// A kernel that was still running when asked has no exit code of its own (`exit_code:
/// None`: we ended it). Idempotent: a kernel with neither container nor directory yields an
/// empty [`KernelExit`], never `KernelNotFound`. When the kernel's end is already being
/// handled (its watcher saw it stop, another destroy runs, or its removal is under way), this
/// waits until that is done and answers an empty [`KernelExit`]: the logs arrive with the
/// `KernelExited` event, or came with the first answer. A removal that fails is logged and
/// left to the reconciliation, which removes every container no session wants.
pub async fn destroy(inner: &Arc<Inner>, kernel_id: Uuid) -> Result<KernelExit, AgentError> {
    let empty = KernelExit {
        kernel_id,
        exit_code: None,
        oom_killed: false,
        logs: String::new(),
    };
    if !inner.claim_end(kernel_id) {
        inner.wait_end(kernel_id).await;
        return Ok(empty);
    }
    inner.stop_watcher(kernel_id);
    let stop::Stopped {
        exit,
        session_network,
        settling,
    } = match stop::stop(inner, kernel_id, empty).await {
        Ok(stopped) => stopped,
        Err(e) => {
            inner.release_end(kernel_id);
            return Err(e);
        }
    };
    inner.release(kernel_id);
    if session_network {
        // A cluster kernel: its session's network (and overlay device) goes with the
        // removal, before the session's end frees the network's name and id for another.
        stop::settled(settling).await;
        let removed = remove(inner, kernel_id).await;
        inner.release_end(kernel_id);
        return removed.map(|()| exit);
    }
    // The end stays claimed until the container and the directory are gone: a destroy or a
    // create of the same kernel meanwhile waits for it.
    let owned = inner.clone();
    tokio::spawn(async move {
        stop::settled(settling).await;
        match remove(&owned, kernel_id).await {
            Ok(()) => tracing::debug!(kernel = %kernel_id, "kernel removed"),
            Err(e) => {
                tracing::warn!(kernel = %kernel_id, error = %e, "cannot remove a stopped kernel; the reconciliation will")
            }
        }
        owned.release_end(kernel_id);
    });
    Ok(exit)
}

/// [`destroy`], returning once the container and the kernel's directory are gone too (a
/// create of the same kernel follows, or the caller counts what it removed).
pub async fn destroy_now(inner: &Arc<Inner>, kernel_id: Uuid) -> Result<KernelExit, AgentError> {
    let exit = destroy(inner, kernel_id).await?;
    inner.wait_end(kernel_id).await;
    Ok(exit)
}

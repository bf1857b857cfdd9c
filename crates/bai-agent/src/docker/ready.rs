//! Waiting until a freshly started kernel's krunner answers a ping.

use super::Inner;
use crate::error::is_not_found;
use crate::runner::ping;
use bollard::errors::Error::DockerContainerWaitError;
use bollard::query_parameters::WaitContainerOptions;
use futures::StreamExt;
use std::path::Path;
use std::time::Duration;
use uuid::Uuid;

/// How long a kernel may take to become ready (bootstrap script included).
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// Poll interval while waiting: short, start latency matters.
const POLL_FAST: Duration = Duration::from_millis(2);
const POLL_SLOW: Duration = Duration::from_millis(20);
/// Polls at the fast interval before slowing down (about half a second).
const FAST_POLLS: u32 = 250;

/// Pings until krunner answers; fails when the container stops first or after
/// [`READY_TIMEOUT`]. Returns why it failed.
pub async fn wait(inner: &Inner, kernel_id: Uuid) -> Result<(), String> {
    wait_at(
        inner,
        &inner.dirs(kernel_id).socket,
        &Inner::container_name(kernel_id),
    )
    .await
}

/// [`wait`] for the runner listening on `socket` in the container `name`.
pub async fn wait_at(inner: &Inner, socket: &Path, name: &str) -> Result<(), String> {
    let pinging = async {
        let mut n = 0u32;
        loop {
            if ping(socket).await.is_ok() {
                return;
            }
            n = n.saturating_add(1);
            tokio::time::sleep(if n < FAST_POLLS { POLL_FAST } else { POLL_SLOW }).await;
        }
    };
    let stopped = async {
        let opts = WaitContainerOptions {
            condition: "not-running".into(),
        };
        match inner.docker.wait_container(name, Some(opts)).next().await {
            // A non-zero exit comes as an error too; so does a container that is gone.
            None | Some(Ok(_)) | Some(Err(DockerContainerWaitError { .. })) => {}
            Some(Err(e)) if is_not_found(&e) => {}
            Some(Err(e)) => {
                // The engine did not answer the wait: rely on the pings and the timeout.
                tracing::debug!(container = %name, error = %e, "cannot wait for the container");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        biased;
        () = pinging => Ok(()),
        () = stopped => Err("the container stopped before its runner was ready".into()),
        () = tokio::time::sleep(READY_TIMEOUT) => Err(format!(
            "the runner did not answer within {}s",
            READY_TIMEOUT.as_secs()
        )),
    }
}

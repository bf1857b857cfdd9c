//! Reading a kernel container's state and logs.

use super::Inner;
use crate::error::{is_not_found, runtime};
use bai_core::agent::AgentError;
use bollard::models::ContainerInspectResponse;
use bollard::query_parameters::{InspectContainerOptions, LogsOptions};
use futures::StreamExt;
use uuid::Uuid;

/// What the engine says about a container.
#[derive(Debug, Clone, Copy, Default)]
pub struct ContainerState {
    pub running: bool,
    pub exit_code: Option<i32>,
    pub oom_killed: bool,
    /// On a network of its session's own (a cluster kernel's), which goes with its removal.
    pub session_network: bool,
}

/// The kernel's container as the engine describes it; `Ok(None)` when it does not exist.
async fn inspect(
    inner: &Inner,
    kernel_id: Uuid,
) -> Result<Option<ContainerInspectResponse>, AgentError> {
    let name = Inner::container_name(kernel_id);
    match inner
        .docker
        .inspect_container(&name, None::<InspectContainerOptions>)
        .await
    {
        Ok(info) => Ok(Some(info)),
        Err(e) if is_not_found(&e) => Ok(None),
        Err(e) => Err(runtime(format_args!("cannot inspect {name}"), e)),
    }
}

/// A kernel's container as a repeated create finds it.
#[derive(Debug, Clone, Default)]
pub struct Existing {
    pub container_id: String,
    pub running: bool,
    pub labels: std::collections::HashMap<String, String>,
}

/// The kernel's container, if it exists.
pub async fn existing(inner: &Inner, kernel_id: Uuid) -> Result<Option<Existing>, AgentError> {
    Ok(inspect(inner, kernel_id).await?.map(|info| Existing {
        container_id: info.id.unwrap_or_default(),
        running: info.state.and_then(|s| s.running).unwrap_or(false),
        labels: info.config.and_then(|c| c.labels).unwrap_or_default(),
    }))
}

/// The container's state; `Ok(None)` when it does not exist.
pub async fn state(inner: &Inner, kernel_id: Uuid) -> Result<Option<ContainerState>, AgentError> {
    Ok(inspect(inner, kernel_id).await?.map(|info| {
        let session_network = info
            .config
            .as_ref()
            .and_then(|c| c.labels.as_ref())
            .is_some_and(|l| l.contains_key(super::netpool::LABEL_NETWORK));
        let st = info.state.unwrap_or_default();
        ContainerState {
            running: st.running.unwrap_or(false),
            exit_code: st.exit_code.and_then(|c| i32::try_from(c).ok()),
            oom_killed: st.oom_killed.unwrap_or(false),
            session_network,
        }
    }))
}

/// The process id of the container's init on this host (0 or an error: not running).
pub async fn pid(inner: &Inner, kernel_id: Uuid) -> Result<u32, AgentError> {
    inspect(inner, kernel_id)
        .await?
        .and_then(|info| info.state?.pid)
        .and_then(|p| u32::try_from(p).ok())
        .filter(|p| *p > 0)
        .ok_or_else(|| AgentError::Runtime(format!("kernel {kernel_id} is not running")))
}

/// The container's address on its network (the engine's bridge), where its apps listen.
pub async fn address(inner: &Inner, kernel_id: Uuid) -> Result<std::net::IpAddr, AgentError> {
    let info = inspect(inner, kernel_id)
        .await?
        .ok_or(AgentError::KernelNotFound(kernel_id))?;
    let net = info.network_settings.unwrap_or_default();
    let candidates: Vec<String> = net
        .networks
        .unwrap_or_default()
        .into_values()
        .filter_map(|n| n.ip_address)
        .collect();
    candidates
        .iter()
        .find_map(|ip| ip.parse().ok())
        .ok_or_else(|| AgentError::BadRequest(format!("kernel {kernel_id} has no network address")))
}

/// The container's logs (stdout and stderr interleaved, lossy UTF-8), at most the last
/// `max` bytes.
pub async fn logs(inner: &Inner, kernel_id: Uuid, max: usize) -> Result<String, AgentError> {
    let name = Inner::container_name(kernel_id);
    let opts = LogsOptions {
        stdout: true,
        stderr: true,
        follow: false,
        timestamps: false,
        tail: "all".into(),
        ..Default::default()
    };
    let mut stream = inner.docker.logs(&name, Some(opts));
    let mut buf: Vec<u8> = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(chunk) => {
                buf.extend_from_slice(&chunk.into_bytes());
                if buf.len() > 2 * max {
                    buf.drain(..buf.len() - max);
                }
            }
            Err(e) if is_not_found(&e) => return Err(AgentError::KernelNotFound(kernel_id)),
            Err(e) => {
                if buf.is_empty() {
                    return Err(runtime(format_args!("cannot read the logs of {name}"), e));
                }
                tracing::warn!(kernel = %kernel_id, error = %e, "the log stream broke off");
                break;
            }
        }
    }
    if buf.len() > max {
        buf.drain(..buf.len() - max);
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

//! The bridge single-kernel sessions share: `bai-kernels`, made once per engine with
//! inter-container communication off. A session's container reaches the outside world
//! (NAT) and the agent reaches it, but it cannot reach another session's container over
//! the bridge, as it could on Docker's default bridge. (Cluster sessions have a bridge of
//! their own, `netpool`; Docker keeps separate bridges apart.)

use super::Inner;
use crate::error::{is_not_found, runtime};
use bai_core::agent::AgentError;
use bollard::Docker;
use bollard::models::NetworkCreateRequest;
use std::collections::HashMap;

/// The network's name.
pub const NETWORK: &str = "bai-kernels";

/// The engine option that turns inter-container communication off on a bridge.
const ICC: &str = "com.docker.network.bridge.enable_icc";

/// Whether Docker refused a name because several networks have it.
pub(super) fn is_ambiguous(e: &bollard::errors::Error) -> bool {
    matches!(
        e,
        bollard::errors::Error::DockerResponseServerError { status_code: 400, message }
            if message.contains("ambiguous")
    )
}

/// Makes the network unless it exists; refuses one of that name that lets containers
/// talk to each other (made by someone else).
pub async fn ensure(inner: &Inner) -> Result<(), AgentError> {
    ensure_named(&inner.docker, NETWORK).await
}

pub(super) async fn ensure_named(docker: &Docker, name: &str) -> Result<(), AgentError> {
    let found = match docker.inspect_network(name, None).await {
        Ok(n) => Some(n),
        Err(e) if is_not_found(&e) => None,
        // Two agents made it at the same moment: keep one, then look again.
        Err(e) if is_ambiguous(&e) => {
            settle(docker, name).await?;
            match docker.inspect_network(name, None).await {
                Ok(n) => Some(n),
                Err(e) if is_not_found(&e) => None,
                Err(e) => return Err(runtime(format_args!("cannot inspect network {name}"), e)),
            }
        }
        Err(e) => return Err(runtime(format_args!("cannot inspect network {name}"), e)),
    };
    if let Some(n) = found {
        let icc = n
            .options
            .as_ref()
            .and_then(|o| o.get(ICC))
            .map(String::as_str);
        if icc == Some("false") {
            return Ok(());
        }
        return Err(AgentError::Runtime(format!(
            "the Docker network {name} exists but lets containers reach each other ({ICC} is not false); remove it (`docker network rm {name}`) and bai makes it again"
        )));
    }
    let req = NetworkCreateRequest {
        name: name.to_string(),
        driver: Some("bridge".into()),
        options: Some(HashMap::from([(ICC.to_string(), "false".to_string())])),
        labels: Some(HashMap::from([(
            "ai.bai.purpose".to_string(),
            "single-kernel sessions, no inter-container traffic".to_string(),
        )])),
        ..Default::default()
    };
    match docker.create_network(req).await {
        Ok(_) => {
            tracing::info!(
                network = name,
                "kernel network made (no inter-container traffic)"
            );
        }
        // Another agent on this engine made it at the same moment.
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 409, ..
        }) => {}
        Err(e) => return Err(runtime(format_args!("cannot make network {name}"), e)),
    }
    // An engine that does not check names (Docker before 25) makes a second network of the
    // same name when two agents make it at once; each maker settles after its own making,
    // so the last one sees every copy.
    settle(docker, name).await
}

/// The networks of exactly this name, as (when made, id), the first made first.
async fn copies(docker: &Docker, name: &str) -> Result<Vec<(i64, String)>, AgentError> {
    let opts = bollard::query_parameters::ListNetworksOptions {
        filters: Some(HashMap::from([(
            "name".to_string(),
            vec![name.to_string()],
        )])),
    };
    let mut copies: Vec<_> = docker
        .list_networks(Some(opts))
        .await
        .map_err(|e| runtime(format_args!("cannot list networks named {name}"), e))?
        .into_iter()
        // The filter matches part of a name.
        .filter(|n| n.name.as_deref() == Some(name))
        .filter_map(|n| {
            // Docker writes the time with its trailing zeros cut, so it is compared as a time.
            let made = n
                .created
                .as_deref()
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
                .and_then(|t| t.timestamp_nanos_opt())
                .unwrap_or(i64::MAX);
            Some((made, n.id?))
        })
        .collect();
    copies.sort();
    Ok(copies)
}

/// Keeps one network of the name: the first made. No container can have joined a later
/// copy (joining by name fails while the name is ambiguous), so removing those loses
/// nothing; every agent picks the same one.
async fn settle(docker: &Docker, name: &str) -> Result<(), AgentError> {
    for (_, id) in copies(docker, name).await?.iter().skip(1) {
        match docker.remove_network(id).await {
            Ok(()) => {
                tracing::info!(network = name, id = %id, "second copy of the kernel network removed")
            }
            Err(e) if is_not_found(&e) => {}
            Err(e) => {
                return Err(runtime(
                    format_args!("cannot remove a second network named {name} ({id})"),
                    e,
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Agents that start at once on an engine without the network each make it; an engine
    /// that does not check names (Debian's Docker 20.10) then holds several copies, and no
    /// container could join any. After every maker is done, one is left.
    #[tokio::test]
    async fn docker_makers_at_once_leave_one_network() {
        let docker = Docker::connect_with_local_defaults().expect("a Docker socket");
        let name = format!(
            "bai-test-net-{}",
            &uuid::Uuid::new_v4().simple().to_string()[..12]
        );
        let makers = (0..6).map(|_| ensure_named(&docker, &name));
        for made in futures::future::join_all(makers).await {
            made.expect("each maker succeeds");
        }
        let copies = copies(&docker, &name).await.expect("networks list");
        for (_, id) in &copies {
            let _ = docker.remove_network(id).await;
        }
        assert_eq!(copies.len(), 1, "copies of {name}: {copies:?}");
    }
}

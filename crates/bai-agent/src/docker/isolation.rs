//! The bridge single-kernel sessions share: `bai-kernels`, made once per engine with
//! inter-container communication off. A session's container reaches the outside world
//! (NAT) and the agent reaches it, but it cannot reach another session's container over
//! the bridge, as it could on Docker's default bridge. (Cluster sessions have a bridge of
//! their own, `netpool`; Docker keeps separate bridges apart.)

use super::Inner;
use crate::error::{is_not_found, runtime};
use bai_core::agent::AgentError;
use bollard::models::NetworkCreateRequest;
use std::collections::HashMap;

/// The network's name.
pub const NETWORK: &str = "bai-kernels";

/// The engine option that turns inter-container communication off on a bridge.
const ICC: &str = "com.docker.network.bridge.enable_icc";

/// Makes the network unless it exists; refuses one of that name that lets containers
/// talk to each other (made by someone else).
pub async fn ensure(inner: &Inner) -> Result<(), AgentError> {
    match inner.docker.inspect_network(NETWORK, None).await {
        Ok(n) => {
            let icc = n
                .options
                .as_ref()
                .and_then(|o| o.get(ICC))
                .map(String::as_str);
            if icc == Some("false") {
                return Ok(());
            }
            return Err(AgentError::Runtime(format!(
                "the Docker network {NETWORK} exists but lets containers reach each other ({ICC} is not false); remove it (`docker network rm {NETWORK}`) and bai makes it again"
            )));
        }
        Err(e) if is_not_found(&e) => {}
        Err(e) => return Err(runtime(format_args!("cannot inspect network {NETWORK}"), e)),
    }
    let req = NetworkCreateRequest {
        name: NETWORK.to_string(),
        driver: Some("bridge".into()),
        options: Some(HashMap::from([(ICC.to_string(), "false".to_string())])),
        labels: Some(HashMap::from([(
            "ai.bai.purpose".to_string(),
            "single-kernel sessions, no inter-container traffic".to_string(),
        )])),
        ..Default::default()
    };
    match inner.docker.create_network(req).await {
        Ok(_) => {
            tracing::info!(
                network = NETWORK,
                "kernel network made (no inter-container traffic)"
            );
            Ok(())
        }
        // Another agent on this engine made it at the same moment.
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 409, ..
        }) => Ok(()),
        Err(e) => Err(runtime(format_args!("cannot make network {NETWORK}"), e)),
    }
}

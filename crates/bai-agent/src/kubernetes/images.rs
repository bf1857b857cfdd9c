//! Image work on a Kubernetes node: commit and convert-to-image, the kernel images with
//! their labels, tag, remove, pull and push. The API server can do none of it, so it is done
//! by the node's own container engine where the agent can reach it: a node whose kubelet runs
//! its containers with Docker (dockershim, cri-dockerd; `containerRuntimeVersion`
//! `docker://…`) and whose engine answers the agent (the agent runs on the node it offers).
//! There the Docker backend's image code ([`crate::engine`]) does it, on the pod's container.
//! Elsewhere (containerd, CRI-O, an engine the agent cannot reach) each call is refused with
//! the reason, and the images offered are the node's `status.images`.

use super::{Inner, pod};
use crate::engine::Engine;
use bai_core::agent::{AgentError, ImageInfo};
use bollard::Docker;
use k8s_openapi::api::core::v1::{Node, Pod};
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// How long the agent waits for the node's engine to answer when it starts.
const PING: Duration = Duration::from_secs(5);

/// The node's engine, or why there is none to use.
pub type NodeEngine = Result<Engine, String>;

/// The node's container runtime as its kubelet reports it (`docker://20.10.24`).
pub fn runtime_of(node: &Node) -> Option<&str> {
    node.status
        .as_ref()
        .and_then(|s| s.node_info.as_ref())
        .map(|i| i.container_runtime_version.as_str())
}

/// Whether a runtime named so is a Docker engine. Pure.
pub fn is_docker(runtime: &str) -> bool {
    runtime.starts_with("docker://")
}

/// Finds the node's engine: only a Docker runtime, reached as `DOCKER_HOST` says (or the
/// default socket), answering within [`PING`].
pub async fn connect(
    node_name: &str,
    node: Option<&Node>,
    data_dir: &std::path::Path,
    registry: Option<String>,
    events: Arc<bai_core::agent::EventFanout>,
) -> NodeEngine {
    let runtime = node
        .and_then(runtime_of)
        .filter(|r| !r.is_empty())
        .unwrap_or("an unknown runtime");
    if !is_docker(runtime) {
        return Err(format!(
            "node {node_name} runs its containers with {runtime}, and only a node whose \
             runtime is Docker lets the agent commit or keep images"
        ));
    }
    let docker = Docker::connect_with_local_defaults().map_err(|e| {
        format!("the Docker engine of node {node_name} cannot be reached from the agent: {e}")
    })?;
    match tokio::time::timeout(PING, docker.ping()).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            return Err(format!(
                "the Docker engine of node {node_name} does not answer the agent: {e}"
            ));
        }
        Err(_) => {
            return Err(format!(
                "the Docker engine of node {node_name} did not answer the agent within {}s",
                PING.as_secs()
            ));
        }
    }
    Ok(Engine::new(
        docker,
        data_dir.to_path_buf(),
        registry,
        Arc::new(move |ev| {
            events.send(ev);
        }),
    ))
}

/// The node's engine, or the refusal of `what` with the reason there is none.
pub fn engine<'a>(inner: &'a Inner, what: &str) -> Result<&'a Engine, AgentError> {
    inner
        .engine
        .as_ref()
        .map_err(|why| AgentError::BadRequest(format!("{what} is not possible here: {why}")))
}

/// The kernel images the node holds: the engine's (with their labels) where it is reached,
/// else `fallback` (the node's `status.images`).
pub async fn offered(inner: &Inner, fallback: Vec<ImageInfo>) -> Vec<ImageInfo> {
    match &inner.engine {
        Ok(engine) => match crate::engine::list::images(engine).await {
            Ok(list) => list,
            Err(e) => {
                tracing::warn!(error = %e, "cannot list the node engine's images");
                fallback
            }
        },
        Err(_) => fallback,
    }
}

/// The engine's id of the kernel's container, from its pod's status (`docker://<id>`).
pub async fn container_of(inner: &Inner, kernel: Uuid) -> Result<String, AgentError> {
    // A ready kernel's container id comes with the kubelet's report.
    super::ready::wait_reported(inner, kernel, super::ready::REPORT_WAIT).await;
    let pod: Option<Pod> = inner
        .pods
        .get_opt(&inner.pod_of(kernel))
        .await
        .map_err(|e| AgentError::Runtime(format!("cannot read the kernel's pod: {e}")))?;
    let Some(pod) = pod else {
        return Err(AgentError::KernelNotFound(kernel));
    };
    container_id(&pod).ok_or_else(|| {
        AgentError::NotReady("the kernel's container has not started on its node".into())
    })
}

/// The Docker id of a pod's kernel container. Pure.
pub fn container_id(pod: &Pod) -> Option<String> {
    pod.status
        .as_ref()?
        .container_statuses
        .as_ref()?
        .iter()
        .find(|c| c.name == pod::CONTAINER)?
        .container_id
        .as_deref()?
        .strip_prefix("docker://")
        .filter(|id| !id.is_empty())
        .map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ContainerStatus, NodeStatus, NodeSystemInfo, PodStatus};

    fn node_with(runtime: &str) -> Node {
        Node {
            status: Some(NodeStatus {
                node_info: Some(NodeSystemInfo {
                    container_runtime_version: runtime.into(),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn only_a_docker_runtime_is_used() {
        assert!(is_docker("docker://20.10.24"));
        assert!(!is_docker("containerd://1.7.2"));
        assert!(!is_docker("cri-o://1.28"));
        assert_eq!(
            runtime_of(&node_with("containerd://1.7.2")),
            Some("containerd://1.7.2")
        );
    }

    #[tokio::test]
    async fn a_containerd_node_is_refused_with_its_runtime_named() {
        let n = node_with("containerd://1.7.2");
        let why = connect(
            "n1",
            Some(&n),
            std::path::Path::new("/tmp"),
            None,
            Default::default(),
        )
        .await
        .err()
        .unwrap_or_default();
        assert!(why.contains("node n1"), "{why}");
        assert!(why.contains("containerd://1.7.2"), "{why}");
    }

    #[test]
    fn the_kernel_containers_docker_id() {
        let status = |name: &str, id: Option<&str>| ContainerStatus {
            name: name.into(),
            container_id: id.map(String::from),
            ..Default::default()
        };
        let pod = |statuses: Vec<ContainerStatus>| Pod {
            status: Some(PodStatus {
                container_statuses: Some(statuses),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            container_id(&pod(vec![
                status("other", Some("docker://aaa")),
                status(pod::CONTAINER, Some("docker://bbb")),
            ])),
            Some("bbb".into())
        );
        assert_eq!(
            container_id(&pod(vec![status(pod::CONTAINER, Some("containerd://ccc"))])),
            None
        );
        assert_eq!(container_id(&pod(vec![status(pod::CONTAINER, None)])), None);
        assert_eq!(container_id(&Pod::default()), None);
    }
}

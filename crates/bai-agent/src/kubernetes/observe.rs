//! What a kernel's pod says about the kernel: waiting (and why it cannot start, when
//! Kubernetes says so), running (at which pod IP), or ended (how). Pure.

pub use super::layout::named;
use super::layout::{ACCOUNTS_CONTAINER as ACCOUNTS, CONTAINER, INIT_CONTAINER};
use k8s_openapi::api::core::v1::Pod;
use std::net::IpAddr;

/// Container waiting reasons that mean the image cannot be run on the node.
const IMAGE_REASONS: [&str; 5] = [
    "ErrImageNeverPull",
    "ImagePullBackOff",
    "ErrImagePull",
    "InvalidImageName",
    "ImageInspectError",
];
/// Container waiting reasons that mean the container cannot be made.
const CREATE_REASONS: [&str; 3] = [
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
];

/// Why a pod cannot start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The scheduler finds no room (another tenant took it meanwhile).
    Unschedulable(String),
    /// The image is missing on the node or cannot be pulled.
    Image(String),
    /// The container cannot be made.
    Create(String),
}

/// How a kernel's pod ended.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ended {
    pub exit_code: Option<i32>,
    pub oom_killed: bool,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observed {
    Waiting(Option<Problem>),
    Running(Option<IpAddr>),
    Ended(Ended),
}

pub fn observe(pod: &Pod) -> Observed {
    let Some(status) = &pod.status else {
        return Observed::Waiting(None);
    };
    let node = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or("?");
    let kernel = named(&status.container_statuses, CONTAINER);
    let state = kernel.and_then(|c| c.state.as_ref());
    if let Some(t) = state.and_then(|s| s.terminated.as_ref()) {
        let reason = t.reason.clone().unwrap_or_default();
        return Observed::Ended(Ended {
            exit_code: Some(t.exit_code),
            oom_killed: reason == "OOMKilled",
            reason,
        });
    }
    let phase = status.phase.as_deref().unwrap_or("");
    if matches!(phase, "Failed" | "Succeeded") {
        // Ended without a container state: rejected by the kubelet (OutOfcpu, …), evicted.
        let reason = [status.reason.as_deref(), status.message.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(": ");
        return Observed::Ended(Ended {
            exit_code: None,
            oom_killed: false,
            reason: if reason.is_empty() {
                format!("the pod {phase}")
            } else {
                reason
            },
        });
    }
    // A detached pod's init container, which brings the runner in from its image.
    let init = named(&status.init_container_statuses, INIT_CONTAINER);
    let init_waiting = init.and_then(|c| Some((c, c.state.as_ref()?.waiting.as_ref()?)));
    if let Some(problem) = init_waiting.and_then(|(c, w)| {
        cannot_start(
            w,
            |reason, message| {
                format!(
                    "the runner's image {} cannot be run on node {node} ({reason}): {message}; \
                     the agent's --runner-image must be on every node or pullable there",
                    c.image
                )
            },
            |reason, message| {
                format!(
                    "the runner's init container cannot be made on node {node} ({reason}): \
                     {message}"
                )
            },
        )
    }) {
        return Observed::Waiting(Some(problem));
    }
    // The kernel's image runs first in the init container that makes its account files
    // (`super::accounts`): a missing image shows there, while the kernel's container waits
    // in PodInitializing.
    let accounts = named(&status.init_container_statuses, ACCOUNTS)
        .and_then(|c| Some((c, c.state.as_ref()?.waiting.as_ref()?)))
        .filter(|(_, w)| w.reason.as_deref() != Some("PodInitializing"));
    let waiting =
        accounts.or_else(|| kernel.and_then(|c| Some((c, c.state.as_ref()?.waiting.as_ref()?))));
    if let Some(problem) = waiting.and_then(|(c, w)| {
        let image = c.image.as_str();
        cannot_start(
            w,
            |reason, message| {
                format!("the image {image} cannot be run on node {node} ({reason}): {message}")
            },
            |reason, message| {
                format!(
                    "the kernel's container cannot be made on node {node} ({reason}): {message}"
                )
            },
        )
    }) {
        return Observed::Waiting(Some(problem));
    }
    if state.and_then(|s| s.running.as_ref()).is_some() {
        let ip = status.pod_ip.as_deref().and_then(|ip| ip.parse().ok());
        return Observed::Running(ip);
    }
    let unschedulable = status.conditions.iter().flatten().find(|c| {
        c.type_ == "PodScheduled"
            && c.status == "False"
            && c.reason.as_deref() == Some("Unschedulable")
    });
    if let Some(c) = unschedulable {
        return Observed::Waiting(Some(Problem::Unschedulable(
            c.message
                .clone()
                .unwrap_or_else(|| "no node has room".into()),
        )));
    }
    Observed::Waiting(None)
}

/// What a waiting container's reason says: its image cannot be run (told by `image`) or
/// it cannot be made (told by `create`), each given the reason and the message; `None` for
/// any other wait.
fn cannot_start(
    w: &k8s_openapi::api::core::v1::ContainerStateWaiting,
    image: impl FnOnce(&str, &str) -> String,
    create: impl FnOnce(&str, &str) -> String,
) -> Option<Problem> {
    let reason = w.reason.as_deref().unwrap_or("");
    let message = w.message.as_deref().unwrap_or("");
    if IMAGE_REASONS.contains(&reason) {
        Some(Problem::Image(image(reason, message)))
    } else if CREATE_REASONS.contains(&reason) {
        Some(Problem::Create(create(reason, message)))
    } else {
        None
    }
}

/// Why a pod has not started yet, in Kubernetes' words, for a kernel that was not ready in
/// time: not scheduled (the scheduler's message), or bound to a node whose kubelet has not
/// started its container (the container's waiting reason, when it gave one). `true` when no
/// node took the pod (a question of room, not of the kernel).
pub fn why_pending(pod: &Pod) -> (bool, String) {
    let status = pod.status.as_ref();
    let phase = status.and_then(|s| s.phase.as_deref()).unwrap_or("Pending");
    let node = pod.spec.as_ref().and_then(|s| s.node_name.as_deref());
    let Some(node) = node else {
        let said = status
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == "PodScheduled"))
            .and_then(|c| {
                let text = [c.reason.as_deref(), c.message.as_deref()]
                    .into_iter()
                    .flatten()
                    .filter(|t| !t.is_empty())
                    .collect::<Vec<_>>()
                    .join(": ");
                (!text.is_empty()).then_some(text)
            });
        return (
            true,
            match said {
                Some(said) => format!("the pod is still {phase}, placed on no node: {said}"),
                None => format!("the pod is still {phase}: the scheduler placed it on no node"),
            },
        );
    };
    let waiting = status
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|c| c.iter().find(|c| c.name == CONTAINER))
        .and_then(|c| c.state.as_ref())
        .and_then(|s| s.waiting.as_ref())
        .and_then(|w| {
            let text = [w.reason.as_deref(), w.message.as_deref()]
                .into_iter()
                .flatten()
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join(": ");
            (!text.is_empty()).then_some(text)
        });
    (
        false,
        match waiting {
            Some(w) => {
                format!("the pod is still {phase} on node {node}: its container is waiting ({w})")
            }
            None => format!(
                "the pod is still {phase} on node {node}: its kubelet has not started the container"
            ),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(status: serde_json::Value) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "spec": {"nodeName": "n1", "containers": [{"name": "kernel", "image": "img"}]},
            "status": status
        }))
        .unwrap()
    }

    fn cstate(state: serde_json::Value) -> serde_json::Value {
        json!({"phase": "Running", "podIP": "172.17.0.5", "containerStatuses": [{
            "name": "kernel", "image": "bai/python:3.11-bookworm", "imageID": "", "ready": true,
            "restartCount": 0, "state": state}]})
    }

    #[test]
    fn running_with_its_pod_ip() {
        let p = pod(cstate(json!({"running": {}})));
        assert_eq!(
            observe(&p),
            Observed::Running(Some("172.17.0.5".parse().unwrap()))
        );
    }

    #[test]
    fn oom_killed_and_exit_codes_are_read() {
        let p = pod(cstate(
            json!({"terminated": {"exitCode": 137, "reason": "OOMKilled"}}),
        ));
        let Observed::Ended(e) = observe(&p) else {
            panic!()
        };
        assert!(e.oom_killed);
        assert_eq!(e.exit_code, Some(137));
        let p = pod(cstate(
            json!({"terminated": {"exitCode": 3, "reason": "Error"}}),
        ));
        assert_eq!(
            observe(&p),
            Observed::Ended(Ended {
                exit_code: Some(3),
                oom_killed: false,
                reason: "Error".into()
            })
        );
    }

    #[test]
    fn a_missing_image_names_the_image_and_the_node() {
        let p = pod(cstate(
            json!({"waiting": {"reason": "ErrImageNeverPull", "message": "not present"}}),
        ));
        let Observed::Waiting(Some(Problem::Image(why))) = observe(&p) else {
            panic!()
        };
        assert!(
            why.contains("bai/python:3.11-bookworm") && why.contains("n1"),
            "{why}"
        );
    }

    #[test]
    fn a_missing_runner_image_is_told_as_such() {
        let p = pod(json!({"phase": "Pending", "initContainerStatuses": [{
            "name": "runner", "image": "bai/agent:9", "imageID": "", "ready": false,
            "restartCount": 0, "state": {"waiting": {"reason": "ErrImageNeverPull",
            "message": "not present"}}}]}));
        let Observed::Waiting(Some(Problem::Image(why))) = observe(&p) else {
            panic!("{:?}", observe(&p))
        };
        assert!(
            why.contains("runner's image bai/agent:9") && why.contains("n1"),
            "{why}"
        );
    }

    #[test]
    fn a_missing_image_is_told_where_its_account_files_are_made_first() {
        let p = pod(json!({"phase": "Pending",
            "initContainerStatuses": [{
                "name": "accounts", "image": "site/torch:2", "imageID": "", "ready": false,
                "restartCount": 0, "state": {"waiting": {"reason": "ErrImageNeverPull",
                "message": "not present"}}}],
            "containerStatuses": [{
                "name": "kernel", "image": "site/torch:2", "imageID": "", "ready": false,
                "restartCount": 0, "state": {"waiting": {"reason": "PodInitializing"}}}]}));
        let Observed::Waiting(Some(Problem::Image(why))) = observe(&p) else {
            panic!("{:?}", observe(&p))
        };
        assert!(
            why.contains("image site/torch:2 cannot be run on node n1"),
            "{why}"
        );
        // Still initializing: no problem.
        let p = pod(json!({"phase": "Pending",
            "initContainerStatuses": [{
                "name": "accounts", "image": "site/torch:2", "imageID": "", "ready": false,
                "restartCount": 0, "state": {"running": {}}}]}));
        assert_eq!(observe(&p), Observed::Waiting(None));
    }

    #[test]
    fn unschedulable_and_kubelet_rejections_are_told() {
        let p = pod(
            json!({"phase": "Pending", "conditions": [{"type": "PodScheduled",
            "status": "False", "reason": "Unschedulable", "message": "0/1 nodes: Insufficient cpu."}]}),
        );
        assert_eq!(
            observe(&p),
            Observed::Waiting(Some(Problem::Unschedulable(
                "0/1 nodes: Insufficient cpu.".into()
            )))
        );
        let p = pod(
            json!({"phase": "Failed", "reason": "OutOfcpu", "message": "Node didn't have enough resource: cpu"}),
        );
        let Observed::Ended(e) = observe(&p) else {
            panic!()
        };
        assert_eq!(e.exit_code, None);
        assert!(e.reason.starts_with("OutOfcpu"), "{}", e.reason);
        assert_eq!(
            observe(&pod(json!({"phase": "Pending"}))),
            Observed::Waiting(None)
        );
    }

    #[test]
    fn a_pod_pending_too_long_says_where_it_stands() {
        let unplaced: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "kernel", "image": "img"}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled",
                "status": "False", "reason": "Unschedulable", "message": "0/1 nodes: Too many pods."}]}
        }))
        .unwrap();
        let (no_room, why) = why_pending(&unplaced);
        assert!(no_room);
        assert!(
            why.contains("Unschedulable: 0/1 nodes: Too many pods."),
            "{why}"
        );
        let (no_room, why) = why_pending(&pod(json!({"phase": "Pending"})));
        assert!(!no_room);
        assert!(
            why.contains("on node n1") && why.contains("not started"),
            "{why}"
        );
        let creating = pod(json!({"phase": "Pending", "containerStatuses": [{
            "name": "kernel", "image": "img", "imageID": "", "ready": false, "restartCount": 0,
            "state": {"waiting": {"reason": "ContainerCreating"}}}]}));
        let (_, why) = why_pending(&creating);
        assert!(why.contains("waiting (ContainerCreating)"), "{why}");
    }
}

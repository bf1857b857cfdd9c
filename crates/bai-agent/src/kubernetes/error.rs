//! The Kubernetes backend's errors, and what they become at the agent interface.

use super::pod::PodError;
use bai_core::agent::AgentError;

#[derive(Debug, thiserror::Error)]
pub enum KubeError {
    #[error("cannot read the kubeconfig {path}: {source}")]
    Kubeconfig {
        path: String,
        #[source]
        source: kube::config::KubeconfigError,
    },
    #[error("no --kubeconfig given and not running in a pod: {0}")]
    InCluster(#[from] kube::config::InClusterError),
    #[error("the Kubernetes API server at {server} does not answer: {detail}")]
    Unreachable { server: String, detail: String },
    #[error("{0}")]
    NoNode(String),
    #[error("{context}: {}", api_text(.source))]
    Api {
        context: String,
        #[source]
        source: kube::Error,
    },
    #[error(transparent)]
    Pod(#[from] PodError),
}

impl KubeError {
    pub fn api(context: impl std::fmt::Display) -> impl FnOnce(kube::Error) -> KubeError {
        let context = context.to_string();
        move |source| KubeError::Api { context, source }
    }
}

/// An API error as one readable line: the server's own message and reason (`kube::Error`'s
/// display adds the whole status structure).
fn api_text(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) if !s.message.is_empty() => {
            format!("{} ({} {})", s.message, s.code, s.reason)
        }
        other => other.to_string(),
    }
}

/// Whether the API server answered 404.
pub fn is_not_found(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404)
}

/// Whether the API server answered 403 (the agent's role does not allow it).
pub fn is_forbidden(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 403)
}

/// Whether the API server answered 409 (the object exists already).
pub fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

impl From<KubeError> for AgentError {
    fn from(e: KubeError) -> AgentError {
        match e {
            KubeError::Pod(p) => AgentError::BadRequest(p.to_string()),
            KubeError::NoNode(why) => AgentError::InsufficientResources(why),
            KubeError::Api { ref source, .. } if matches!(source, kube::Error::Api(s) if s.code == 403) => {
                AgentError::Runtime(format!("{e} (does the agent's Role allow it?)"))
            }
            other => AgentError::Runtime(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_errors_read_as_one_line_without_the_status_structure() {
        let status =
            kube::core::Status::failure("namespace bai-x is being terminated", "Forbidden")
                .with_code(403);
        let e =
            KubeError::api("cannot create the pod of kernel k")(kube::Error::Api(Box::new(status)));
        let line = AgentError::from(e).to_string();
        assert!(
            line.contains(
                "cannot create the pod of kernel k: namespace bai-x is being terminated (403 Forbidden)"
            ),
            "{line}"
        );
        assert!(!line.contains("Status {"), "{line}");
    }
}

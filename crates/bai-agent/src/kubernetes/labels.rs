//! The labels bai puts on its pods, and reading them back. Pure.

use crate::{LABEL_AGENT, LABEL_KERNEL, LABEL_SESSION};
use std::collections::BTreeMap;
use uuid::Uuid;

/// Every object bai makes carries this label with this value.
pub const LABEL_MANAGED_BY: &str = "app.kubernetes.io/managed-by";
pub const MANAGED_BY: &str = "bai";
/// The session's name (annotations allow any text).
pub const ANNOTATION_SESSION_NAME: &str = "ai.bai/session-name";

/// The labels of one kernel's pod.
pub struct KernelLabels<'a> {
    pub agent: &'a str,
    pub kernel: Uuid,
    pub session: Uuid,
}

impl KernelLabels<'_> {
    pub fn to_map(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (LABEL_MANAGED_BY.into(), MANAGED_BY.into()),
            (LABEL_AGENT.into(), label_value(self.agent)),
            (LABEL_KERNEL.into(), self.kernel.to_string()),
            (LABEL_SESSION.into(), self.session.to_string()),
        ])
    }
}

/// A label value for any text: at most 63 characters of `[A-Za-z0-9._-]`, starting and
/// ending with a letter or digit (others become `-`, the ends are trimmed).
pub fn label_value(s: &str) -> String {
    let mapped: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(63)
        .collect();
    mapped
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_string()
}

/// The selector of every pod of this agent.
pub fn agent_selector(agent: &str) -> String {
    format!(
        "{LABEL_MANAGED_BY}={MANAGED_BY},{LABEL_AGENT}={}",
        label_value(agent)
    )
}

/// The kernel a pod's labels name, if any.
pub fn kernel_of(labels: Option<&BTreeMap<String, String>>) -> Option<Uuid> {
    labels?.get(LABEL_KERNEL)?.parse().ok()
}

/// The kernel of an object made for it (a NetworkPolicy, a Secret) that has no owner yet:
/// made before its pod, which a crash may have kept from being made or handed the object.
pub fn unowned_kernel(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Option<Uuid> {
    if owned(meta) {
        return None;
    }
    kernel_of(meta.labels.as_ref())
}

/// Whether an object has an owner (Kubernetes removes it with that owner).
pub fn owned(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> bool {
    meta.owner_references
        .as_ref()
        .is_some_and(|o| !o.is_empty())
}

/// Whether the pod is a kernel of this agent (its kernels are counted by bai's scheduler;
/// every other pod on the node, another bai agent's included, holds room bai cannot use).
pub fn is_agents(labels: Option<&BTreeMap<String, String>>, agent: &str) -> bool {
    labels.is_some_and(|l| {
        l.get(LABEL_MANAGED_BY).map(String::as_str) == Some(MANAGED_BY)
            && l.get(LABEL_AGENT).is_some_and(|a| *a == label_value(agent))
            && l.contains_key(LABEL_KERNEL)
    })
}

/// The selector of every pod that is not one of this agent's (others' pods on its node).
pub fn not_agents_selector(agent: &str) -> String {
    format!("{LABEL_AGENT}!={}", label_value(agent))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_valid_whatever_the_agent_is_called() {
        assert_eq!(label_value("node-1"), "node-1");
        assert_eq!(label_value("my agent@host!"), "my-agent-host");
        assert_eq!(label_value(&"x".repeat(80)).len(), 63);
        assert_eq!(label_value("-a-"), "a");
    }

    #[test]
    fn a_kernel_pod_is_recognised_by_its_labels() {
        let k = Uuid::from_u128(7);
        let m = KernelLabels {
            agent: "a 1",
            kernel: k,
            session: Uuid::from_u128(8),
        }
        .to_map();
        assert_eq!(kernel_of(Some(&m)), Some(k));
        assert!(is_agents(Some(&m), "a 1"));
        assert!(!is_agents(Some(&m), "another"));
        assert_eq!(not_agents_selector("a 1"), "ai.bai.agent!=a-1");
        assert_eq!(m[LABEL_AGENT], "a-1");
        assert_eq!(
            agent_selector("a 1"),
            "app.kubernetes.io/managed-by=bai,ai.bai.agent=a-1"
        );
        assert!(!is_agents(None, "a 1"));
        assert!(!is_agents(Some(&BTreeMap::new()), "a 1"));
    }

    #[test]
    fn only_an_object_without_an_owner_is_a_crashs_leftover() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
        let k = Uuid::from_u128(7);
        let mut meta = ObjectMeta {
            labels: Some(
                KernelLabels {
                    agent: "a",
                    kernel: k,
                    session: Uuid::from_u128(8),
                }
                .to_map(),
            ),
            ..Default::default()
        };
        assert_eq!(unowned_kernel(&meta), Some(k));
        meta.owner_references = Some(vec![OwnerReference {
            api_version: "v1".into(),
            kind: "Pod".into(),
            name: "bai-k-7".into(),
            uid: "u".into(),
            ..Default::default()
        }]);
        assert_eq!(unowned_kernel(&meta), None);
        assert_eq!(unowned_kernel(&ObjectMeta::default()), None);
    }
}

//! A kernel's network policy as a `networking.k8s.io/v1` NetworkPolicy: its egress policy
//! with the same promises as the Docker backend's nftables tables (`docker/egress/rules.rs`),
//! said as Kubernetes says them, and its isolation from other sessions' pods. No I/O here;
//! [`super`] makes, owns and removes the object.
//!
//! The object selects exactly one pod (by its kernel label). Its `policyTypes` are `Ingress`
//! always and `Egress` unless the egress policy is `open`, so what its rules do not allow is
//! closed for that pod in those directions (NetworkPolicy rules only allow; several rules add
//! up).
//!
//! Ingress: only the session's own pods (a cluster session's kernels reach each other) and
//! the kernel's own node. bai reaches a kernel only from its node (the agent there relays the
//! app proxy, SSH and the runner), and Kubernetes lets a pod's own node in whatever a policy
//! says; its addresses are listed anyway for plugins that police the host too. Another
//! session's pods, in this namespace or elsewhere, are refused.
//!
//! Egress rules:
//! - `default`: every address but the cluster's nodes (the spec's and the kernel's own
//!   node's), link-local and the clouds' metadata addresses, as `ipBlock.except`; DNS (53,
//!   TCP and UDP) to any address; the session's own pods; the allow list.
//! - `closed`: the session's own pods and the allow list only.
//! - each allowed destination: an `ipBlock` with, when it names one, its port over TCP and
//!   UDP. Only fields a Kubernetes 1.20 API server knows are written (it drops unknown ones
//!   silently): never `endPort`, which came in 1.21 (bai's allow list names single ports).
//!
//! `open` has no egress rule and no `Egress` type: every destination stays open.

use crate::{LABEL_KERNEL, LABEL_SESSION};
use bai_core::egress::{Allowed, EgressMode, EgressPolicy};
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::api::networking::v1::{
    IPBlock, NetworkPolicy, NetworkPolicyEgressRule, NetworkPolicyIngressRule, NetworkPolicyPeer,
    NetworkPolicyPort, NetworkPolicySpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use uuid::Uuid;

/// Link-local blocks and the clouds' metadata addresses outside them, closed under
/// `default` (the Docker backend's list).
pub const METADATA_V4: [&str; 2] = ["169.254.0.0/16", "100.100.100.200/32"];
pub const METADATA_V6: [&str; 2] = ["fe80::/10", "fd00:ec2::254/128"];

/// The kernel whose pod the policy is for.
pub struct Target<'a> {
    pub namespace: &'a str,
    /// The pod's labels (the object carries the same, so it is found as the pod is).
    pub labels: BTreeMap<String, String>,
    pub kernel: Uuid,
    pub session: Uuid,
    /// The addresses of the node the kernel runs on (always let in).
    pub node: Vec<IpAddr>,
}

fn selector(key: &str, value: String) -> LabelSelector {
    LabelSelector {
        match_labels: Some(BTreeMap::from([(key.to_string(), value)])),
        ..Default::default()
    }
}

fn block(cidr: String, except: Vec<String>) -> NetworkPolicyPeer {
    NetworkPolicyPeer {
        ip_block: Some(IPBlock {
            cidr,
            except: (!except.is_empty()).then_some(except),
        }),
        ..Default::default()
    }
}

/// One port over TCP and UDP (never `endPort`).
fn ports(port: u16) -> Vec<NetworkPolicyPort> {
    ["TCP", "UDP"]
        .into_iter()
        .map(|proto| NetworkPolicyPort {
            port: Some(IntOrString::Int(i32::from(port))),
            protocol: Some(proto.into()),
            end_port: None,
        })
        .collect()
}

fn allow_rule(a: &Allowed) -> NetworkPolicyEgressRule {
    NetworkPolicyEgressRule {
        to: Some(vec![block(a.block(), Vec::new())]),
        ports: a.port.map(ports),
    }
}

/// Everything of one family but `closed` (the nodes of that family and its metadata blocks).
fn all_but(v6: bool, nodes: &BTreeSet<IpAddr>) -> NetworkPolicyPeer {
    let (all, meta) = if v6 {
        ("::/0", &METADATA_V6[..])
    } else {
        ("0.0.0.0/0", &METADATA_V4[..])
    };
    let mut except: BTreeSet<String> = nodes
        .iter()
        .filter(|n| n.is_ipv6() == v6)
        .map(single)
        .collect();
    except.extend(meta.iter().map(|m| m.to_string()));
    block(all.into(), except.into_iter().collect())
}

/// The session's own pods, as a peer.
fn session_pods(session: Uuid) -> NetworkPolicyPeer {
    NetworkPolicyPeer {
        pod_selector: Some(selector(LABEL_SESSION, session.to_string())),
        ..Default::default()
    }
}

/// One address as a CIDR block of its own (`/32`, `/128`).
fn single(a: &IpAddr) -> String {
    let full = if a.is_ipv6() { 128 } else { 32 };
    format!("{a}/{full}")
}

/// One address as a peer.
fn host(a: &IpAddr) -> NetworkPolicyPeer {
    block(single(a), Vec::new())
}

/// Who may dial the kernel: its session's pods and its own node.
fn ingress_rules(t: &Target<'_>) -> Vec<NetworkPolicyIngressRule> {
    let mut rules = vec![NetworkPolicyIngressRule {
        from: Some(vec![session_pods(t.session)]),
        ports: None,
    }];
    if !t.node.is_empty() {
        rules.push(NetworkPolicyIngressRule {
            from: Some(t.node.iter().map(host).collect()),
            ports: None,
        });
    }
    rules
}

/// What the kernel may dial under `p` (None under `open`: no `Egress` type), with `nodes`
/// the cluster's nodes and the kernel's own node, closed under `default`.
fn egress_rules(
    t: &Target<'_>,
    p: &EgressPolicy,
    nodes: &BTreeSet<IpAddr>,
) -> Option<Vec<NetworkPolicyEgressRule>> {
    let mut rules = Vec::new();
    match p.mode {
        EgressMode::Open => return None,
        EgressMode::Default => {
            rules.push(NetworkPolicyEgressRule {
                to: Some(vec![all_but(false, nodes), all_but(true, nodes)]),
                ports: None,
            });
            rules.push(NetworkPolicyEgressRule {
                to: None,
                ports: Some(ports(53)),
            });
        }
        EgressMode::Closed => {}
    }
    rules.push(NetworkPolicyEgressRule {
        to: Some(vec![session_pods(t.session)]),
        ports: None,
    });
    rules.extend(p.allow.iter().map(allow_rule));
    Some(rules)
}

/// The NetworkPolicy of a kernel's pod: ingress from its session and node only, egress
/// under `p` with `nodes` the cluster's nodes and the kernel's own node, closed under
/// `default`.
pub fn network_policy(
    t: &Target<'_>,
    name: &str,
    p: &EgressPolicy,
    nodes: &BTreeSet<IpAddr>,
) -> NetworkPolicy {
    let egress = egress_rules(t, p, nodes);
    let mut types = vec!["Ingress".to_string()];
    if egress.is_some() {
        types.push("Egress".into());
    }
    NetworkPolicy {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(t.namespace.to_string()),
            labels: Some(t.labels.clone()),
            ..Default::default()
        },
        spec: Some(NetworkPolicySpec {
            pod_selector: Some(selector(LABEL_KERNEL, t.kernel.to_string())),
            policy_types: Some(types),
            egress,
            ingress: Some(ingress_rules(t)),
        }),
    }
}

/// The pod as the owner of its policy: Kubernetes' garbage collector deletes the policy
/// with the pod, whoever deletes the pod.
pub fn owned_by(pod: &str, uid: &str) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "Pod".into(),
        name: pod.to_string(),
        uid: uid.to_string(),
        controller: None,
        block_owner_deletion: None,
    }
}

/// A node's own addresses (`InternalIP`, `ExternalIP`; names are skipped).
pub fn node_addresses(node: &Node) -> Vec<IpAddr> {
    node.status
        .as_ref()
        .and_then(|s| s.addresses.as_ref())
        .into_iter()
        .flatten()
        .filter(|a| a.type_ == "InternalIP" || a.type_ == "ExternalIP")
        .filter_map(|a| a.address.parse().ok())
        .collect()
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;

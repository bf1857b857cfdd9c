//! Network policies on the Kubernetes backend: with `--network-policies enforced`, one
//! NetworkPolicy per kernel pod ([`policy::network_policy`]): its egress policy (none under
//! `open`) and its isolation from other sessions' pods (only its session's pods and its own
//! node may dial it). The cluster's network plugin enforces them (Calico, Cilium … enforce
//! NetworkPolicy; a plain bridge or flannel does not). bai cannot see whether the plugin
//! enforces it, so the admin says so; until then the agent makes no policy, reports
//! [`NOT_ENFORCED`], and the manager gives it only sessions of `open` groups.
//!
//! Order, so a kernel never runs a moment without its policy (its bootstrap script runs as
//! the pod starts): the policy is made first (labelled as the pod, no owner yet), then the
//! pod, then the pod is made the policy's owner, so Kubernetes deletes the policy with the
//! pod whoever deletes it. A policy that cannot be made stops the kernel before its pod
//! exists; a failure after it removes both. Policies a crash left without their pod are
//! removed at the agent's start.
//!
//! With `--network-policies node` the agent enforces the same itself, with nftables in each
//! kernel pod's own network namespace ([`netns`], [`node`]), and makes no NetworkPolicy.

pub mod netns;
pub mod node;
pub mod policy;

use super::error::{KubeError, is_not_found};
use super::labels::{self, KernelLabels};
use super::pod::pod_name;
use super::{Enforcement, Inner, client};
use bai_core::agent::{AgentError, KernelSpec};
use bai_core::cluster::PEER_MANAGER;
use bai_core::egress::EgressMode;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use std::collections::BTreeSet;
use std::net::IpAddr;
use uuid::Uuid;

/// What the agent says while nobody enforces policies (`--network-policies not-enforced`).
pub const NOT_ENFORCED: &str = "egress policies are not enforced on this Kubernetes agent: \
    start it with --network-policies enforced once the cluster's network plugin enforces \
    NetworkPolicy (Calico, Cilium …), or with --network-policies node to have the agent \
    enforce them on its node";

/// The addresses of the node the agent places kernels on.
pub(super) async fn own_node(inner: &Inner) -> Result<Vec<IpAddr>, AgentError> {
    let node = client::node(&inner.client, &inner.node)
        .await
        .map_err(AgentError::from)?
        .ok_or_else(|| {
            AgentError::NotReady(format!(
                "node {} is gone; its addresses are unknown",
                inner.node
            ))
        })?;
    Ok(policy::node_addresses(&node))
}

/// The addresses closed under `default`: the spec's nodes (the manager's host resolved) and
/// the kernel's own node's (`own`).
pub(super) async fn closed_nodes(
    inner: &Inner,
    spec: &KernelSpec,
    own: &[IpAddr],
) -> BTreeSet<IpAddr> {
    let mut out = BTreeSet::new();
    for n in &spec.egress.nodes {
        if n == PEER_MANAGER {
            let Some(host) = inner.config.manager_host.as_deref() else {
                continue;
            };
            match tokio::net::lookup_host((host, 0)).await {
                Ok(addrs) => out.extend(addrs.map(|a| a.ip())),
                Err(e) => {
                    tracing::warn!(host, error = %e, "cannot resolve the manager's host for the egress policy")
                }
            }
            continue;
        }
        match n.parse() {
            Ok(a) => {
                out.insert(a);
            }
            Err(_) => tracing::warn!(node = %n, "a node's address is not an IP address"),
        }
    }
    out.extend(own.iter().copied());
    out
}

/// Makes the policy of a kernel about to start, before its pod: true when one was made
/// (none while the agent does not enforce policies, where only `open` is taken).
pub async fn before_pod(inner: &Inner, spec: &KernelSpec) -> Result<bool, AgentError> {
    match inner.config.network_policies {
        Enforcement::NetworkPolicy => {}
        // The agent's own rules, in the pod's namespace before its kernel starts.
        Enforcement::Node => return Ok(false),
        Enforcement::None if spec.egress.policy.mode == EgressMode::Open => return Ok(false),
        Enforcement::None => {
            return Err(AgentError::BadRequest(format!(
                "the kernel's egress policy is {}, and {NOT_ENFORCED}",
                spec.egress.policy.summary()
            )));
        }
    }
    let kernel = spec.kernel_id;
    let own = own_node(inner).await?;
    let closed = if spec.egress.policy.mode == EgressMode::Default {
        closed_nodes(inner, spec, &own).await
    } else {
        BTreeSet::new()
    };
    let target = policy::Target {
        namespace: &inner.config.namespace,
        labels: KernelLabels {
            agent: &inner.config.agent_id,
            kernel,
            session: spec.session_id,
        }
        .to_map(),
        kernel,
        session: spec.session_id,
        node: own,
    };
    let np = policy::network_policy(&target, &pod_name(kernel), &spec.egress.policy, &closed);
    inner
        .policies
        .create(&PostParams::default(), &np)
        .await
        .map_err(KubeError::api(format_args!(
            "cannot create the NetworkPolicy of kernel {kernel} (egress {})",
            spec.egress.policy.summary()
        )))?;
    tracing::info!(kernel = %kernel, policy = %spec.egress.policy.summary(), nodes = closed.len(),
        "NetworkPolicy made");
    Ok(true)
}

/// Makes the kernel's pod (`uid`) the owner of its policy.
pub async fn own(inner: &Inner, kernel: Uuid, uid: &str) -> Result<(), AgentError> {
    let name = pod_name(kernel);
    let owner = policy::owned_by(&inner.pod_of(kernel), uid);
    let patch = serde_json::json!({"metadata": {"ownerReferences": [owner]}});
    inner
        .policies
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(KubeError::api(format_args!(
            "cannot hand the NetworkPolicy of kernel {kernel} to its pod"
        )))?;
    Ok(())
}

/// Deletes a kernel's policy (none there is fine; the garbage collector may have been first).
pub async fn remove(inner: &Inner, kernel: Uuid) {
    if inner.config.network_policies != Enforcement::NetworkPolicy {
        return; // none was made by this agent; any older one goes with its pod
    }
    match inner
        .policies
        .delete(&pod_name(kernel), &DeleteParams::default())
        .await
    {
        Ok(_) => {}
        Err(e) if is_not_found(&e) => {}
        Err(e) => {
            tracing::warn!(kernel = %kernel, error = %e, "cannot delete a kernel's NetworkPolicy")
        }
    }
}

/// At the agent's start (its pods listed): removes its policies that have no owner and whose
/// kernel has no pod (a crash between the policy and its pod).
pub async fn sweep(inner: &Inner) {
    if inner.config.network_policies != Enforcement::NetworkPolicy {
        return;
    }
    let lp = ListParams::default().labels(&labels::agent_selector(&inner.config.agent_id));
    let list = match inner.policies.list(&lp).await {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "cannot list this agent's NetworkPolicies");
            return;
        }
    };
    for np in list.items {
        let Some(kernel) = labels::unowned_kernel(&np.metadata) else {
            continue;
        };
        if !inner.knows(kernel) {
            tracing::info!(kernel = %kernel, "removing a NetworkPolicy left without its pod");
            remove(inner, kernel).await;
        }
    }
}

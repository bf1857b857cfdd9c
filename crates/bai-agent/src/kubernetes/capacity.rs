//! What a node offers an agent: its allocatable resources minus what pods other than the
//! agent's own kernels request there (other tenants, and other bai agents, share the
//! cluster), and whether it may be used at all. Pure.

use super::gpus::{CUDA_DEVICE, CUDA_SHARES, NVIDIA_GPU, NVIDIA_GPU_SHARED, gpu_sharing, mig_slot};
use super::labels;
use super::quantity;
use bai_core::agent::ImageInfo;
use bai_core::resources::ResourceSlots;
use k8s_openapi::api::core::v1::{Container, Node, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use std::collections::BTreeMap;

/// Why a node is not offered (None: it is).
pub fn unusable(node: &Node) -> Option<String> {
    let name = node.metadata.name.as_deref().unwrap_or("?");
    if node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true) {
        return Some(format!("node {name} is cordoned"));
    }
    (!is_ready(node)).then(|| format!("node {name} is not Ready"))
}

/// Whether the node's kubelet says it is Ready (its kernels can be reached).
pub fn is_ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
        .is_some_and(|c| c.status == "True")
}

/// A pod's effective request of `key` as the scheduler counts it, read by `parse`: the sum
/// over its containers, or an init container's if larger (init containers run one at a
/// time).
fn pod_request(pod: &Pod, key: &str, parse: fn(&str) -> Result<u64, quantity::BadQuantity>) -> u64 {
    let Some(spec) = &pod.spec else {
        return 0;
    };
    let of = |c: &Container| {
        let r = c.resources.as_ref();
        r.and_then(|r| r.requests.as_ref().and_then(|q| q.get(key)))
            .or_else(|| r.and_then(|r| r.limits.as_ref().and_then(|q| q.get(key))))
            .map_or(0, |q| parse(&q.0).unwrap_or(0))
    };
    let sum = spec
        .containers
        .iter()
        .map(of)
        .fold(0u64, u64::saturating_add);
    spec.init_containers
        .iter()
        .flatten()
        .map(of)
        .fold(sum, u64::max)
}

/// A pod's effective requests of cpu (millicores), memory, whole GPUs and shared slices.
fn pod_requests(pod: &Pod) -> (u64, u64, u64, u64) {
    (
        pod_request(pod, "cpu", quantity::cpu_milli),
        pod_request(pod, "memory", quantity::units),
        pod_request(pod, NVIDIA_GPU, quantity::units),
        pod_request(pod, NVIDIA_GPU_SHARED, quantity::units),
    )
}

/// What `pods` that have not ended request together: cpu in millicores, memory in bytes.
pub fn held_by(pods: &[Pod]) -> (u64, u64) {
    pods.iter()
        .filter(|p| holds(p))
        .map(|p| {
            let (c, m, _, _) = pod_requests(p);
            (c, m)
        })
        .fold((0, 0), |a, b| {
            (a.0.saturating_add(b.0), a.1.saturating_add(b.1))
        })
}

/// Whether a pod still holds its requests (it has not ended).
fn holds(pod: &Pod) -> bool {
    !matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

/// Whether `pod` holds room on the node `name` that `agent` cannot use: it is on that node,
/// has not ended, and is not one of the agent's kernels.
fn others_holding(pod: &Pod, name: Option<&str>, agent: &str) -> bool {
    pod.spec.as_ref().and_then(|s| s.node_name.as_deref()) == name
        && holds(pod)
        && !labels::is_agents(pod.metadata.labels.as_ref(), agent)
}

fn allocatable<'a>(node: &'a Node, key: &str) -> Option<&'a Quantity> {
    node.status.as_ref()?.allocatable.as_ref()?.get(key)
}

/// The node's allocatable resources less the requests of `pods` on it that are not kernels
/// of `agent` (its own kernels are counted by bai's scheduler; another tenant's pods and
/// another bai agent's kernels hold room it cannot use). `pods` may hold pods of any node.
pub fn offered(node: &Node, pods: &[Pod], agent: &str) -> ResourceSlots {
    let name = node.metadata.name.as_deref();
    let q = |k: &str, f: fn(&str) -> Result<u64, quantity::BadQuantity>| {
        allocatable(node, k).map_or(0, |q| f(&q.0).unwrap_or(0))
    };
    let (mut cpu, mut mem, mut gpu, mut shared) = (
        q("cpu", quantity::cpu_milli),
        q("memory", quantity::units),
        q(NVIDIA_GPU, quantity::units),
        q(NVIDIA_GPU_SHARED, quantity::units),
    );
    let others: Vec<&Pod> = pods
        .iter()
        .filter(|p| others_holding(p, name, agent))
        .collect();
    for pod in &others {
        let (c, m, g, s) = pod_requests(pod);
        cpu = cpu.saturating_sub(c);
        mem = mem.saturating_sub(m);
        gpu = gpu.saturating_sub(g);
        shared = shared.saturating_sub(s);
    }
    let mut accel = BTreeMap::new();
    // MIG instances (the device plugin's mixed strategy): one slot per profile, whole ones.
    let mig = node
        .status
        .as_ref()
        .and_then(|s| s.allocatable.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|(k, q)| Some((k, mig_slot(k)?, quantity::units(&q.0).ok()?)));
    for (resource, slot, all) in mig {
        let taken = others
            .iter()
            .map(|p| pod_request(p, resource, quantity::units))
            .fold(0u64, u64::saturating_add);
        let left = all.saturating_sub(taken);
        if left > 0 {
            accel.insert(slot, left.saturating_mul(1000));
        }
    }
    // Time-sliced GPUs are cuda.shares (slices / replicas GPUs); whole ones cuda.device.
    let sharing = gpu_sharing(node);
    let slices = match sharing.as_ref().map(|s| s.resource.as_str()) {
        Some(NVIDIA_GPU_SHARED) => shared,
        Some(_) => std::mem::take(&mut gpu),
        None => 0,
    };
    if let Some(s) = &sharing
        && slices > 0
        && s.quantum_milli().is_some()
    {
        accel.insert(
            CUDA_SHARES.to_string(),
            slices.saturating_mul(1000) / s.replicas,
        );
    }
    if gpu > 0 {
        accel.insert(CUDA_DEVICE.to_string(), gpu.saturating_mul(1000));
    }
    ResourceSlots {
        cpu_milli: cpu,
        mem,
        accel,
    }
}

/// The images the node reports holding, by their tagged names (the API gives no labels).
pub fn images(node: &Node) -> Vec<ImageInfo> {
    let mut out = Vec::new();
    for img in node
        .status
        .as_ref()
        .and_then(|s| s.images.as_ref())
        .into_iter()
        .flatten()
    {
        let names = img.names.as_deref().unwrap_or_default();
        let digest = names
            .iter()
            .find_map(|n| n.split_once('@').map(|(_, d)| d.to_string()))
            .unwrap_or_default();
        for n in names
            .iter()
            .filter(|n| !n.contains('@') && !n.ends_with(":<none>"))
        {
            out.push(ImageInfo {
                name: n.clone(),
                digest: digest.clone(),
                labels: BTreeMap::new(),
                size_bytes: img
                    .size_bytes
                    .and_then(|s| u64::try_from(s).ok())
                    .unwrap_or(0),
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out.dedup_by(|a, b| a.name == b.name);
    out
}

#[cfg(test)]
#[path = "capacity_tests.rs"]
mod tests;

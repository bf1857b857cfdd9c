//! GPUs on a Kubernetes node as bai's slots: whole GPUs (`nvidia.com/gpu`) are
//! `cuda.device`; GPUs that NVIDIA's device plugin shares ([`GpuSharing`]: time-slicing or
//! MPS) are `cuda.shares`, one slice being `1/replicas` of a GPU. Pure.

use super::quantity;
use bai_core::accel::DeviceInfo;
use bai_core::agent::KernelMost;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use std::collections::BTreeMap;

/// Kubernetes' resource for whole NVIDIA GPUs (NVIDIA's device plugin).
pub const NVIDIA_GPU: &str = "nvidia.com/gpu";
/// bai's slot of whole GPUs (milli-units: 1000 a GPU).
pub const CUDA_DEVICE: &str = "cuda.device";
/// bai's slot of fractions of GPUs.
pub const CUDA_SHARES: &str = "cuda.shares";
/// The resource NVIDIA's device plugin advertises for time-sliced GPUs when it renames them
/// (`renameByDefault: true`).
pub const NVIDIA_GPU_SHARED: &str = "nvidia.com/gpu.shared";
/// NVIDIA's device plugin under the `mixed` MIG strategy: one resource per MIG profile,
/// `nvidia.com/mig-<profile>` (`nvidia.com/mig-1g.10gb`).
pub const NVIDIA_MIG_PREFIX: &str = "nvidia.com/mig-";
/// GPU feature discovery's label: how many slices each GPU of the node is cut into.
pub const LABEL_GPU_REPLICAS: &str = "nvidia.com/gpu.replicas";
/// NVIDIA's label: how the node's GPUs are shared (`none`, `time-slicing` or `mps`).
pub const LABEL_GPU_SHARING_STRATEGY: &str = "nvidia.com/gpu.sharing-strategy";
/// GPU feature discovery's labels: the node's physical GPUs, their model and memory (MiB).
const LABEL_GPU_COUNT: &str = "nvidia.com/gpu.count";
const LABEL_GPU_PRODUCT: &str = "nvidia.com/gpu.product";
const LABEL_GPU_MEMORY: &str = "nvidia.com/gpu.memory";

/// A node's GPUs shared by NVIDIA's device plugin: `resource` counts slices, `replicas` of
/// them per GPU. bai hands them out as `cuda.shares`: one slice is `1/replicas` of a GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuSharing {
    pub resource: String,
    pub replicas: u64,
    /// Shared with MPS (the label says `mps`), not time-sliced: each slice has its own
    /// `1/replicas` of the GPU's memory and compute, and the plugin gives a container one
    /// slice at most (it refuses a pod asking for more at admission).
    pub mps: bool,
}

impl GpuSharing {
    /// One slice in milli-GPUs (the step `cuda.shares` is asked in), if it is whole.
    pub fn quantum_milli(&self) -> Option<u64> {
        1000u64
            .is_multiple_of(self.replicas)
            .then(|| 1000 / self.replicas)
    }

    /// The slices a request of `milli` GPUs takes, if it is a whole number of them.
    pub fn slices(&self, milli: u64) -> Option<u64> {
        let q = self.quantum_milli()?;
        milli.is_multiple_of(q).then(|| milli / q)
    }

    /// The most slices one kernel's pod may ask for: one under MPS, else any number.
    pub fn most_slices(&self) -> Option<u64> {
        self.mps.then_some(1)
    }

    /// The most of `cuda.shares` one kernel may have on the node, for the manager to place
    /// by ([`bai_core::agent::AgentInfo::kernel_most`]): one slice under MPS, else no limit.
    pub fn kernel_most(&self) -> BTreeMap<String, KernelMost> {
        match (self.most_slices(), self.quantum_milli()) {
            (Some(most), Some(q)) => BTreeMap::from([(
                CUDA_SHARES.to_string(),
                KernelMost {
                    amount: most * q,
                    why: format!(
                        "its GPUs are {} {} ways, which gives a kernel {} at most",
                        self.how(),
                        self.replicas,
                        if most == 1 {
                            "one slice".to_string()
                        } else {
                            format!("{most} slices")
                        }
                    ),
                },
            )]),
            _ => BTreeMap::new(),
        }
    }

    /// How the GPUs are shared, in words.
    pub fn how(&self) -> &'static str {
        if self.mps {
            "shared with MPS"
        } else {
            "time-sliced"
        }
    }
}

/// bai's slot for the MIG instances Kubernetes offers as `resource`, by Backend.AI's name
/// (`nvidia.com/mig-1g.10gb` → `cuda.device:1g.10gb-mig`); None for any other resource.
pub fn mig_slot(resource: &str) -> Option<String> {
    let profile = resource.strip_prefix(NVIDIA_MIG_PREFIX)?;
    let fine = !profile.is_empty()
        && profile
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    fine.then(|| format!("cuda.device:{profile}-mig"))
}

/// The Kubernetes resource of a MIG slot ([`mig_slot`] backwards).
pub fn mig_resource(slot: &str) -> Option<String> {
    let profile = slot.strip_prefix("cuda.device:")?.strip_suffix("-mig")?;
    let resource = format!("{NVIDIA_MIG_PREFIX}{profile}");
    (mig_slot(&resource).as_deref() == Some(slot)).then_some(resource)
}

/// How the node shares its GPUs, if it does: GPU feature discovery says
/// `nvidia.com/gpu.replicas` ≥ 2 (NVIDIA's time-slicing, or MPS where
/// `nvidia.com/gpu.sharing-strategy` says `mps`), and the node advertises the slices as
/// `nvidia.com/gpu.shared` or, not renamed, as `nvidia.com/gpu`. bai hands them
/// out only where a slice is a whole number of thousandths of a GPU (2, 4, 5, 8, 10 … ways:
/// [`GpuSharing::quantum_milli`]); other counts are offered as nothing.
pub fn gpu_sharing(node: &Node) -> Option<GpuSharing> {
    let labels = node.metadata.labels.as_ref()?;
    let replicas: u64 = labels.get(LABEL_GPU_REPLICAS)?.trim().parse().ok()?;
    if replicas < 2 {
        return None;
    }
    let resource = [NVIDIA_GPU_SHARED, NVIDIA_GPU]
        .into_iter()
        .find(|r| allocatable(node, r).is_some())?;
    let mps = labels
        .get(LABEL_GPU_SHARING_STRATEGY)
        .is_some_and(|v| v.trim() == "mps");
    Some(GpuSharing {
        resource: resource.to_string(),
        replicas,
        mps,
    })
}

/// The node's GPUs, shared as `sharing` says ([`gpu_sharing`]), as devices of the
/// `cuda.shares` slot (model and memory from GPU feature discovery's labels where it set
/// them), each handed out in slices: the step the manager checks a request against. Whole
/// GPUs are not listed (Kubernetes' device plugin picks them).
pub fn devices(node: &Node, sharing: &GpuSharing) -> Vec<DeviceInfo> {
    let Some(quantum) = sharing.quantum_milli() else {
        return Vec::new();
    };
    let label = |k: &str| {
        node.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(k))
            .map(|v| v.trim().to_string())
    };
    let slices = allocatable(node, &sharing.resource)
        .and_then(|q| quantity::units(&q.0).ok())
        .unwrap_or(0);
    let count = label(LABEL_GPU_COUNT)
        .and_then(|c| c.parse::<u64>().ok())
        .unwrap_or(slices / sharing.replicas);
    let memory = label(LABEL_GPU_MEMORY)
        .and_then(|m| m.parse::<u64>().ok())
        .map_or(0, |mib| mib << 20);
    (0..count)
        .map(|i| DeviceInfo {
            slot: CUDA_SHARES.into(),
            id: i.to_string(),
            plugin: "kubernetes".into(),
            model: label(LABEL_GPU_PRODUCT)
                .unwrap_or_else(|| format!("NVIDIA GPU ({})", sharing.how())),
            memory,
            numa_node: None,
            capacity_milli: 1000,
            quantum_milli: quantum,
        })
        .collect()
}

fn allocatable<'a>(node: &'a Node, key: &str) -> Option<&'a Quantity> {
    node.status.as_ref()?.allocatable.as_ref()?.get(key)
}

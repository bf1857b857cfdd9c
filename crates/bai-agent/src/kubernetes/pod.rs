//! A kernel as a Pod: the pure mapping from a [`KernelSpec`] (and where this agent keeps the
//! runner and the kernel's directories on the node) to the Pod the API server is asked to
//! make. No I/O; everything here is unit-tested.
//!
//! - requests = limits (Guaranteed QoS): `cpu` in millicores, `mem` in bytes, `cuda.device`
//!   as whole `nvidia.com/gpu`; `cuda.shares` and other accelerator slots are refused;
//! - `/dev/shm` a memory-backed emptyDir of the session's `shmem`;
//! - the runner, its socket directory and the scratch home are hostPath volumes at the same
//!   places as in a Docker kernel (`/opt/bai/bin/krunner`, `/opt/bai/run`, `/home/work`);
//! - uid/gid [`WORK_UID`], not privileged, no privilege escalation, every capability dropped,
//!   no service account token, no service links;
//! - the pause container as PID 1 (`shareProcessNamespace`), which reaps orphans as the
//!   engine's init does for a Docker kernel;
//! - a required node affinity to the node bai chose (never `nodeName`: a bound pod that no
//!   longer fits is rejected by the kubelet instead of waiting).
//! - init containers ([`super::init`]): a detached pod's runner copied in, and the kernel's
//!   account files made in its image where it may lack the kernel's user.

use super::gpus::GpuSharing;
use super::init;
use super::labels::{self, KernelLabels};
use crate::kernel_files::WORK_UID;
use bai_core::agent::KernelSpec;
use k8s_openapi::api::core::v1::{
    Affinity, Capabilities, Container, EmptyDirVolumeSource, EnvVar, HostPathVolumeSource,
    NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodSecurityContext,
    PodSpec, ResourceRequirements, SecretVolumeSource, SecurityContext, Toleration, Volume,
    VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

pub use super::gpus::{CUDA_DEVICE, CUDA_SHARES, NVIDIA_GPU};
pub use super::layout::{CONTAINER, INIT_CONTAINER, KRUNNER_INSIDE};
use super::layout::{RUN_INSIDE, mount};
/// The file in a kernel's run directory that opens its gate (written by
/// `egress::node` once the rules are in; [`crate::krunner_proto::GATE_VAR`] names it).
pub const GATE_FILE: &str = "egress-ready";
/// Where a detached kernel's Secret is mounted (krunner reads its manifest there).
pub const SECRET_INSIDE: &str = "/opt/bai/secret";
/// Variables that get the kernel's core count (as on Docker).
const THREAD_VARS: [&str; 4] = [
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
];

/// Where the pod goes and what of a disk it uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub namespace: String,
    pub agent_id: String,
    /// The node bai's scheduler chose.
    pub node: String,
    /// How the node's GPUs are time-sliced, if they are (`cuda.shares` become slices).
    pub gpu_sharing: Option<GpuSharing>,
    /// Where krunner listens on the pod network besides its socket (`BAI_KRUNNER_LISTEN`),
    /// for an agent that reaches it there ([`super::reach`]).
    pub runner_listen: Option<String>,
    /// The kernel's things: in directories on the node, or in the pod alone.
    pub disk: Disk,
    /// Whether the pod makes the kernel's account files in the kernel's image (the init
    /// container `accounts`) and mounts them over the image's: where the agent does not know
    /// that the image names the kernel's user ([`super::accounts`]).
    pub accounts: bool,
}

/// Where a kernel's runner, home and files are: on the agent's own node, or in the pod alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disk {
    OnNode(OnNode),
    Detached(Detached),
}

/// A pod whose runner, home and files are directories and files of the agent's node
/// (`--runner-reach socket`), mounted as hostPaths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnNode {
    /// The runner binary on the node.
    pub krunner: String,
    /// The kernel's socket directory on the node (`/opt/bai/run` inside).
    pub run_dir: String,
    /// The kernel's scratch home on the node (`/home/work` inside).
    pub work_dir: String,
    /// Whether mounts made under `work_dir` on the node later show inside
    /// (`mountPropagation: HostToContainer`): a pool pod's, given its data folders at the
    /// claim ([`crate::pool_folders`]).
    pub home_propagates: bool,
    /// Whether the kernel waits for the agent's egress rules in its network namespace
    /// (`--network-policies node`): its runner starts nothing until the agent writes
    /// [`GATE_FILE`] into the run directory.
    pub egress_gate: bool,
    /// Files mounted read-only, on the node → inside: every kernel's `/etc` files
    /// ([`crate::kernel_files::etc`]), and a cluster session's keys and host table
    /// ([`crate::kernel_files::cluster`]).
    pub files: Vec<(String, String)>,
}

impl Placement {
    /// The detached pod's part, if it is one.
    pub fn detached(&self) -> Option<&Detached> {
        match &self.disk {
            Disk::Detached(d) => Some(d),
            Disk::OnNode(_) => None,
        }
    }
}

/// A pod that needs nothing of its node's disk (`--runner-reach network`): the runner is
/// copied in by an init container of `runner_image` into an emptyDir, the home and the run
/// directory are emptyDirs, and what the agent hands the kernel is its Secret
/// (`super::secret`), mounted at [`SECRET_INSIDE`] and, key by key, at `mounts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detached {
    /// An image with `/usr/local/bin/bai-krunner` (the agent's own).
    pub runner_image: String,
    /// The kernel's Secret.
    pub secret: String,
    /// The Secret's keys mounted read-only, key → path inside.
    pub mounts: Vec<(String, String)>,
    /// Whether the kernel's `/etc/hosts` is the session's host table (`hosts` in its run
    /// directory, made by the init container, written by the runner).
    pub hosts: bool,
}

/// Why a kernel cannot be a pod.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PodError {
    #[error(
        "cuda.shares (fractional GPUs) cannot run on this Kubernetes node: its GPUs are whole \
         (nvidia.com/gpu) and not time-sliced (NVIDIA's device plugin with \
         nvidia.com/gpu.replicas); ask for cuda.device instead"
    )]
    SharesUnsupported,
    #[error(
        "cuda.shares={value} is not a whole number of GPU slices on this node: its GPUs are \
         {how} {replicas} ways, ask for a multiple of {quantum}"
    )]
    SharesStep {
        value: String,
        how: &'static str,
        replicas: u64,
        quantum: String,
    },
    #[error(
        "cuda.shares={value} is more than one kernel may have on this node: its GPUs are \
         shared with MPS {replicas} ways, which gives a kernel one slice at most; ask for \
         cuda.shares={quantum}"
    )]
    SharesPastOneSlice {
        value: String,
        replicas: u64,
        quantum: String,
    },
    #[error(
        "cuda.device cannot run on this node: its GPUs are {how} {replicas} ways \
         (nvidia.com/gpu counts slices); ask for cuda.shares instead"
    )]
    GpusSliced { how: &'static str, replicas: u64 },
    #[error("{slot}={value} is not a whole number of GPUs; Kubernetes gives whole GPUs only")]
    FractionalGpu { slot: String, value: String },
    #[error("the accelerator slot {0} is not supported on the Kubernetes backend")]
    UnsupportedSlot(String),
    #[error("the kernel asks for no memory or no CPU; a pod needs both")]
    NoResources,
    #[error("the mount {name} must have absolute paths: {detail}")]
    BadMount { name: String, detail: String },
}

/// The pod's name for a kernel.
pub fn pod_name(kernel_id: uuid::Uuid) -> String {
    format!("bai-k-{kernel_id}")
}

/// The Pod for `spec` on `at.node`.
pub fn kernel_pod(spec: &KernelSpec, at: &Placement) -> Result<Pod, PodError> {
    let cluster = spec.cluster_info();
    // A multi-node session's overlay (`ClusterInfo::overlay`: a subnet, fixed addresses and
    // VXLAN peers) is the Docker backend's: pods are on the cluster's own pod network, and
    // their addresses go into the session's host table as they run (`hosts.rs`).
    let resources = resources(spec, at.gpu_sharing.as_ref())?;
    let (mut volumes, mut mounts) = volumes(spec, at)?;
    if at.accounts {
        let (volume, files) = init::accounts_volume();
        volumes.push(volume);
        mounts.extend(files);
    }
    let meta = ObjectMeta {
        name: Some(pod_name(spec.kernel_id)),
        namespace: Some(at.namespace.clone()),
        labels: Some(
            KernelLabels {
                agent: &at.agent_id,
                kernel: spec.kernel_id,
                session: spec.session_id,
            }
            .to_map(),
        ),
        annotations: Some(BTreeMap::from([(
            labels::ANNOTATION_SESSION_NAME.to_string(),
            spec.session_name.clone(),
        )])),
        ..Default::default()
    };
    let container = Container {
        name: CONTAINER.into(),
        image: Some(spec.image.clone()),
        image_pull_policy: Some("IfNotPresent".into()),
        command: Some(vec![KRUNNER_INSIDE.into()]),
        env: Some(with_gate(
            with_listen(environment(spec), at.runner_listen.as_deref()),
            matches!(&at.disk, Disk::OnNode(n) if n.egress_gate),
        )),
        working_dir: Some("/home/work".into()),
        resources: Some(resources),
        security_context: Some(SecurityContext {
            privileged: Some(false),
            allow_privilege_escalation: Some(false),
            capabilities: Some(Capabilities {
                drop: Some(vec!["ALL".into()]),
                add: None,
            }),
            run_as_user: Some(WORK_UID.into()),
            run_as_group: Some(WORK_UID.into()),
            ..Default::default()
        }),
        volume_mounts: Some(mounts),
        ..Default::default()
    };
    // The runner first (a detached pod's), then the accounts, which run it.
    let init: Vec<Container> = [
        at.detached()
            .map(|d| init::runner(&d.runner_image, &container)),
        at.accounts.then(|| init::accounts(&container)),
    ]
    .into_iter()
    .flatten()
    .collect();
    let spec = PodSpec {
        init_containers: (!init.is_empty()).then_some(init),
        containers: vec![container],
        restart_policy: Some("Never".into()),
        // Deleted at once: a kernel's end is bai's decision, and the object goes in ~2 s.
        termination_grace_period_seconds: Some(0),
        automount_service_account_token: Some(false),
        enable_service_links: Some(false),
        tolerations: Some(node_down_tolerations()),
        share_process_namespace: Some(true),
        hostname: Some(cluster.place.hostname.clone()),
        security_context: Some(PodSecurityContext {
            run_as_user: Some(WORK_UID.into()),
            run_as_group: Some(WORK_UID.into()),
            run_as_non_root: Some(true),
            // The Secret's files readable by the kernel's user (group), as the runner reads
            // them.
            fs_group: at.detached().map(|_| WORK_UID.into()),
            ..Default::default()
        }),
        affinity: Some(node_affinity(&at.node)),
        volumes: Some(volumes),
        ..Default::default()
    };
    Ok(Pod {
        metadata: meta,
        spec: Some(spec),
        status: None,
    })
}

/// requests = limits, from the slots (`cuda.shares` as slices of `sharing`'s GPUs).
fn resources(
    spec: &KernelSpec,
    sharing: Option<&GpuSharing>,
) -> Result<ResourceRequirements, PodError> {
    let slots = &spec.slots;
    if slots.cpu_milli == 0 || slots.mem == 0 {
        return Err(PodError::NoResources);
    }
    let mut q = BTreeMap::from([
        ("cpu".to_string(), Quantity(format!("{}m", slots.cpu_milli))),
        ("memory".to_string(), Quantity(slots.mem.to_string())),
    ]);
    for (slot, &milli) in &slots.accel {
        match slot.as_str() {
            _ if milli == 0 => {}
            CUDA_SHARES => {
                let Some(s) = sharing else {
                    return Err(PodError::SharesUnsupported);
                };
                let value = format!("{}", milli as f64 / 1000.0);
                let quantum = format!("{}", 1.0 / s.replicas as f64);
                let Some(k) = s.slices(milli) else {
                    return Err(PodError::SharesStep {
                        value,
                        how: s.how(),
                        replicas: s.replicas,
                        quantum,
                    });
                };
                if s.most_slices().is_some_and(|most| k > most) {
                    return Err(PodError::SharesPastOneSlice {
                        value,
                        replicas: s.replicas,
                        quantum,
                    });
                }
                q.insert(s.resource.clone(), Quantity(k.to_string()));
            }
            CUDA_DEVICE => {
                if let Some(s) = sharing.filter(|s| s.resource == NVIDIA_GPU) {
                    return Err(PodError::GpusSliced {
                        how: s.how(),
                        replicas: s.replicas,
                    });
                }
                q.insert(NVIDIA_GPU.into(), whole(slot, milli)?);
            }
            mig if bai_core::accel::is_mig(mig) => {
                let Some(resource) = super::gpus::mig_resource(mig) else {
                    return Err(PodError::UnsupportedSlot(mig.to_string()));
                };
                q.insert(resource, whole(slot, milli)?);
            }
            other => return Err(PodError::UnsupportedSlot(other.to_string())),
        }
    }
    Ok(ResourceRequirements {
        requests: Some(q.clone()),
        limits: Some(q),
        ..Default::default()
    })
}

/// `milli` of a slot of whole devices as the count Kubernetes takes; a fraction is refused.
fn whole(slot: &str, milli: u64) -> Result<Quantity, PodError> {
    if !milli.is_multiple_of(1000) {
        return Err(PodError::FractionalGpu {
            slot: slot.to_string(),
            value: format!("{}", milli as f64 / 1000.0),
        });
    }
    Ok(Quantity((milli / 1000).to_string()))
}

fn node_affinity(node: &str) -> Affinity {
    Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm {
                    match_fields: Some(vec![NodeSelectorRequirement {
                        key: "metadata.name".into(),
                        operator: "In".into(),
                        values: Some(vec![node.to_string()]),
                    }]),
                    match_expressions: None,
                }],
            }),
            preferred_during_scheduling_ignored_during_execution: None,
        }),
        ..Default::default()
    }
}

fn host_path(name: &str, path: &str, kind: &str) -> Volume {
    Volume {
        name: name.into(),
        host_path: Some(HostPathVolumeSource {
            path: path.into(),
            type_: Some(kind.into()),
        }),
        ..Default::default()
    }
}

fn shm(spec: &KernelSpec) -> Volume {
    Volume {
        name: "shm".into(),
        empty_dir: Some(EmptyDirVolumeSource {
            medium: Some("Memory".into()),
            size_limit: (spec.shmem > 0).then(|| Quantity(spec.shmem.to_string())),
        }),
        ..Default::default()
    }
}

fn empty_dir(name: &str) -> Volume {
    Volume {
        name: name.into(),
        empty_dir: Some(EmptyDirVolumeSource::default()),
        ..Default::default()
    }
}

fn volumes(spec: &KernelSpec, at: &Placement) -> Result<(Vec<Volume>, Vec<VolumeMount>), PodError> {
    let (mut volumes, mut mounts) = match &at.disk {
        Disk::OnNode(n) => on_node(n),
        Disk::Detached(d) => detached(d),
    };
    volumes.push(shm(spec));
    mounts.push(mount("shm", "/dev/shm", false));
    // Data folders: a storage host is mounted at the same path on every node.
    for (i, m) in spec.mounts.iter().enumerate() {
        if !m.host_path.starts_with('/') || !m.kernel_path.starts_with('/') {
            return Err(PodError::BadMount {
                name: m.name.clone(),
                detail: format!("{} → {}", m.host_path, m.kernel_path),
            });
        }
        let name = format!("vfolder-{i}");
        volumes.push(host_path(&name, &m.host_path, "Directory"));
        mounts.push(mount(&name, &m.kernel_path, m.read_only));
    }
    Ok((volumes, mounts))
}

/// The runner, its directory and the home from the agent's own node (hostPaths).
fn on_node(at: &OnNode) -> (Vec<Volume>, Vec<VolumeMount>) {
    let mut volumes = vec![
        host_path("krunner", &at.krunner, "File"),
        host_path("run", &at.run_dir, "Directory"),
        host_path("work", &at.work_dir, "Directory"),
    ];
    let mut mounts = vec![
        mount("krunner", KRUNNER_INSIDE, true),
        mount("run", RUN_INSIDE, false),
        VolumeMount {
            mount_propagation: at.home_propagates.then(|| "HostToContainer".into()),
            ..mount("work", "/home/work", false)
        },
    ];
    for (i, (host, inside)) in at.files.iter().enumerate() {
        let name = format!("file-{i}");
        volumes.push(host_path(&name, host, "File"));
        mounts.push(mount(&name, inside, true));
    }
    (volumes, mounts)
}

/// Nothing of the node: emptyDirs and the kernel's Secret.
fn detached(d: &Detached) -> (Vec<Volume>, Vec<VolumeMount>) {
    let volumes = vec![
        empty_dir("krunner"),
        empty_dir("run"),
        empty_dir("work"),
        Volume {
            name: "secret".into(),
            secret: Some(SecretVolumeSource {
                secret_name: Some(d.secret.clone()),
                default_mode: Some(0o440),
                ..Default::default()
            }),
            ..Default::default()
        },
    ];
    let mut mounts = vec![
        mount("krunner", "/opt/bai/bin", true),
        mount("run", RUN_INSIDE, false),
        mount("work", "/home/work", false),
        mount("secret", SECRET_INSIDE, true),
    ];
    for (key, inside) in &d.mounts {
        mounts.push(VolumeMount {
            sub_path: Some(key.clone()),
            ..mount("secret", inside, true)
        });
    }
    if d.hosts {
        mounts.push(VolumeMount {
            sub_path: Some(crate::kernel_files::cluster::HOSTS_FILE.into()),
            ..mount("run", "/etc/hosts", true)
        });
    }
    (volumes, mounts)
}

/// The kernel's environment, as a Docker kernel's (less what the node's devices add).
pub(crate) fn environment(spec: &KernelSpec) -> Vec<EnvVar> {
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    let cores = spec.slots.cpu_milli.div_ceil(1000).max(1).to_string();
    for var in THREAD_VARS {
        env.insert(var.into(), cores.clone());
    }
    env.insert("HOME".into(), "/home/work".into());
    env.insert("LANG".into(), "C.UTF-8".into());
    env.extend(spec.environ.iter().map(|(k, v)| (k.clone(), v.clone())));
    crate::kernel_env::add_session_vars(&mut env, spec);
    env.into_iter()
        .map(|(name, value)| EnvVar {
            name,
            value: Some(value),
            value_from: None,
        })
        .collect()
}

/// `env` with the gate's variable where the kernel waits for the agent's egress rules (and
/// never one of the session's own by that name).
fn with_gate(mut env: Vec<EnvVar>, gated: bool) -> Vec<EnvVar> {
    use crate::krunner_proto::GATE_VAR;
    env.retain(|e| e.name != GATE_VAR);
    if gated {
        env.push(EnvVar {
            name: GATE_VAR.into(),
            value: Some(format!("{RUN_INSIDE}/{GATE_FILE}")),
            value_from: None,
        });
    }
    env
}

/// The environment and, where the agent reaches the runner over the pod network, where
/// krunner listens there (the agent's value, whatever the session's variables say).
fn with_listen(mut env: Vec<EnvVar>, listen: Option<&str>) -> Vec<EnvVar> {
    use crate::krunner_proto::LISTEN_VAR;
    env.retain(|e| e.name != LISTEN_VAR);
    if let Some(addr) = listen {
        env.push(EnvVar {
            name: LISTEN_VAR.into(),
            value: Some(addr.into()),
            value_from: None,
        });
    }
    env
}

/// A kernel stays bound to a NotReady or unreachable node for as long as bai wants it:
/// Kubernetes would evict its pod after 5 minutes (the default toleration), while bai handles
/// the node as a lost agent (its sessions degraded, ended after the manager's gone time, or
/// resumed when the node is back).
fn node_down_tolerations() -> Vec<Toleration> {
    [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ]
    .into_iter()
    .map(|key| Toleration {
        key: Some(key.into()),
        operator: Some("Exists".into()),
        effect: Some("NoExecute".into()),
        ..Default::default()
    })
    .collect()
}

#[cfg(test)]
#[path = "pod_tests.rs"]
pub(super) mod tests;

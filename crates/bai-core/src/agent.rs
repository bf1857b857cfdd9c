//! The agent RPC interface. The manager reaches every agent only through [`AgentRpc`],
//! also inside `baid up`, so the single-node and the multi-node path are the same code.
//! All request and reply types are plain serde data, ready for any transport.

use async_trait::async_trait;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use uuid::Uuid;

use crate::resources::ResourceSlots;
use crate::status::SessionType;

/// What an agent is and has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentInfo {
    pub id: String,
    pub region: String,
    pub scaling_group: String,
    pub architecture: String,
    /// Total capacity of the node (detected cores and memory, minus what is reserved).
    pub capacity: ResourceSlots,
    pub images: Vec<ImageInfo>,
    pub version: String,
    /// Accelerator devices (their slots' totals are in `capacity.accel`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<crate::accel::DeviceInfo>,
    /// Storage hosts a remote agent declares: name → the path where it mounts them (the same
    /// path as on the manager, or the manager does not count it).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub storage_hosts: BTreeMap<String, String>,
    /// The cluster's image registry as this agent reaches it: an image the agent lacks is
    /// pulled from there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<String>,
    /// Why this agent cannot enforce egress policies (none: it can). Such an agent takes
    /// only sessions of groups whose policy is `open`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress_error: Option<String>,
    /// Why the agent offers nothing now although it is there (its Kubernetes node is
    /// cordoned, NotReady or gone); none: it offers its capacity. Nothing new is placed on
    /// it meanwhile, as on a drained one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withheld: Option<String>,
    /// The agent is there but its kernels cannot be reached (its Kubernetes node is NotReady
    /// or gone): its sessions are handled as a lost agent's (degraded, ended after the
    /// agent's gone time, resumed if the node comes back first).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kernels_unreachable: bool,
    /// The most the agent could ever offer, where other pods may hold part of it for now
    /// (a Kubernetes node's allocatable; `capacity` is what is left of it); none: its
    /// capacity. A request larger than this is refused at once; one that fits it waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<ResourceSlots>,
    /// The most one kernel may have of a slot here, where the agent cannot give one kernel
    /// all it has (a Kubernetes node whose GPUs are shared with MPS gives a kernel one slice):
    /// slot → its limit. The scheduler places no kernel asking for more on this agent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub kernel_most: BTreeMap<String, KernelMost>,
}

impl AgentInfo {
    /// The most the agent could ever offer ([`AgentInfo::size`], else its capacity).
    pub fn size(&self) -> ResourceSlots {
        self.size.clone().unwrap_or_else(|| self.capacity.clone())
    }

    /// The first slot of which one kernel asking for `kernel` would get more than this
    /// agent gives a kernel ([`AgentInfo::kernel_most`]), with its limit; none: it may.
    pub fn over_kernel_most(&self, kernel: &ResourceSlots) -> Option<KernelOver<'_>> {
        over_kernel_most(&self.kernel_most, kernel)
    }
}

/// The most one kernel may have of a slot on an agent ([`AgentInfo::kernel_most`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelMost {
    /// In the slot's milli-units (250: a quarter of a GPU).
    pub amount: u64,
    /// Why, in words (e.g. `its GPUs are shared with MPS 4 ways, which gives a kernel one
    /// slice at most`).
    pub why: String,
}

/// A kernel's request over an agent's [`KernelMost`]: the slot, what the kernel asks, and
/// the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelOver<'a> {
    pub slot: &'a str,
    pub asked: u64,
    pub most: &'a KernelMost,
}

impl KernelOver<'_> {
    /// `a kernel may have at most cuda.shares=0.25 on AGENT (WHY)`.
    pub fn on(&self, agent: &str) -> String {
        format!(
            "a kernel may have at most {}={} on {agent} ({})",
            self.slot,
            crate::resources::format_cpu(self.most.amount),
            self.most.why
        )
    }
}

/// The first slot of `most` that `kernel` asks more of, if any.
pub fn over_kernel_most<'a>(
    most: &'a BTreeMap<String, KernelMost>,
    kernel: &ResourceSlots,
) -> Option<KernelOver<'a>> {
    most.iter().find_map(|(slot, m)| {
        let asked = kernel.accel.get(slot).copied().unwrap_or(0);
        (asked > m.amount).then_some(KernelOver {
            slot,
            asked,
            most: m,
        })
    })
}

/// A kernel image the agent can run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageInfo {
    /// Canonical reference, e.g. `bai/python:3.11-bookworm`.
    pub name: String,
    pub digest: String,
    pub labels: BTreeMap<String, String>,
    pub size_bytes: u64,
}

/// A kernel's container committed as a new image (session commit, convert to image).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommitRequest {
    pub kernel_id: Uuid,
    /// The new image's reference, `repository:tag`.
    pub reference: String,
    /// The image the kernel started from: the new image's config (environment, command, user,
    /// working directory, labels) is the base image's, never the container's, so nothing of
    /// the kernel's own (its id, its keys, its resource labels) is baked in.
    pub base_image: String,
    /// Labels added to (or replacing) the base image's labels.
    pub labels: BTreeMap<String, String>,
    /// Save the image as a gzip'ed `docker save` tarball at this path, relative to the agent's
    /// commit directory, and remove the image afterwards (`POST /session/{name}/commit`).
    #[serde(default)]
    pub tarball: Option<String>,
}

/// Everything the agent needs to start one kernel (container).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelSpec {
    pub kernel_id: Uuid,
    pub session_id: Uuid,
    pub session_name: String,
    pub session_type: SessionType,
    pub image: String,
    pub slots: ResourceSlots,
    pub shmem: u64,
    pub environ: BTreeMap<String, String>,
    /// Batch sessions: the command run when the kernel is ready; its exit ends the session.
    pub startup_command: Option<String>,
    /// Shell script run once before the kernel is ready.
    pub bootstrap_script: Option<String>,
    pub owner_access_key: String,
    /// Data folders to bind-mount.
    #[serde(default)]
    pub mounts: Vec<Mount>,
    /// Its place in a cluster session (None: the one kernel of its session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<crate::cluster::ClusterInfo>,
    /// Where the kernel may open connections (its session's policy, enforced on its bridge).
    #[serde(default)]
    pub egress: crate::egress::EgressSpec,
    /// The owner's dotfiles, written into the kernel's home before it starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dotfiles: Vec<crate::dotfile::Dotfile>,
}

impl KernelSpec {
    /// The kernel's place in its session's cluster (a session of one kernel: `main1`).
    pub fn cluster_info(&self) -> crate::cluster::ClusterInfo {
        self.cluster
            .clone()
            .unwrap_or_else(|| crate::cluster::ClusterInfo::single(self.kernel_id))
    }
}

/// A data folder bind-mounted into a kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mount {
    pub vfolder_id: Uuid,
    pub name: String,
    /// Absolute path of the folder on the agent's host.
    pub host_path: String,
    /// Absolute path inside the container (under /home/work).
    pub kernel_path: String,
    pub read_only: bool,
}

/// Reply to a successful `create_kernel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelCreated {
    pub kernel_id: Uuid,
    pub container_id: String,
    /// CPU set actually given (for display), if pinned.
    pub cpuset: Option<String>,
    /// Accelerator devices given: device id → milli-units of it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub devices: BTreeMap<String, u64>,
    /// The kernel's own address where the agent learns it only once the kernel runs (a pod's
    /// IP); `None` where it was known beforehand (a multi-node session's overlay address) or
    /// does not matter (a single kernel, a single-node cluster on its bridge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<std::net::IpAddr>,
}

/// Why and how a kernel ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelExit {
    pub kernel_id: Uuid,
    pub exit_code: Option<i32>,
    pub oom_killed: bool,
    /// Container logs collected before the container was removed (tail, bounded).
    pub logs: String,
}

/// Events an agent reports on its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum AgentEvent {
    /// The kernel's main process ended (batch finished, crash, out of memory).
    KernelExited(KernelExit),
    /// How far a pull of `image` from the registry is: bytes of its layers downloaded of
    /// those known so far (at most about one a second per pull).
    ImagePull {
        image: String,
        current: u64,
        total: u64,
    },
    /// The agent's kernel images changed (an image built, loaded or removed on its node
    /// outside bai): the whole new list.
    ImagesChanged { images: Vec<ImageInfo> },
    /// What the agent offers changed while it runs (another tenant's pods on its
    /// Kubernetes node came or went; the node was cordoned, became NotReady or went): the
    /// whole new capacity, and why nothing is offered now (none: the capacity is offered).
    OfferChanged {
        capacity: ResourceSlots,
        size: Option<ResourceSlots>,
        withheld: Option<String>,
        /// Its kernels cannot be reached now ([`AgentInfo::kernels_unreachable`]).
        #[serde(default)]
        kernels_unreachable: bool,
        /// The most one kernel may have of a slot now ([`AgentInfo::kernel_most`]).
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        kernel_most: BTreeMap<String, KernelMost>,
    },
}

/// An agent's events to each of its readers ([`AgentRpc::events`]): one unbounded queue per
/// reader, which holds only the events that reader has not taken yet (none, mostly). A
/// broadcast channel keeps its whole ring from the start instead, 1,024 slots of about 90
/// bytes per agent whether or not an event ever comes (9 MB for 100 dummy agents), and drops
/// what a reader that far behind has not read, a kernel's exit among them. A reader that was
/// dropped is forgotten at the next event.
#[derive(Debug, Default)]
pub struct EventFanout(std::sync::Mutex<Vec<futures::channel::mpsc::UnboundedSender<AgentEvent>>>);

impl EventFanout {
    /// Hands `ev` to every reader; returns how many there are.
    pub fn send(&self, ev: AgentEvent) -> usize {
        let mut readers = self.0.lock().unwrap_or_else(|p| p.into_inner());
        readers.retain(|r| r.unbounded_send(ev.clone()).is_ok());
        readers.len()
    }

    /// A new reader: every event sent from now on, in order.
    pub fn subscribe(&self) -> BoxStream<'static, AgentEvent> {
        let (tx, rx) = futures::channel::mpsc::unbounded();
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(tx);
        Box::pin(rx)
    }
}

/// Execution modes of the execute API (wire contract §6.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase")]
pub enum ExecRequest {
    /// Run a code snippet in the kernel's persistent REPL.
    Query { code: String },
    /// Clean / build / exec shell commands in /home/work. `"*"` means the kernel default,
    /// an empty string or `None` skips the step.
    Batch {
        clean: Option<String>,
        build: Option<String>,
        exec: Option<String>,
    },
    /// A line typed by the user in answer to `WaitingInput`.
    Input { line: String },
}

/// One piece of execution output, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "kebab-case")]
pub enum ExecEvent {
    Stdout {
        data: String,
    },
    Stderr {
        data: String,
    },
    /// The code asks for a line of input (`input()`).
    WaitingInput {
        prompt: String,
        password: bool,
    },
    Finished {
        exit_code: i32,
    },
}

#[derive(Debug, Clone, thiserror::Error, Serialize, Deserialize, PartialEq)]
pub enum AgentError {
    #[error("kernel {0} is not on this agent")]
    KernelNotFound(Uuid),
    #[error("image {0:?} is not on this agent")]
    ImageNotFound(String),
    #[error("not enough resources on the agent: {0}")]
    InsufficientResources(String),
    #[error("kernel did not become ready: {0}")]
    NotReady(String),
    #[error("container runtime error: {0}")]
    Runtime(String),
    #[error("bad request to agent: {0}")]
    BadRequest(String),
    /// The agent cannot be reached now (its link is down, it is lost).
    #[error("agent unreachable: {0}")]
    Unreachable(String),
}

/// What an agent's failure answers over the API, decided here once: the caller's mistake is
/// 400 with the agent's words, a kernel or image the agent does not have is 404, an agent
/// that cannot take the work now is 503, and the agent's own failure is 500.
impl From<AgentError> for crate::Problem {
    fn from(e: AgentError) -> crate::Problem {
        use crate::Problem;
        match e {
            AgentError::BadRequest(msg) => Problem::invalid(msg),
            AgentError::KernelNotFound(_) => Problem::not_found("kernel", e.to_string()),
            AgentError::ImageNotFound(_) => Problem::not_found("image", e.to_string()),
            AgentError::InsufficientResources(_) => Problem::new(
                503,
                "agent-insufficient-resources",
                "The agent has no room for this.",
                e.to_string(),
            ),
            AgentError::NotReady(_) => Problem::new(
                503,
                "kernel-not-ready",
                "The kernel is not ready.",
                e.to_string(),
            ),
            AgentError::Unreachable(_) => Problem::new(
                503,
                "agent-unreachable",
                "The session's agent cannot be reached.",
                e.to_string(),
            ),
            AgentError::Runtime(_) => Problem::internal(e.to_string()),
        }
    }
}

/// One entry of a kernel's directory, in Backend.AI's shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    pub filename: String,
    pub size: u64,
    /// Like `ls -l`: `-rw-r--r--`, `drwxr-xr-x`.
    pub mode: String,
    /// Last modification, epoch seconds.
    pub mtime: f64,
}

#[async_trait]
pub trait AgentRpc: Send + Sync + 'static {
    async fn info(&self) -> Result<AgentInfo, AgentError>;
    /// Creates the container, starts it and waits until its runner answers.
    async fn create_kernel(&self, spec: KernelSpec) -> Result<KernelCreated, AgentError>;

    /// Sets the shapes this agent keeps kernels started for (`Some`; `None` changes nothing)
    /// and says what its pools hold and did. An agent without pools keeps none.
    async fn warm_pool(
        &self,
        targets: Option<Vec<crate::pool::PoolTarget>>,
    ) -> Result<crate::pool::PoolReport, AgentError> {
        let _ = targets;
        Ok(crate::pool::PoolReport::default())
    }
    /// Every kernel of the multi-node session `session_id`, on every agent, by hostname and
    /// address (main1 first), told once all of them run and before the session does. An
    /// agent whose kernels learn their addresses only as they start (pods, each with the IP
    /// its cluster gives it: [`KernelCreated::address`]) writes the whole table into its
    /// kernels of the session, so each reaches those on other agents by hostname. An agent
    /// whose kernels' addresses were fixed beforehand (the overlay) has nothing to do.
    async fn cluster_hosts(
        &self,
        session_id: Uuid,
        hosts: Vec<(String, std::net::IpAddr)>,
    ) -> Result<(), AgentError> {
        let _ = (session_id, hosts);
        Ok(())
    }
    /// Stops and removes the container and its scratch directory.
    async fn destroy_kernel(&self, kernel_id: Uuid) -> Result<KernelExit, AgentError>;
    /// Sends SIGTERM to the kernel's processes (its runner stays and answers): a preemption's
    /// grace begins. The destroy that follows ends what is left.
    async fn terminate_processes(&self, kernel_id: Uuid) -> Result<(), AgentError> {
        let _ = kernel_id;
        Err(AgentError::BadRequest(
            "this agent cannot signal a kernel's processes".into(),
        ))
    }
    /// Runs code; the stream ends after `Finished`.
    async fn execute(
        &self,
        kernel_id: Uuid,
        req: ExecRequest,
    ) -> Result<BoxStream<'static, ExecEvent>, AgentError>;
    /// Writes files under /home/work (paths are relative and already validated).
    async fn upload_files(
        &self,
        kernel_id: Uuid,
        files: Vec<(String, bytes::Bytes)>,
    ) -> Result<(), AgentError>;
    /// Each path under /home/work (relative, already validated) as one tar archive.
    async fn download_files(
        &self,
        kernel_id: Uuid,
        paths: Vec<String>,
    ) -> Result<Vec<(String, bytes::Bytes)>, AgentError>;
    /// Where the app listening on `port` inside the kernel can be reached from the manager.
    async fn app_address(
        &self,
        kernel_id: Uuid,
        port: u16,
    ) -> Result<std::net::SocketAddr, AgentError>;
    /// Starts the app `name` in the kernel unless it runs, and returns once it answers.
    async fn start_app(&self, kernel_id: Uuid, name: &str) -> Result<(), AgentError>;
    /// Container logs (stdout and stderr interleaved).
    async fn logs(&self, kernel_id: Uuid) -> Result<String, AgentError>;
    /// One directory inside the kernel as its user sees it (a relative `path` is under
    /// /home/work; mounted folders included).
    async fn list_files(&self, kernel_id: Uuid, path: String)
    -> Result<Vec<FileEntry>, AgentError>;
    /// The kernel's resource counters now (CPU time, memory, network and block I/O).
    async fn kernel_stats(&self, kernel_id: Uuid) -> Result<crate::stats::KernelStats, AgentError>;
    /// Kernels this agent is running now (for reconciliation).
    async fn list_kernels(&self) -> Result<Vec<Uuid>, AgentError>;
    /// Commits a kernel's container (paused meanwhile) as a new image; returns the image (for a
    /// tarball commit, the image as it was before it was saved and removed).
    async fn commit_kernel(&self, req: CommitRequest) -> Result<ImageInfo, AgentError>;
    /// Removes an image from the agent's engine (refused while a container uses it).
    async fn remove_image(&self, reference: String) -> Result<(), AgentError>;
    /// Gives the image `source` the reference `target` too (moving `target` if it was set).
    async fn tag_image(&self, source: String, target: String) -> Result<(), AgentError>;
    /// Pulls `reference` from the agent's registry and keeps it under that reference.
    async fn pull_image(&self, reference: String) -> Result<ImageInfo, AgentError>;
    /// Pushes `reference` to the agent's registry.
    async fn push_image(&self, reference: String) -> Result<(), AgentError>;
    /// Events the agent reports by itself (kernel exits).
    fn events(&self) -> BoxStream<'static, AgentEvent>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Problem;

    #[test]
    fn agent_failures_answer_by_whose_fault_they_are() {
        let status = |e: AgentError| Problem::from(e).status;
        assert_eq!(status(AgentError::BadRequest("no such dir".into())), 400);
        assert_eq!(status(AgentError::KernelNotFound(Uuid::nil())), 404);
        assert_eq!(status(AgentError::ImageNotFound("x".into())), 404);
        assert_eq!(status(AgentError::Unreachable("link down".into())), 503);
        assert_eq!(status(AgentError::InsufficientResources("cpu".into())), 503);
        assert_eq!(status(AgentError::Runtime("boom".into())), 500);
        let p = Problem::from(AgentError::BadRequest("cannot list \"x\"".into()));
        assert_eq!(p.msg, "cannot list \"x\"");
    }

    fn exit(n: u128) -> AgentEvent {
        AgentEvent::KernelExited(KernelExit {
            kernel_id: Uuid::from_u128(n),
            exit_code: Some(0),
            oom_killed: false,
            logs: String::new(),
        })
    }

    /// Each reader gets every event sent after it subscribed, in order, however far behind
    /// it is (a broadcast ring of 1,024 would have dropped the oldest); a dropped reader is
    /// forgotten at the next event.
    #[test]
    fn every_reader_gets_every_event_and_a_dropped_one_is_forgotten() {
        use futures::StreamExt;
        let fanout = EventFanout::default();
        assert_eq!(fanout.send(exit(0)), 0, "no reader yet");
        let a = fanout.subscribe();
        let b = fanout.subscribe();
        for i in 1..=3000 {
            assert_eq!(fanout.send(exit(i)), 2);
        }
        drop(b);
        assert_eq!(fanout.send(exit(3001)), 1, "the dropped reader is gone");
        let got: Vec<AgentEvent> = futures::executor::block_on(a.take(3001).collect());
        let want: Vec<AgentEvent> = (1..=3001).map(exit).collect();
        assert_eq!(got, want);
    }

    /// A kernel over an agent's per-kernel limit is found by slot, with words naming the
    /// limit; one at the limit, or asking nothing of that slot, is not over it.
    #[test]
    fn a_kernel_over_the_most_one_kernel_may_have_is_named() {
        let most = BTreeMap::from([(
            "cuda.shares".to_string(),
            KernelMost {
                amount: 250,
                why: "its GPUs are shared with MPS 4 ways".into(),
            },
        )]);
        let kernel = |shares: u64| ResourceSlots {
            cpu_milli: 1000,
            mem: 1 << 30,
            accel: BTreeMap::from([("cuda.shares".to_string(), shares)]),
        };
        assert_eq!(over_kernel_most(&most, &kernel(250)), None);
        assert_eq!(over_kernel_most(&most, &ResourceSlots::default()), None);
        let over = over_kernel_most(&most, &kernel(500)).expect("over");
        assert_eq!((over.slot, over.asked), ("cuda.shares", 500));
        assert_eq!(
            over.on("k8s-a"),
            "a kernel may have at most cuda.shares=0.25 on k8s-a (its GPUs are shared with MPS 4 ways)"
        );
        assert_eq!(over_kernel_most(&BTreeMap::new(), &kernel(8000)), None);
    }
}

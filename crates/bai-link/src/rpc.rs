//! The agent RPC interface's messages over a [`crate::Link`]: the manager holds a
//! [`crate::remote::RemoteAgent`] (an `AgentRpc` like any other), the agent answers with
//! [`crate::serve::serve`]. Messages are MessagePack (serde, field names kept); file bodies
//! travel as bytes.

use crate::conn::LinkError;
use bai_core::agent::{AgentEvent, AgentInfo, ExecEvent, ExecRequest, KernelCreated, KernelExit};
use bai_core::stats::KernelStats;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A file's path and bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct File(pub String, #[serde(with = "serde_bytes")] pub Vec<u8>);

/// The most bytes of file data one message carries: bigger transfers go in parts
/// ([`Call::Stage`] up, [`Reply::Part`] down), well under the frame limit.
pub const CHUNK: usize = 8 << 20;

/// A call as it travels. The manager sends a call again with the same id when the link
/// broke before its answer came (the agent may or may not have carried it out); the agent
/// answers a repeated id with the first answer instead of doing the work twice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub id: Uuid,
    pub call: Call,
    /// The term of the lease the sending manager leads under (0: a manager without one).
    /// The agent remembers the highest it has seen and refuses calls of a lower one: a
    /// deposed leader's late commands are not carried out.
    #[serde(default)]
    pub term: u64,
}

impl Request {
    /// `call` under a new id, sent under `term`.
    pub fn new(call: Call, term: u64) -> Request {
        Request {
            id: Uuid::new_v4(),
            call,
            term,
        }
    }
}

/// A file's bytes in parts of at most [`CHUNK`] bytes; an empty file is one empty part, so
/// every file is sent.
pub fn parts(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let empty: &[u8] = &[];
    bytes.chunks(CHUNK).chain(bytes.is_empty().then_some(empty))
}

/// What the manager asks of an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Call {
    Info,
    Create(Box<bai_core::agent::KernelSpec>),
    Destroy(Uuid),
    /// SIGTERM to a kernel's processes but its runner (a preemption's grace begins).
    Terminate(Uuid),
    Execute(Uuid, ExecRequest),
    Upload(Uuid, Vec<File>),
    Download(Uuid, Vec<String>),
    AppAddress(Uuid, u16),
    StartApp(Uuid, String),
    Logs(Uuid),
    Stats(Uuid),
    ListKernels,
    /// Open tunnel `.0` to port `.2` of kernel `.1`: dial back with a tunnel hello.
    Tunnel(Uuid, Uuid, u16),
    /// One directory of a kernel.
    ListFiles(Uuid, String),
    /// Commit a kernel as an image.
    Commit(Box<bai_core::agent::CommitRequest>),
    /// Remove an image.
    RemoveImage(String),
    /// Tag image `.0` as `.1`.
    TagImage(String, String),
    /// Pull an image from the agent's registry.
    PullImage(String),
    /// Push an image to the agent's registry.
    PushImage(String),
    /// One part of file `.1` of upload `.0`, appended to what the agent holds for it.
    Stage(Uuid, u32, File),
    /// Upload `.1`'s staged files into kernel `.0`, if they have the sizes `.2`.
    UploadStaged(Uuid, Uuid, Vec<u64>),
    /// Set the warm pools' shapes (`Some`), and say what the pools hold and did.
    WarmPool(Option<Vec<bai_core::pool::PoolTarget>>),
    /// Every kernel of multi-node session `.0` by hostname and address (`cluster_hosts`).
    ClusterHosts(Uuid, Vec<(String, std::net::IpAddr)>),
}

impl Call {
    /// Whether the call changes something, so that a repeat must get the first answer
    /// rather than run again. Reads simply run again.
    pub fn changes(&self) -> bool {
        !matches!(
            self,
            Call::Info
                | Call::Download(..)
                | Call::AppAddress(..)
                | Call::Logs(_)
                | Call::Stats(_)
                | Call::ListKernels
                | Call::ListFiles(..)
                | Call::Execute(..)
                | Call::Tunnel(..)
                // Setting the same shapes again changes nothing.
                | Call::WarmPool(_)
        )
    }
}

/// The agent's answers (each item of a call's answer is one `Result<Reply, AgentError>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Reply {
    Info(Box<AgentInfo>),
    Created(KernelCreated),
    Exit(KernelExit),
    Exec(ExecEvent),
    Done,
    Files(Vec<File>),
    Addr(std::net::SocketAddr),
    Logs(String),
    Stats(Box<KernelStats>),
    Kernels(Vec<Uuid>),
    Listing(Vec<bai_core::agent::FileEntry>),
    Image(Box<bai_core::agent::ImageInfo>),
    /// One part of a downloaded file (a download's answer is its files' parts in order,
    /// then `Done`; `first` marks the first part of each file).
    Part {
        first: bool,
        file: File,
    },
    /// The warm pools of an agent.
    Pools(Box<bai_core::pool::PoolReport>),
}

pub fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    // Our own types always serialize.
    rmp_serde::to_vec_named(v).unwrap_or_default()
}

pub fn decode<T: for<'de> Deserialize<'de>>(b: &[u8]) -> Result<T, LinkError> {
    rmp_serde::from_slice(b).map_err(|e| LinkError::Malformed(e.to_string()))
}

/// What the agent sends unasked on the link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Notice {
    Agent(AgentEvent),
    /// The agent is alive and its link works, sent every heartbeat interval.
    Heartbeat,
}

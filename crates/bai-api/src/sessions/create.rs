//! `POST /session`: the create request (with the spellings clients use) and its answer.

use super::apps::App;
use super::status::{ClusterMode, CreateStatus, SessionStatus, SessionType};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use bai_core::amount::NumberOrText;

/// A list of values, or one text of them separated by commas (or, for ports, spaces).
// Read by hand (`either.rs`), so that a value of neither kind is refused as such.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ListOrText<T> {
    /// The values one by one.
    List(Vec<T>),
    /// The values in one text, e.g. `"8080,8081"`.
    Text(String),
}

/// The body of `POST /session`. Text fields that are empty count as absent; fields with
/// several spellings take the first one given, in the order listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CreateRequest {
    /// The image or an alias of it (e.g. `python`); also read as `lang`.
    #[serde(alias = "lang")]
    pub image: String,
    /// The session's name (4–64 characters of letters, digits, `-`, `_`, `.`); a random one
    /// when absent. Also read as `clientSessionToken` and `sessionName`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "clientSessionToken",
        alias = "sessionName"
    )]
    pub name: Option<String>,
    /// The kind of session (default `interactive`); also read as `sessionType`.
    #[serde(
        rename = "type",
        alias = "sessionType",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub session_type: Option<SessionType>,
    /// What the container runs at start; required for batch sessions. Also read as
    /// `startup_command`.
    #[serde(
        rename = "startupCommand",
        alias = "startup_command",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub startup_command: Option<String>,
    /// Batch sessions only: they are ended after this long (seconds, or `30s`, `5m`, `2h`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_timeout: Option<NumberOrText>,
    /// Batch sessions only: when preempted for a more urgent session, go back to the queue
    /// (keeping the id and name) and run again, instead of ending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeue: Option<bool>,
    /// Batch sessions only: do not start before this time (ISO 8601; without a zone UTC) or
    /// this delay (`10s`, `5m`). Also read as `startsAt`.
    #[serde(alias = "startsAt", default, skip_serializing_if = "Option::is_none")]
    pub starts_at: Option<String>,
    /// A script the kernel runs once at its start; also read as `bootstrapScript`.
    #[serde(
        alias = "bootstrapScript",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub bootstrap_script: Option<String>,
    /// The project the session belongs to (default `default`); the owner must be a member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The domain (default `default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// A free label of the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Administrators: create the session for this keypair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_access_key: Option<String>,
    /// Answer as soon as the session is queued (`PENDING`) instead of waiting until it runs.
    #[serde(
        rename = "enqueueOnly",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub enqueue_only: Option<bool>,
    /// Wait at most this many seconds for the session to run (0: no bound), then answer
    /// `TIMEOUT`.
    #[serde(
        rename = "maxWaitSeconds",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_wait_seconds: Option<u64>,
    /// When the owner has a live session of this name and image, answer it instead of
    /// refusing (default true).
    #[serde(
        rename = "reuseIfExists",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub reuse_if_exists: Option<bool>,
    /// Scheduling priority, 0 to 100 (default 10; higher goes first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 100))]
    pub priority: Option<i64>,
    /// Create this many sessions, named `NAME-1` … `NAME-N` (1 to 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100))]
    pub count: Option<u32>,
    /// The owner's sessions (ids or names) that must end successfully before this one is
    /// scheduled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<Vec<String>>,
    /// Number of kernels (containers), 1 to 64: main1 and `clusterSize - 1` sub kernels, each
    /// with the resources asked for; at most the owner's policy's
    /// `max_containers_per_session` (else 400 with code `session_create_unavailable`).
    #[serde(
        rename = "clusterSize",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cluster_size: Option<u32>,
    /// How the kernels are spread: `single-node` (default: all on one agent, on a network of
    /// their own) or `multi-node` (each kernel placed on its own by the group's strategy, on
    /// any agent with room for one kernel, so several may share an agent; joined by an overlay
    /// network of their own; refused with 400 when the group's nodes together cannot hold
    /// them).
    #[serde(
        rename = "clusterMode",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cluster_mode: Option<ClusterMode>,
    /// The resource group to run in, when `config.scalingGroup` does not name one.
    #[serde(
        rename = "scalingGroup",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub scaling_group: Option<String>,
    /// A resource preset, when `config.preset` does not name one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// The client's architecture; accepted and not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
    /// A URL to call on status changes; accepted and not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_url: Option<String>,
    /// Resources, data folders, environment and ports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<CreateConfig>,
}

impl CreateRequest {
    /// A request for `image` with nothing else given (every other field its default).
    pub fn new(image: impl Into<String>) -> CreateRequest {
        CreateRequest {
            image: image.into(),
            name: None,
            session_type: None,
            startup_command: None,
            batch_timeout: None,
            requeue: None,
            starts_at: None,
            bootstrap_script: None,
            group: None,
            domain: None,
            tag: None,
            owner_access_key: None,
            enqueue_only: None,
            max_wait_seconds: None,
            reuse_if_exists: None,
            priority: None,
            count: None,
            dependencies: None,
            cluster_size: None,
            cluster_mode: None,
            scaling_group: None,
            preset: None,
            architecture: None,
            callback_url: None,
            config: None,
        }
    }
}

/// `config` of a create request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct CreateConfig {
    /// Slot → amount: `cpu` (cores), `mem` (bytes, or `512m`, `4g`), accelerator slots
    /// (`gpu`, `cuda.shares` name the cluster's first). Defaults: 1 core, 1 GiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<BTreeMap<String, NumberOrText>>,
    /// Options of the resources: `shmem`, the size of `/dev/shm` (part of `mem`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_opts: Option<BTreeMap<String, NumberOrText>>,
    /// The resource group (default `default`, or the owner's only one); also read as
    /// `scaling_group`.
    #[serde(
        rename = "scalingGroup",
        alias = "scaling_group",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub scaling_group: Option<String>,
    /// A resource preset whose amounts fill in what `resources` leaves out; also read as
    /// `resource_preset`.
    #[serde(
        alias = "resource_preset",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub preset: Option<String>,
    /// Environment variables of the kernel (names of letters, digits and `_`; names starting
    /// with `BAI_` are reserved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environ: Option<BTreeMap<String, String>>,
    /// Data folders to mount, by name (or id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mounts: Option<Vec<String>>,
    /// Data folders to mount, by id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_ids: Option<Vec<String>>,
    /// Folder name → where it is mounted (inside `/home/work`; default `/home/work/NAME`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_map: Option<BTreeMap<String, String>>,
    /// Folder id → where it is mounted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_id_map: Option<BTreeMap<String, String>>,
    /// Folder name → mount options; accepted and not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_options: Option<BTreeMap<String, serde_json::Value>>,
    /// Container ports (1024–65535, at most 16) opened as apps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preopen_ports: Option<ListOrText<NumberOrText>>,
    /// "Select Agent": the one agent that runs the session (main1 of a multi-node session,
    /// whose other kernels the scheduler spreads); also read as `agent_list`.
    #[serde(
        rename = "agentList",
        alias = "agent_list",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub agent_list: Option<ListOrText<String>>,
    /// A network to attach; accepted and not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attach_network: Option<String>,
}

/// The answer of `POST /session` (201 when created, 200 when an existing session is reused).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CreateReply {
    /// The session's id (the first one's with `count`).
    #[serde(rename = "sessionId")]
    pub session_id: String,
    /// The session's name.
    #[serde(rename = "sessionName")]
    pub session_name: String,
    /// Where the session got to before the answer.
    pub status: CreateStatus,
    /// The session's apps (bai lists them at `GET /stream/session/{reference}/apps`; empty
    /// here).
    #[serde(rename = "servicePorts")]
    pub service_ports: Vec<App>,
    /// False when an existing session was reused.
    pub created: bool,
    /// With `count` > 1: every session created, all PENDING.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<Vec<CreatedSession>>,
}

/// One of the sessions a create request with `count` made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CreatedSession {
    /// Its id.
    #[serde(rename = "sessionId")]
    pub session_id: String,
    /// Its name, `NAME-i`.
    #[serde(rename = "sessionName")]
    pub session_name: String,
    /// Its status (PENDING).
    pub status: SessionStatus,
}

//! A session as the store keeps it: who it is (id, name, kernel), what it was created with
//! (its [`ResolvedSpec`], never changed after the create) and where it is in its lifecycle
//! (its [`SessionState`], changed only through the status door, `change.rs`). kube-rs's
//! spec and status, in one row.

use bai_core::cluster::ClusterMode;
use bai_core::resources::ResourceSlots;
use bai_core::status::{SessionResult, SessionStatus, SessionType};
use std::collections::BTreeMap;
use uuid::Uuid;

/// When the session first entered each status (`status_history` on the wire: status name →
/// time), in lifecycle order.
pub type StatusHistory = BTreeMap<SessionStatus, String>;

/// One session as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub id: Uuid,
    /// Its owner's name for it (a rename changes it).
    pub name: String,
    /// The main kernel (`main1`); a requeued session gets a new one.
    pub main_kernel_id: Uuid,
    pub created_at: String,
    pub spec: ResolvedSpec,
    pub state: SessionState,
}

/// What a session was created with, every name resolved (owner, image, resource group,
/// folders, dependencies): written once by the create, never changed after.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedSpec {
    /// The owning keypair.
    pub access_key: String,
    pub user_id: String,
    pub domain_name: String,
    /// The project.
    pub group_name: String,
    /// The resource group.
    pub scaling_group: String,
    pub session_type: SessionType,
    /// The image's full reference.
    pub image: String,
    pub tag: Option<String>,
    pub priority: i64,
    /// Batch sessions: not before this time.
    pub starts_at: Option<String>,
    /// Batch sessions: end after this many seconds.
    pub batch_timeout: Option<i64>,
    pub startup_command: Option<String>,
    pub bootstrap_script: Option<String>,
    pub environ: BTreeMap<String, String>,
    /// The whole session's slots (the sum over its kernels).
    pub requested_slots: ResourceSlots,
    pub shmem: u64,
    /// "Select Agent": only this agent may take the session.
    pub designated_agent: Option<String>,
    /// Sessions that must end successfully before this one is scheduled.
    pub dependencies: Vec<Uuid>,
    /// Data folders mounted into the session.
    pub mounts: Vec<bai_core::agent::Mount>,
    /// Container ports opened as apps (1024–65535).
    pub preopen_ports: Vec<u16>,
    pub cluster_mode: ClusterMode,
    /// How many kernels: main1 and `cluster_size - 1` sub kernels (in the `kernels` table).
    pub cluster_size: u32,
    /// Preempted, it goes back to the queue (keeping its id and name) instead of ending.
    pub requeue: bool,
}

impl ResolvedSpec {
    /// Slots of each kernel (the session's are the sum over its kernels).
    pub fn kernel_slots(&self) -> ResourceSlots {
        self.requested_slots
            .divided(self.cluster_size.max(1) as u64)
    }
}

/// Where a session is in its lifecycle. Only the status door writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionState {
    pub status: SessionStatus,
    /// Why it is in that status (a `Reason`'s text, or the scheduler's wait).
    pub status_info: Option<String>,
    pub status_changed: String,
    /// First time each status was entered.
    pub status_history: StatusHistory,
    pub result: SessionResult,
    pub exit_code: Option<i32>,
    pub terminated_at: Option<String>,
    /// The agent holding it (its main kernel's), once placed.
    pub agent_id: Option<String>,
    pub container_id: Option<String>,
    /// The egress policy its kernels were started under (set at launch; none before).
    pub egress: Option<bai_core::egress::EgressPolicy>,
    /// The session it was last preempted for (a requeued one waits until that one started).
    pub preempted_by: Option<Uuid>,
}

/// What a create stores: a new session's identity and spec (its state starts PENDING).
#[derive(Debug, Clone)]
pub struct NewSession {
    pub id: Uuid,
    pub name: String,
    pub main_kernel_id: Uuid,
    /// Ids of the sub kernels (`sub1` …): `spec.cluster_size - 1` of them.
    pub sub_kernels: Vec<Uuid>,
    pub spec: ResolvedSpec,
}

impl NewSession {
    /// A new session named `name` of `spec`, with new ids for it and each of its kernels.
    pub fn new(name: impl Into<String>, spec: ResolvedSpec) -> NewSession {
        NewSession {
            id: Uuid::new_v4(),
            name: name.into(),
            main_kernel_id: Uuid::new_v4(),
            sub_kernels: (1..spec.cluster_size.max(1))
                .map(|_| Uuid::new_v4())
                .collect(),
            spec,
        }
    }

    /// Another session of the same spec named `name`, with ids of its own.
    pub fn renamed(&self, name: impl Into<String>) -> NewSession {
        NewSession::new(name, self.spec.clone())
    }
}

//! `GET /session/{reference}`: everything known about a session, in Backend.AI's field
//! names (GraphQL's `compute_session` answers the same fields). Several fields are JSON
//! texts inside a string, as Backend.AI sends them.

use super::status::{ClusterMode, SessionResult, SessionStatus, SessionType};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

// Why a session waits and its traffic are `bai-core`'s (the server writes them), with their
// schemas from its `schema` feature.
pub use bai_core::pending::PendingInfo;
pub use bai_core::stats::Network;

/// A session's fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionInfo {
    /// The session's id.
    pub id: String,
    /// The session's id (again, as `session_id`).
    pub session_id: String,
    /// The session's id (again, as `row_id`).
    pub row_id: String,
    /// The session's name.
    pub name: String,
    /// The session's name (again, as `session_name`).
    pub session_name: String,
    /// The kind of session.
    #[serde(rename = "type")]
    pub kind: SessionType,
    /// The kind of session (again, as `session_type`).
    pub session_type: SessionType,
    /// The image it runs (its full name).
    pub image: String,
    /// The images of its kernels (one).
    pub image_references: Vec<String>,
    /// The manager's CPU architecture (e.g. `x86_64`).
    pub architecture: String,
    /// The user's label.
    pub tag: Option<String>,
    /// Scheduling priority (0–100).
    pub priority: i64,
    /// The status now.
    pub status: SessionStatus,
    /// Why it has this status (e.g. `user-requested`, `no-available-instances: …`).
    pub status_info: Option<String>,
    /// A JSON text: `{"exit_code": N|null}`.
    pub status_data: String,
    /// When the status last changed (RFC 3339).
    pub status_changed: String,
    /// When it first entered each status (RFC 3339).
    pub status_history: BTreeMap<SessionStatus, String>,
    /// How it ended.
    pub result: SessionResult,
    /// The exit code of its command, once it ended with one.
    pub exit_code: Option<i32>,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When it ended (RFC 3339).
    pub terminated_at: Option<String>,
    /// Batch sessions: the earliest start asked for (RFC 3339).
    pub starts_at: Option<String>,
    /// Batch sessions: seconds after which it is ended.
    pub batch_timeout: Option<i64>,
    /// What the container runs at start.
    pub startup_command: Option<String>,
    /// The domain.
    pub domain_name: String,
    /// The project.
    pub group_name: String,
    /// The project (bai names projects by name: the same as `group_name`).
    pub group_id: String,
    /// The resource group it runs in.
    pub scaling_group: String,
    /// The owner's access key.
    pub access_key: String,
    /// The owner's user id.
    pub user_id: String,
    /// The owner's email, when the keypair is still known.
    pub user_email: Option<String>,
    /// The main kernel's id.
    pub main_kernel_id: String,
    /// How its kernels are spread: all on one agent (`single-node`) or over several.
    pub cluster_mode: ClusterMode,
    /// Number of kernels: main1 and `cluster_size - 1` sub kernels.
    pub cluster_size: u32,
    /// The egress policy its kernels run under (its resource group's at launch; none
    /// before it was launched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress: Option<bai_core::egress::EgressPolicy>,
    /// The agent it runs on, once placed.
    pub agent: Option<String>,
    /// The agents it runs on (none or one).
    pub agent_ids: Vec<String>,
    /// The agents it runs on (again, as `agents`).
    pub agents: Vec<String>,
    /// The main kernel's container id, once created.
    pub container_id: Option<String>,
    /// A JSON text of the slots asked for: `{"cpu": "2", "mem": "1073741824", …}`.
    pub requested_slots: String,
    /// A JSON text of the slots held now (`{}` when it holds none).
    pub occupying_slots: String,
    /// A JSON text of the slots held now (again, as `occupied_slots`).
    pub occupied_slots: String,
    /// A JSON text of the resource options: `{"shmem": BYTES}`.
    pub resource_opts: String,
    /// Shared memory in bytes.
    pub shmem: u64,
    /// Cores asked for, as text (`"2"`, `"0.5"`).
    pub cpu: String,
    /// Memory asked for, bytes.
    pub mem: u64,
    /// Environment variables of the kernel.
    pub environ: BTreeMap<String, String>,
    /// A JSON text of the idle checks: checker → report (see `IdleReport`); `{}` unless it
    /// runs.
    pub idle_checks: String,
    /// Ids of the mounted data folders.
    pub vfolder_mounts: Vec<String>,
    /// The mounted data folders: `[name, path in the container, "rw"|"ro"]`.
    pub mounts: Vec<(String, String, MountMode)>,
    /// A JSON text of the service ports (always `[]`: see the apps list).
    pub service_ports: String,
    /// Container ports opened as apps.
    pub preopen_ports: Vec<u16>,
    /// A JSON text of the current use, metric → `{current, capacity, pct, unit_hint}` (see
    /// `Kernel::live_stat`); null before the second reading.
    pub live_stat: Option<String>,
    /// A JSON text of the last use an ended session kept (`live_stat`'s metrics and
    /// `network`); null while it lives or when nothing was measured.
    pub last_stat: Option<String>,
    /// Bytes through the session's apps, tunnels and executions.
    pub network: Network,
    /// Its kernels (one).
    pub containers: Vec<Kernel>,
    /// Its kernels (again, as `kernels`).
    pub kernels: Vec<Kernel>,
    /// Sessions that must end successfully before it is scheduled.
    pub dependencies: Vec<Dependency>,
    /// "Select Agent": the one agent that may run it.
    pub designated_agent: Option<String>,
    /// PENDING sessions: why it waits, as of the last scheduling pass (null otherwise, or
    /// before the first pass).
    pub pending: Option<PendingInfo>,
}

/// Whether a data folder is writable in the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MountMode {
    /// Read and write.
    Rw,
    /// Read only.
    Ro,
}

/// A session this one depends on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Dependency {
    /// Its id.
    pub id: String,
    /// Its name; null when it is gone.
    pub name: Option<String>,
}

/// A kernel (container) of a session: `main1`, then `sub1` … of a cluster session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Kernel {
    /// The kernel's id.
    pub id: String,
    /// The kernel's id (again, as `row_id`).
    pub row_id: String,
    /// Its session's id.
    pub session_id: String,
    /// Its role: `main` or `sub`.
    pub cluster_role: String,
    /// Its index in the role: 1 for main1, i for sub i.
    pub cluster_idx: u32,
    /// Its rank on its node: 0 for main1, i for sub i.
    pub local_rank: u32,
    /// Its host name in the cluster (`main1`, `sub1`, …): the other kernels reach it by it.
    pub cluster_hostname: String,
    /// The image.
    pub image: String,
    /// The image (again, as `image_reference`).
    pub image_reference: String,
    /// The image's registry (`local`).
    pub registry: String,
    /// The CPU architecture.
    pub architecture: String,
    /// Its status (the session's).
    pub status: SessionStatus,
    /// Why it has this status.
    pub status_info: Option<String>,
    /// A JSON text (`{}`).
    pub status_data: String,
    /// When the status last changed (RFC 3339).
    pub status_changed: String,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When it ended (RFC 3339).
    pub terminated_at: Option<String>,
    /// The agent it runs on.
    pub agent: Option<String>,
    /// The agent it runs on (again, as `agent_id`).
    pub agent_id: Option<String>,
    /// Its container's id.
    pub container_id: Option<String>,
    /// How its container ended, once known (main1: the session's exit code).
    pub exit_code: Option<i32>,
    /// A JSON text of the resource options: `{"shmem": BYTES}`.
    pub resource_opts: String,
    /// A JSON text of the slots it holds (`{}` when none).
    pub occupied_slots: String,
    /// Container ports opened as apps (main1 only).
    pub preopen_ports: Vec<u16>,
    /// A JSON text of the current use: metric (`cpu_util`, `cpu_used`, `mem`, `net_rx`,
    /// `net_tx`, `io_read`, `io_write`) → `{"current", "capacity", "pct"?, "unit_hint"}`,
    /// numbers as text; null before the second reading.
    pub live_stat: Option<String>,
    /// A JSON text of the last use an ended session kept; null otherwise.
    pub last_stat: Option<String>,
}

/// The JSON texts some of these bodies carry (Backend.AI sends them as strings).
pub mod text {
    use super::Network;
    use bai_core::ResourceSlots;

    /// Slots held (`occupying_slots`, `occupied_slots`): `{}` for none.
    pub fn slots(slots: Option<&ResourceSlots>) -> String {
        slots.map_or_else(|| "{}".into(), |s| s.to_wire().to_string())
    }

    /// `resource_opts`: the shared memory.
    pub fn resource_opts(shmem: u64) -> String {
        serde_json::json!({ "shmem": shmem }).to_string()
    }

    /// `status_data`: the exit code.
    pub fn status_data(exit_code: Option<i32>) -> String {
        serde_json::json!({ "exit_code": exit_code }).to_string()
    }

    /// The app traffic an ended session kept in its `last_stat` text.
    pub fn kept_network(last_stat: &str) -> Option<Network> {
        let kept: serde_json::Value = serde_json::from_str(last_stat).ok()?;
        serde_json::from_value(kept.get("network")?.clone()).ok()
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn the_texts_are_json() {
            assert_eq!(super::slots(None), "{}");
            assert_eq!(super::resource_opts(64), r#"{"shmem":64}"#);
            assert_eq!(super::status_data(None), r#"{"exit_code":null}"#);
            let n = super::kept_network(r#"{"network": {"rx_bytes": 1, "tx_bytes": 2}}"#)
                .expect("kept");
            assert_eq!((n.rx_bytes, n.tx_bytes), (1, 2));
        }
    }
}

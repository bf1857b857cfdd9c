//! Sessions, their scheduling history and their persisted events.
//!
//! `change` is the one door for status changes (a compare-and-set that refuses illegal
//! transitions); `query` reads sessions; `write` stores new sessions and what they keep;
//! `history` keeps the scheduling history and the events.

mod change;
mod history;
pub(crate) mod kernels;
mod place_many;
mod preempt;
mod query;
mod row;
mod write;

pub use change::StatusChange;
pub(crate) use change::{PLACEMENT_PHASE, cas_status_tx, place_tx};
pub(crate) use history::add_history_with_steps_tx;
pub use kernels::{SubKernel, SubPlacements};
pub(crate) use place_many::{Placement, place_many_tx};
pub use query::{GroupQueue, SessionCount};
pub use row::{NewSession, ResolvedSpec, SessionRow, SessionState, StatusHistory};

use crate::db::Row;
use crate::{Result, StoreError};
use bai_core::resources::ResourceSlots;
use bai_core::status::{SessionResult, SessionStatus};
use uuid::Uuid;

/// A PENDING session as the scheduler reads it: only the columns it needs.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingRow {
    pub id: Uuid,
    pub access_key: String,
    pub scaling_group: String,
    pub priority: i64,
    pub created_at: String,
    pub requested_slots: ResourceSlots,
    pub starts_at: Option<String>,
    pub designated_agent: Option<String>,
    pub dependencies: Vec<Uuid>,
    pub status_info: Option<String>,
    /// The image it runs (an agent must have it).
    pub image: String,
    /// Host paths of the data folders it mounts (an agent must have their storage hosts).
    pub mount_paths: Vec<String>,
    /// Multi-node cluster sessions: the kernels placed one by one; 1 otherwise.
    pub kernels: u32,
    /// Who its usage is charged to (fair share): its user, domain and project.
    pub user_id: String,
    pub domain_name: String,
    pub group_name: String,
    /// A batch session's own timeout in seconds, as created (`None`: none, or not batch).
    pub batch_timeout: Option<i64>,
    /// Its kernels (single-node or multi-node): each asks for one `cluster_size`-th of
    /// `requested_slots`.
    pub cluster_size: u32,
}

#[derive(Debug, Clone, Default)]
pub struct SessionFilter {
    pub statuses: Vec<SessionStatus>,
    /// Restrict to one owner (None = everyone; admins only).
    pub access_key: Option<String>,
    /// System sessions (SFTP) only; otherwise none of them (they are listed only when asked).
    pub system: bool,
    pub limit: i64,
    pub offset: i64,
    /// Keyset paging: only sessions listed after this one (then `offset` must be 0). A walk
    /// of the whole listing costs what it returns, however deep it goes.
    pub after: Option<SessionCursor>,
}

/// Where a page ended, in the listing's order (the last change first): the key of its last
/// session. The next page starts after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionCursor {
    pub status_changed: String,
    pub created_at: String,
    pub id: String,
}

impl SessionCursor {
    /// The cursor right after `row`.
    pub fn after(row: &SessionRow) -> SessionCursor {
        SessionCursor {
            status_changed: row.state.status_changed.clone(),
            created_at: row.created_at.clone(),
            id: row.id.to_string(),
        }
    }
}

pub(crate) const COLUMNS: &str = "id, name, access_key, user_id, domain_name, group_name, scaling_group, type, \
    image, tag, priority, status, status_info, status_changed, status_history, result, exit_code, \
    created_at, terminated_at, starts_at, batch_timeout, startup_command, bootstrap_script, environ, \
    requested_slots, shmem, agent_id, main_kernel_id, container_id, designated_agent, dependencies, mounts, preopen_ports, \
    cluster_mode, cluster_size, egress, requeue, preempted_by";

pub(crate) fn corrupt(column: &'static str, detail: impl ToString) -> StoreError {
    StoreError::Corrupt {
        column,
        detail: detail.to_string(),
    }
}

pub(crate) fn parse_row(
    r: &Row<'_>,
) -> crate::db::Result<std::result::Result<SessionRow, StoreError>> {
    let id: String = r.get(0)?;
    let ty: String = r.get(7)?;
    let status: String = r.get(11)?;
    let hist: String = r.get(14)?;
    let result: String = r.get(15)?;
    let environ: String = r.get(23)?;
    let slots: String = r.get(24)?;
    let kid: String = r.get(27)?;
    let shmem: i64 = r.get(25)?;
    let deps: String = r.get(30)?;
    let mounts: String = r.get(31)?;
    let preopen: String = r.get(32)?;
    let cluster_mode: String = r.get(33)?;
    let cluster_size: i64 = r.get(34)?;
    let egress: Option<String> = r.get(35)?;
    let requeue: i64 = r.get(36)?;
    let preempted_by: Option<String> = r.get(37)?;
    let build = || -> std::result::Result<SessionRow, StoreError> {
        Ok(SessionRow {
            id: Uuid::parse_str(&id).map_err(|e| corrupt("id", e))?,
            name: r.get(1)?,
            main_kernel_id: Uuid::parse_str(&kid).map_err(|e| corrupt("main_kernel_id", e))?,
            created_at: r.get(17)?,
            spec: ResolvedSpec {
                access_key: r.get(2)?,
                user_id: r.get(3)?,
                domain_name: r.get(4)?,
                group_name: r.get(5)?,
                scaling_group: r.get(6)?,
                session_type: ty.parse().map_err(|e: String| corrupt("type", e))?,
                image: r.get(8)?,
                tag: r.get(9)?,
                priority: r.get(10)?,
                starts_at: r.get(19)?,
                batch_timeout: r.get(20)?,
                startup_command: r.get(21)?,
                bootstrap_script: r.get(22)?,
                environ: serde_json::from_str(&environ).map_err(|e| corrupt("environ", e))?,
                requested_slots: serde_json::from_str(&slots)
                    .map_err(|e| corrupt("requested_slots", e))?,
                shmem: shmem.max(0) as u64,
                designated_agent: r.get(29)?,
                dependencies: serde_json::from_str(&deps)
                    .map_err(|e| corrupt("dependencies", e))?,
                mounts: serde_json::from_str(&mounts).map_err(|e| corrupt("mounts", e))?,
                preopen_ports: serde_json::from_str(&preopen)
                    .map_err(|e| corrupt("preopen_ports", e))?,
                cluster_mode: cluster_mode
                    .parse()
                    .map_err(|e| corrupt("cluster_mode", e))?,
                cluster_size: u32::try_from(cluster_size.max(1))
                    .map_err(|e| corrupt("cluster_size", e))?,
                requeue: requeue != 0,
            },
            state: SessionState {
                status: status.parse().map_err(|e| corrupt("status", e))?,
                status_info: r.get(12)?,
                status_changed: r.get(13)?,
                status_history: serde_json::from_str(&hist)
                    .map_err(|e| corrupt("status_history", e))?,
                result: SessionResult::parse(&result),
                exit_code: r.get(16)?,
                terminated_at: r.get(18)?,
                agent_id: r.get(26)?,
                container_id: r.get(28)?,
                egress: match egress {
                    Some(e) => Some(serde_json::from_str(&e).map_err(|e| corrupt("egress", e))?),
                    None => None,
                },
                preempted_by: match preempted_by {
                    Some(p) => Some(Uuid::parse_str(&p).map_err(|e| corrupt("preempted_by", e))?),
                    None => None,
                },
            },
        })
    };
    Ok(build())
}

pub(crate) fn collect(
    rows: impl Iterator<Item = crate::db::Result<std::result::Result<SessionRow, StoreError>>>,
) -> Result<Vec<SessionRow>> {
    let mut out = Vec::new();
    for r in rows {
        out.push(r??);
    }
    Ok(out)
}

/// SQLite's `INDEXED BY` for a read of live sessions (the few) that also filters by owner:
/// through the index by status, not the owner's index, which holds every session the owner
/// ever ran. Empty on PostgreSQL, whose planner knows how many rows each status has.
pub(crate) fn by_status(engine: crate::db::Engine) -> &'static str {
    match engine {
        crate::db::Engine::Sqlite => "INDEXED BY sessions_by_status",
        crate::db::Engine::Postgres => "",
    }
}

pub(crate) fn status_list(statuses: &[SessionStatus]) -> String {
    statuses
        .iter()
        .map(|s| format!("'{}'", s.as_str()))
        .collect::<Vec<_>>()
        .join(",")
}

//! Reading sessions.

use super::{
    COLUMNS, PendingRow, SessionFilter, SessionRow, collect, corrupt, parse_row, status_list,
};
use crate::db::{OptionalExtension, params};
use crate::{Result, Store};
use bai_core::status::SessionStatus;
use uuid::Uuid;

impl Store {
    pub fn session(&self, id: Uuid) -> Result<Option<SessionRow>> {
        let r = self
            .read()
            .query_row(
                &format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"),
                [id.to_string()],
                parse_row,
            )
            .optional()?;
        r.transpose()
    }

    /// Resolves what a user typed: a UUID, else a name among the owner's sessions (the live
    /// one first, then the most recent), else a unique UUID prefix. `owner` None = any owner.
    pub fn find_session(&self, reference: &str, owner: Option<&str>) -> Result<Vec<SessionRow>> {
        let conn = self.read();
        if let Ok(id) = Uuid::parse_str(reference) {
            let mut st = conn.prepare(&format!(
                "SELECT {COLUMNS} FROM sessions WHERE id = ?1 AND (?2 IS NULL OR access_key = ?2)"
            ))?;
            return collect(st.query_map(params![id.to_string(), owner], parse_row)?);
        }
        let mut st = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM sessions WHERE name = ?1 AND (?2 IS NULL OR access_key = ?2)
             ORDER BY (status IN ('TERMINATED','CANCELLED')), created_at DESC"
        ))?;
        let by_name = collect(st.query_map(params![reference, owner], parse_row)?)?;
        if !by_name.is_empty() {
            return Ok(by_name);
        }
        if reference.len() >= 4
            && reference.len() < 36
            && reference.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
        {
            let mut st = conn.prepare(&format!(
                "SELECT {COLUMNS} FROM sessions WHERE id LIKE ?1 || '%' AND (?2 IS NULL OR access_key = ?2)
                 ORDER BY created_at DESC LIMIT 10"
            ))?;
            return collect(
                st.query_map(params![reference.to_ascii_lowercase(), owner], parse_row)?,
            );
        }
        Ok(Vec::new())
    }

    /// A live (not terminated/cancelled) session of this owner with this name.
    pub fn live_session_named(&self, access_key: &str, name: &str) -> Result<Option<SessionRow>> {
        let r = self
            .read()
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM sessions WHERE access_key = ?1 AND name = ?2
                     AND status NOT IN ('TERMINATED','CANCELLED') LIMIT 1"
                ),
                [access_key, name],
                parse_row,
            )
            .optional()?;
        r.transpose()
    }

    /// Sessions in the given statuses, most recently changed first.
    pub fn list_sessions(&self, f: &SessionFilter) -> Result<(Vec<SessionRow>, i64)> {
        let conn = self.read();
        let statuses = status_list(&f.statuses);
        let kind = if f.system { "=" } else { "!=" };
        let where_ = format!(
            "status IN ({statuses}) AND (?1 IS NULL OR access_key = ?1) AND type {kind} 'system'"
        );
        let total: i64 = conn.query_row(
            &format!("SELECT COUNT(*) FROM sessions WHERE {where_}"),
            params![f.access_key],
            |r| r.get(0),
        )?;
        let mut st = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM sessions WHERE {where_}
             ORDER BY status_changed DESC, created_at DESC LIMIT ?2 OFFSET ?3"
        ))?;
        let rows = collect(st.query_map(params![f.access_key, f.limit, f.offset], parse_row)?)?;
        Ok((rows, total))
    }

    /// The queue: every PENDING session, highest priority first, then oldest first.
    pub fn pending_queue(&self) -> Result<Vec<PendingRow>> {
        let conn = self.read();
        let mut st = conn.prepare_cached(
            "SELECT id, access_key, scaling_group, priority, created_at, requested_slots,
                starts_at, designated_agent, dependencies, status_info, image, mounts,
                CASE WHEN cluster_mode = 'multi-node' THEN cluster_size ELSE 1 END
             FROM sessions WHERE status = 'PENDING' ORDER BY priority DESC, created_at ASC",
        )?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, Option<String>>(6)?,
                r.get::<_, Option<String>>(7)?,
                r.get::<_, String>(8)?,
                r.get::<_, Option<String>>(9)?,
                r.get::<_, String>(10)?,
                r.get::<_, String>(11)?,
                r.get::<_, i64>(12)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (
                id,
                ak,
                group,
                priority,
                created,
                slots,
                starts,
                agent,
                deps,
                info,
                image,
                mounts,
                spread,
            ) = row?;
            let mount_paths = if mounts == "[]" {
                Vec::new()
            } else {
                serde_json::from_str::<Vec<bai_core::agent::Mount>>(&mounts)
                    .map_err(|e| corrupt("mounts", e))?
                    .into_iter()
                    .map(|m| m.host_path)
                    .collect()
            };
            out.push(PendingRow {
                id: Uuid::parse_str(&id).map_err(|e| corrupt("id", e))?,
                access_key: ak,
                scaling_group: group,
                priority,
                created_at: created,
                requested_slots: serde_json::from_str(&slots)
                    .map_err(|e| corrupt("requested_slots", e))?,
                starts_at: starts,
                designated_agent: agent,
                dependencies: if deps == "[]" {
                    Vec::new()
                } else {
                    serde_json::from_str(&deps).map_err(|e| corrupt("dependencies", e))?
                },
                status_info: info,
                image,
                mount_paths,
                kernels: u32::try_from(spread.clamp(1, 64)).unwrap_or(1),
            });
        }
        Ok(out)
    }

    /// Sessions in any of `statuses`, oldest first (scheduler and reconciliation).
    pub fn sessions_in(&self, statuses: &[SessionStatus]) -> Result<Vec<SessionRow>> {
        let conn = self.read();
        let mut st = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM sessions WHERE status IN ({})
             ORDER BY priority DESC, created_at ASC",
            status_list(statuses)
        ))?;
        collect(st.query_map([], parse_row)?)
    }

    /// The session a kernel (its main kernel or a sub kernel) belongs to.
    pub fn session_by_kernel(&self, kernel_id: Uuid) -> Result<Option<SessionRow>> {
        let r = self
            .read()
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM sessions WHERE main_kernel_id = ?1
                     OR id = (SELECT session_id FROM kernels WHERE id = ?1)"
                ),
                [kernel_id.to_string()],
                parse_row,
            )
            .optional()?;
        r.transpose()
    }
}

/// Sessions counted by status and type (for `/metrics`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionCount {
    pub status: String,
    pub session_type: String,
    pub count: i64,
}

/// The queue of one resource group (for `/metrics`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupQueue {
    pub group: String,
    pub pending: i64,
    /// When the longest-waiting PENDING session was created.
    pub oldest_created_at: String,
}

impl Store {
    pub fn session_counts(&self) -> Result<Vec<SessionCount>> {
        let conn = self.read();
        let mut st = conn.prepare(
            "SELECT status, type, COUNT(*) FROM sessions GROUP BY status, type ORDER BY status, type",
        )?;
        let rows = st.query_map([], |r| {
            Ok(SessionCount {
                status: r.get(0)?,
                session_type: r.get(1)?,
                count: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }

    pub fn queues(&self) -> Result<Vec<GroupQueue>> {
        let conn = self.read();
        let mut st = conn.prepare(
            "SELECT scaling_group, COUNT(*), MIN(created_at) FROM sessions
             WHERE status = 'PENDING' GROUP BY scaling_group ORDER BY scaling_group",
        )?;
        let rows = st.query_map([], |r| {
            Ok(GroupQueue {
                group: r.get(0)?,
                pending: r.get(1)?,
                oldest_created_at: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }
}

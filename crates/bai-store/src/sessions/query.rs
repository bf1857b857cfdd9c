//! Reading sessions.

use super::{
    COLUMNS, PendingRow, SessionFilter, SessionRow, by_status, collect, corrupt, parse_row,
    status_list,
};
use crate::db::{Engine, OptionalExtension, params};
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

    /// Sessions in the given statuses, most recently changed first, and how many there are
    /// in all. Costs the same with a hundred or a hundred thousand ended sessions: the ended
    /// ones are counted from the kept counts, the live ones (few) through the index by status,
    /// and a page is read from an index in the listing's order that holds what the filter
    /// reads (see [`Page`]).
    pub fn list_sessions(&self, f: &SessionFilter) -> Result<(Vec<SessionRow>, i64)> {
        let conn = self.read();
        let owner = if f.access_key.is_some() {
            "AND access_key = ?2"
        } else {
            "AND ?2 IS NULL"
        };
        let (ended, live): (Vec<SessionStatus>, Vec<SessionStatus>) = f
            .statuses
            .iter()
            .partition(|s| SessionStatus::LIST_DEAD.contains(s));
        let system = i64::from(f.system);
        let mut total: i64 = 0;
        if !ended.is_empty() {
            total += conn.query_row(
                &format!(
                    "SELECT COALESCE(SUM(n), 0) FROM ended_counts
                     WHERE status IN ({}) AND {KIND} {owner}",
                    status_list(&ended)
                ),
                params![system, f.access_key],
                |r| r.get::<_, i64>(0),
            )?;
        }
        if !live.is_empty() {
            total += conn.query_row(
                &format!(
                    "SELECT COUNT(*) FROM sessions {}
                     WHERE status IN ({}) AND {KIND} {owner}",
                    by_status(conn.engine()),
                    status_list(&live)
                ),
                params![system, f.access_key],
                |r| r.get::<_, i64>(0),
            )?;
        }
        let statuses = status_list(&f.statuses);
        let page = Page::of(f, total, conn.engine());
        let mut st = conn.prepare(&page.sql(&statuses, owner))?;
        let rows = match &f.after {
            None => st.query_map(
                params![system, f.access_key, page.limit, page.offset],
                parse_row,
            )?,
            Some(c) => st.query_map(
                params![
                    system,
                    f.access_key,
                    page.limit,
                    page.offset,
                    c.status_changed,
                    c.created_at,
                    c.id
                ],
                parse_row,
            )?,
        };
        Ok((collect(rows)?, total))
    }

    /// The queue: every PENDING session, highest priority first, then oldest first.
    pub fn pending_queue(&self) -> Result<Vec<PendingRow>> {
        let conn = self.read();
        let mut st = conn.prepare_cached(
            "SELECT id, access_key, scaling_group, priority, created_at, requested_slots,
                starts_at, designated_agent, dependencies, status_info, image, mounts,
                CASE WHEN cluster_mode = 'multi-node' THEN cluster_size ELSE 1 END,
                user_id, domain_name, group_name, batch_timeout, cluster_size
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
                r.get::<_, String>(13)?,
                r.get::<_, String>(14)?,
                r.get::<_, String>(15)?,
                r.get::<_, Option<i64>>(16)?,
                r.get::<_, i64>(17)?,
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
                user_id,
                domain_name,
                group_name,
                batch_timeout,
                cluster_size,
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
                user_id,
                domain_name,
                group_name,
                batch_timeout: batch_timeout.filter(|t| *t > 0),
                cluster_size: u32::try_from(cluster_size.clamp(1, 64)).unwrap_or(1),
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
    /// How many sessions there are of each status and type: the ended ones from the kept
    /// counts, the live ones through the index by status (never a scan of the history).
    pub fn session_counts(&self) -> Result<Vec<SessionCount>> {
        let conn = self.read();
        let live = crate::projects::live_sql();
        let mut st = conn.prepare(&format!(
            "SELECT status, type, SUM(n) FROM ended_counts GROUP BY status, type HAVING SUM(n) > 0
             UNION ALL
             SELECT status, type, COUNT(*) FROM sessions WHERE status IN ({live})
                GROUP BY status, type
             ORDER BY 1, 2"
        ))?;
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

/// A listing's filter on the kind of session: system sessions (?1 = 1) or all the others.
const KIND: &str = "(type = 'system') = (?1 = 1)";

/// How one page of a listing is read. The ids of the page are picked from an index in the
/// listing's order that holds every column the filter reads (status, kind, owner), so the
/// rows skipped by the offset are index entries, not sessions, and nothing is sorted; then
/// only the page's rows are read. A page past the middle is read from the other end (the
/// total is known), so the last page costs what the first does. A page after a cursor
/// starts right at the cursor's key in the index: nothing before it is walked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Page {
    /// `DESC` (from the newest) or `ASC` (from the oldest end).
    order: &'static str,
    limit: i64,
    offset: i64,
    /// SQLite's `INDEXED BY` (empty on PostgreSQL, whose planner has the statistics).
    index: &'static str,
    /// Only the sessions after a cursor (?5 status_changed, ?6 created_at, ?7 id).
    keyset: bool,
}

impl Page {
    pub(crate) fn of(f: &SessionFilter, total: i64, engine: Engine) -> Page {
        let (limit, offset) = (f.limit.max(0), f.offset.max(0));
        let keyset = f.after.is_some();
        let (order, limit, offset) = if keyset {
            ("DESC", limit, offset)
        } else if offset > total / 2 && offset < total {
            let limit = limit.min(total - offset);
            ("ASC", limit, total - offset - limit)
        } else {
            ("DESC", limit, offset)
        };
        // Live sessions are few however long the history: their listing is read by status
        // (and its handful of rows sorted), the ended ones' in order.
        let live = f
            .statuses
            .iter()
            .all(|s| !SessionStatus::LIST_DEAD.contains(s));
        let index = match (engine, live, f.access_key.is_some()) {
            (_, true, _) => by_status(engine),
            (Engine::Postgres, false, _) => "",
            (Engine::Sqlite, false, true) => "INDEXED BY sessions_by_owner",
            (Engine::Sqlite, false, false) => "INDEXED BY sessions_by_change",
        };
        Page {
            order,
            limit,
            offset,
            index,
            keyset,
        }
    }

    /// The page's statement: parameters ?1 system, ?2 owner, ?3 limit, ?4 offset.
    pub(crate) fn sql(&self, statuses: &str, owner: &str) -> String {
        format!(
            "SELECT {COLUMNS} FROM sessions WHERE id IN ({})
             ORDER BY status_changed DESC, created_at DESC, id DESC",
            self.ids_sql(statuses, owner)
        )
    }

    /// The ids of the page (read from the index alone).
    fn ids_sql(&self, statuses: &str, owner: &str) -> String {
        let Page {
            order: o,
            index,
            keyset,
            ..
        } = self;
        // After the cursor, in the listing's order (the newest change first). The first term
        // bounds the index range; the rest orders the few sessions changed at the same time.
        let after = if *keyset {
            "AND status_changed <= ?5
             AND (status_changed < ?5 OR created_at < ?6 OR (created_at = ?6 AND id < ?7))"
        } else {
            ""
        };
        format!(
            "SELECT id FROM sessions {index}
             WHERE status IN ({statuses}) AND {KIND} {owner} {after}
             ORDER BY status_changed {o}, created_at {o}, id {o} LIMIT ?3 OFFSET ?4"
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::SessionCursor;

    /// SQLite's plan of a page's ids: `detail` of each step.
    fn plan(store: &Store, page: &Page, owner: &str) -> String {
        let statuses = status_list(&SessionStatus::LIST_DEAD);
        let conn = store.read();
        let mut st = conn
            .prepare(&format!(
                "EXPLAIN QUERY PLAN {}",
                page.ids_sql(&statuses, owner)
            ))
            .unwrap();
        let detail = |r: &crate::db::Row<'_>| r.get::<_, String>(3);
        let steps = if page.keyset {
            st.query_map(params![0, "AK", 20, 0, "a", "b", "c"], detail)
        } else {
            st.query_map(params![0, "AK", 20, 0], detail)
        };
        steps
            .unwrap()
            .map(|r| r.unwrap())
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The ended sessions' pages are read from a covering index in their order: nothing is
    /// sorted and no row is read for the rows an offset skips.
    #[test]
    fn an_ended_page_is_read_in_order_from_a_covering_index() {
        let store = Store::open_in_memory().unwrap();
        for (owner, sql, index) in [
            (Some("AK"), "AND access_key = ?2", "sessions_by_owner"),
            (None, "AND ?2 IS NULL", "sessions_by_change"),
        ] {
            let f = SessionFilter {
                statuses: SessionStatus::LIST_DEAD.to_vec(),
                access_key: owner.map(str::to_string),
                system: false,
                limit: 20,
                offset: 0,
                after: None,
            };
            let page = Page::of(&f, 100_000, Engine::Sqlite);
            let p = plan(&store, &page, sql);
            assert!(p.contains(&format!("COVERING INDEX {index}")), "{p}");
            assert!(!p.contains("TEMP B-TREE"), "{p}");
        }
    }

    /// A page after a cursor starts at the cursor's key: a range of the covering index,
    /// in order, nothing sorted.
    #[test]
    fn a_page_after_a_cursor_is_a_range_of_the_covering_index() {
        let store = Store::open_in_memory().unwrap();
        for (owner, sql, index, range) in [
            (
                Some("AK"),
                "AND access_key = ?2",
                "sessions_by_owner",
                "access_key=? AND status_changed<?",
            ),
            (
                None,
                "AND ?2 IS NULL",
                "sessions_by_change",
                "status_changed<?",
            ),
        ] {
            let f = SessionFilter {
                statuses: SessionStatus::LIST_DEAD.to_vec(),
                access_key: owner.map(str::to_string),
                limit: 20,
                after: Some(SessionCursor {
                    status_changed: "2026-11-28T00:00:00".into(),
                    created_at: "2026-11-28T00:00:00".into(),
                    id: "x".into(),
                }),
                ..Default::default()
            };
            let page = Page::of(&f, 100_000, Engine::Sqlite);
            let p = plan(&store, &page, sql);
            assert!(
                p.contains(&format!("COVERING INDEX {index} ({range})")),
                "{p}"
            );
            assert!(!p.contains("TEMP B-TREE"), "{p}");
        }
    }

    /// Past the middle a page is read from the oldest end: the same rows, fewer skipped.
    #[test]
    fn a_deep_page_is_read_from_the_other_end() {
        let f = |offset, limit| SessionFilter {
            statuses: SessionStatus::LIST_DEAD.to_vec(),
            access_key: None,
            system: false,
            limit,
            offset,
            after: None,
        };
        let p = Page::of(&f(99_990, 20), 100_000, Engine::Postgres);
        assert_eq!((p.order, p.limit, p.offset), ("ASC", 10, 0));
        let p = Page::of(&f(60_000, 20), 100_000, Engine::Postgres);
        assert_eq!((p.order, p.limit, p.offset), ("ASC", 20, 39_980));
        let p = Page::of(&f(40_000, 20), 100_000, Engine::Postgres);
        assert_eq!((p.order, p.limit, p.offset), ("DESC", 20, 40_000));
        let p = Page::of(&f(100_000, 20), 100_000, Engine::Postgres);
        assert_eq!((p.order, p.offset), ("DESC", 100_000));
    }
}

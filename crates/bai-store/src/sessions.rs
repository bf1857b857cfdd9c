//! Sessions, their scheduling history and their persisted events.

use crate::{Result, Store, StoreError, now_str};
use bai_core::event::{EventKind, SessionEvent};
use bai_core::history::{HistoryRecord, HistoryResult};
use bai_core::resources::ResourceSlots;
use bai_core::status::{SessionResult, SessionStatus, SessionType};
use rusqlite::{OptionalExtension, Row, params};
use std::collections::BTreeMap;
use uuid::Uuid;

/// One session as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub id: Uuid,
    pub name: String,
    pub access_key: String,
    pub user_id: String,
    pub domain_name: String,
    pub group_name: String,
    pub scaling_group: String,
    pub session_type: SessionType,
    pub image: String,
    pub tag: Option<String>,
    pub priority: i64,
    pub status: SessionStatus,
    pub status_info: Option<String>,
    pub status_changed: String,
    /// First time each status was entered.
    pub status_history: BTreeMap<String, String>,
    pub result: SessionResult,
    pub exit_code: Option<i32>,
    pub created_at: String,
    pub terminated_at: Option<String>,
    pub starts_at: Option<String>,
    pub batch_timeout: Option<i64>,
    pub startup_command: Option<String>,
    pub bootstrap_script: Option<String>,
    pub environ: BTreeMap<String, String>,
    pub requested_slots: ResourceSlots,
    pub shmem: u64,
    pub agent_id: Option<String>,
    pub main_kernel_id: Uuid,
    pub container_id: Option<String>,
    /// "Select Agent": only this agent may take the session.
    pub designated_agent: Option<String>,
    /// Sessions that must end successfully before this one is scheduled.
    pub dependencies: Vec<Uuid>,
    /// Data folders mounted into the session.
    pub mounts: Vec<bai_core::agent::Mount>,
    /// Container ports opened as apps (1024–65535).
    pub preopen_ports: Vec<u16>,
}

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
}

/// What a create request stores.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub id: Uuid,
    pub name: String,
    pub access_key: String,
    pub user_id: String,
    pub domain_name: String,
    pub group_name: String,
    pub scaling_group: String,
    pub session_type: SessionType,
    pub image: String,
    pub tag: Option<String>,
    pub priority: i64,
    pub starts_at: Option<String>,
    pub batch_timeout: Option<i64>,
    pub startup_command: Option<String>,
    pub bootstrap_script: Option<String>,
    pub environ: BTreeMap<String, String>,
    pub requested_slots: ResourceSlots,
    pub shmem: u64,
    pub main_kernel_id: Uuid,
    pub designated_agent: Option<String>,
    pub dependencies: Vec<Uuid>,
    pub mounts: Vec<bai_core::agent::Mount>,
    /// Container ports opened as apps (1024–65535).
    pub preopen_ports: Vec<u16>,
}

/// A status change, written together with its history record and its events.
#[derive(Debug, Clone)]
pub struct StatusChange<'a> {
    pub from: SessionStatus,
    pub to: SessionStatus,
    pub info: &'a str,
    pub phase: &'a str,
    pub events: &'a [EventKind],
    pub result: Option<SessionResult>,
    pub exit_code: Option<i32>,
    pub agent_id: Option<&'a str>,
    pub container_id: Option<&'a str>,
    /// History result; by default SUCCESS (FAILURE for a change to ERROR).
    pub history_result: Option<HistoryResult>,
    pub error_code: Option<&'a str>,
    /// The scheduler's sub-steps as a JSON array.
    pub sub_steps: &'a str,
}

impl<'a> StatusChange<'a> {
    pub fn new(from: SessionStatus, to: SessionStatus, info: &'a str, phase: &'a str) -> Self {
        StatusChange {
            from,
            to,
            info,
            phase,
            events: &[],
            result: None,
            exit_code: None,
            agent_id: None,
            container_id: None,
            history_result: None,
            error_code: None,
            sub_steps: "[]",
        }
    }
    /// Records the history with this result and error code (e.g. GIVE_UP).
    pub fn outcome(mut self, r: HistoryResult, error_code: &'a str) -> Self {
        self.history_result = Some(r);
        self.error_code = Some(error_code);
        self
    }
    pub fn steps(mut self, json: &'a str) -> Self {
        self.sub_steps = json;
        self
    }
    pub fn events(mut self, e: &'a [EventKind]) -> Self {
        self.events = e;
        self
    }
    pub fn result(mut self, r: SessionResult, exit_code: Option<i32>) -> Self {
        self.result = Some(r);
        self.exit_code = exit_code;
        self
    }
    pub fn agent(mut self, a: &'a str) -> Self {
        self.agent_id = Some(a);
        self
    }
    pub fn container(mut self, c: &'a str) -> Self {
        self.container_id = Some(c);
        self
    }
}

#[derive(Debug, Clone, Default)]
pub struct SessionFilter {
    pub statuses: Vec<SessionStatus>,
    /// Restrict to one owner (None = everyone; admins only).
    pub access_key: Option<String>,
    pub limit: i64,
    pub offset: i64,
}

pub(crate) const COLUMNS: &str = "id, name, access_key, user_id, domain_name, group_name, scaling_group, type, \
    image, tag, priority, status, status_info, status_changed, status_history, result, exit_code, \
    created_at, terminated_at, starts_at, batch_timeout, startup_command, bootstrap_script, environ, \
    requested_slots, shmem, agent_id, main_kernel_id, container_id, designated_agent, dependencies, mounts, preopen_ports";

pub(crate) fn corrupt(column: &'static str, detail: impl ToString) -> StoreError {
    StoreError::Corrupt {
        column,
        detail: detail.to_string(),
    }
}

pub(crate) fn parse_row(
    r: &Row<'_>,
) -> rusqlite::Result<std::result::Result<SessionRow, StoreError>> {
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
    let build = || -> std::result::Result<SessionRow, StoreError> {
        Ok(SessionRow {
            id: Uuid::parse_str(&id).map_err(|e| corrupt("id", e))?,
            name: r.get(1)?,
            access_key: r.get(2)?,
            user_id: r.get(3)?,
            domain_name: r.get(4)?,
            group_name: r.get(5)?,
            scaling_group: r.get(6)?,
            session_type: ty.parse().map_err(|e: String| corrupt("type", e))?,
            image: r.get(8)?,
            tag: r.get(9)?,
            priority: r.get(10)?,
            status: status.parse().map_err(|e| corrupt("status", e))?,
            status_info: r.get(12)?,
            status_changed: r.get(13)?,
            status_history: serde_json::from_str(&hist)
                .map_err(|e| corrupt("status_history", e))?,
            result: SessionResult::parse(&result),
            exit_code: r.get(16)?,
            created_at: r.get(17)?,
            terminated_at: r.get(18)?,
            starts_at: r.get(19)?,
            batch_timeout: r.get(20)?,
            startup_command: r.get(21)?,
            bootstrap_script: r.get(22)?,
            environ: serde_json::from_str(&environ).map_err(|e| corrupt("environ", e))?,
            requested_slots: serde_json::from_str(&slots)
                .map_err(|e| corrupt("requested_slots", e))?,
            shmem: shmem.max(0) as u64,
            agent_id: r.get(26)?,
            main_kernel_id: Uuid::parse_str(&kid).map_err(|e| corrupt("main_kernel_id", e))?,
            container_id: r.get(28)?,
            designated_agent: r.get(29)?,
            dependencies: serde_json::from_str(&deps).map_err(|e| corrupt("dependencies", e))?,
            mounts: serde_json::from_str(&mounts).map_err(|e| corrupt("mounts", e))?,
            preopen_ports: serde_json::from_str(&preopen)
                .map_err(|e| corrupt("preopen_ports", e))?,
        })
    };
    Ok(build())
}

fn collect(
    rows: impl Iterator<Item = rusqlite::Result<std::result::Result<SessionRow, StoreError>>>,
) -> Result<Vec<SessionRow>> {
    let mut out = Vec::new();
    for r in rows {
        out.push(r??);
    }
    Ok(out)
}

fn status_list(statuses: &[SessionStatus]) -> String {
    statuses
        .iter()
        .map(|s| format!("'{}'", s.as_str()))
        .collect::<Vec<_>>()
        .join(",")
}

impl Store {
    /// Inserts a PENDING session with its first history record and `session_enqueued` event.
    pub fn insert_session(&self, s: &NewSession) -> Result<SessionEvent> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let now = now_str();
        let hist = serde_json::json!({ "PENDING": now }).to_string();
        let environ = serde_json::to_string(&s.environ).map_err(|e| corrupt("environ", e))?;
        let slots =
            serde_json::to_string(&s.requested_slots).map_err(|e| corrupt("requested_slots", e))?;
        let deps =
            serde_json::to_string(&s.dependencies).map_err(|e| corrupt("dependencies", e))?;
        let mounts = serde_json::to_string(&s.mounts).map_err(|e| corrupt("mounts", e))?;
        let preopen =
            serde_json::to_string(&s.preopen_ports).map_err(|e| corrupt("preopen_ports", e))?;
        tx.execute(
            "INSERT INTO sessions(id, name, access_key, user_id, domain_name, group_name,
                scaling_group, type, image, tag, priority, status, status_info, status_changed,
                status_history, created_at, starts_at, batch_timeout, startup_command,
                bootstrap_script, environ, requested_slots, shmem, main_kernel_id,
                designated_agent, dependencies, mounts, preopen_ports)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 'PENDING', 'enqueued', ?12,
                ?13, ?12, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)",
            params![
                s.id.to_string(),
                s.name,
                s.access_key,
                s.user_id,
                s.domain_name,
                s.group_name,
                s.scaling_group,
                s.session_type.as_str(),
                s.image,
                s.tag,
                s.priority,
                now,
                hist,
                s.starts_at,
                s.batch_timeout,
                s.startup_command,
                s.bootstrap_script,
                environ,
                slots,
                s.shmem as i64,
                s.main_kernel_id.to_string(),
                s.designated_agent,
                deps,
                mounts,
                preopen,
            ],
        )?;
        add_history_tx(
            &tx,
            s.id,
            "enqueue",
            HistoryResult::Success,
            None,
            Some(SessionStatus::Pending),
            None,
            "session accepted and queued",
            &now,
        )?;
        let ev = insert_event_tx(
            &tx,
            EventKind::SessionEnqueued,
            s.id,
            &s.name,
            &s.access_key,
            "enqueued",
            None,
            None,
            &now,
        )?;
        tx.commit()?;
        Ok(ev)
    }

    /// Compare-and-set of a session's status, with its history record and events, in one
    /// transaction. Returns `None` (and changes nothing) when the session is no longer in
    /// `change.from` — someone else moved it first.
    pub fn cas_status(
        &self,
        id: Uuid,
        change: &StatusChange<'_>,
    ) -> Result<Option<(SessionRow, Vec<SessionEvent>)>> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let out = cas_status_tx(&tx, id, change, &now_str())?;
        if out.is_some() {
            tx.commit()?;
        }
        Ok(out)
    }

    pub fn session(&self, id: Uuid) -> Result<Option<SessionRow>> {
        let r = self
            .conn()
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
        let conn = self.conn();
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
            .conn()
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
        let conn = self.conn();
        let statuses = status_list(&f.statuses);
        let where_ = format!("status IN ({statuses}) AND (?1 IS NULL OR access_key = ?1)");
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
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT id, access_key, scaling_group, priority, created_at, requested_slots,
                starts_at, designated_agent, dependencies, status_info
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
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, ak, group, priority, created, slots, starts, agent, deps, info) = row?;
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
            });
        }
        Ok(out)
    }

    /// Sessions in any of `statuses`, oldest first (scheduler and reconciliation).
    pub fn sessions_in(&self, statuses: &[SessionStatus]) -> Result<Vec<SessionRow>> {
        let conn = self.conn();
        let mut st = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM sessions WHERE status IN ({})
             ORDER BY priority DESC, created_at ASC",
            status_list(statuses)
        ))?;
        collect(st.query_map([], parse_row)?)
    }

    pub fn session_by_kernel(&self, kernel_id: Uuid) -> Result<Option<SessionRow>> {
        let r = self
            .conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM sessions WHERE main_kernel_id = ?1"),
                [kernel_id.to_string()],
                parse_row,
            )
            .optional()?;
        r.transpose()
    }

    /// Updates why a session is where it is, without a status change (e.g. why PENDING).
    pub fn set_status_info(&self, id: Uuid, info: &str) -> Result<()> {
        self.conn().execute(
            "UPDATE sessions SET status_info = ?2 WHERE id = ?1 AND (status_info IS NULL OR status_info != ?2)",
            params![id.to_string(), info],
        )?;
        Ok(())
    }

    pub fn rename_session(&self, id: Uuid, new_name: &str) -> Result<bool> {
        Ok(self.conn().execute(
            "UPDATE sessions SET name = ?2 WHERE id = ?1",
            params![id.to_string(), new_name],
        )? == 1)
    }

    /// Keeps the output of a session's kernel (it outlives the container).
    pub fn set_logs(&self, id: Uuid, logs: &str) -> Result<()> {
        self.set_kept(id, Kept::Logs, logs)
    }

    pub fn logs(&self, id: Uuid) -> Result<Option<String>> {
        self.kept(id, Kept::Logs)
    }

    /// Keeps the last counters of a session that ended (a JSON text, Backend.AI's `last_stat`).
    pub fn set_last_stat(&self, id: Uuid, stat: &str) -> Result<()> {
        self.set_kept(id, Kept::LastStat, stat)
    }

    pub fn last_stat(&self, id: Uuid) -> Result<Option<String>> {
        self.kept(id, Kept::LastStat)
    }

    fn set_kept(&self, id: Uuid, what: Kept, text: &str) -> Result<()> {
        self.conn().execute(
            &format!("UPDATE sessions SET {} = ?2 WHERE id = ?1", what.column()),
            params![id.to_string(), text],
        )?;
        Ok(())
    }

    fn kept(&self, id: Uuid, what: Kept) -> Result<Option<String>> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {} FROM sessions WHERE id = ?1", what.column()),
                [id.to_string()],
                |r| r.get::<_, Option<String>>(0),
            )
            .optional()?
            .flatten())
    }

    /// Adds a history record, or bumps `attempts` of the last one when it says the same thing.
    pub fn add_history(
        &self,
        session_id: Uuid,
        phase: &str,
        result: HistoryResult,
        error_code: Option<&str>,
        message: &str,
    ) -> Result<()> {
        let conn = self.conn();
        add_history_tx(
            &conn,
            session_id,
            phase,
            result,
            None,
            None,
            error_code,
            message,
            &now_str(),
        )
    }

    pub fn history(&self, session_id: Uuid) -> Result<Vec<HistoryRecord>> {
        let conn = self.conn();
        let mut st = conn.prepare(
            "SELECT id, phase, result, from_status, to_status, error_code, message, attempts,
                    created_at, updated_at, sub_steps
             FROM scheduling_history WHERE session_id = ?1 ORDER BY id",
        )?;
        let rows = st.query_map([session_id.to_string()], |r| {
            let result: String = r.get(2)?;
            Ok(HistoryRecord {
                id: r.get(0)?,
                session_id,
                phase: r.get(1)?,
                result: parse_history_result(&result),
                from_status: r.get(3)?,
                to_status: r.get(4)?,
                error_code: r.get(5)?,
                message: r.get(6)?,
                attempts: r.get(7)?,
                created_at: r.get(8)?,
                updated_at: r.get(9)?,
                sub_steps: serde_json::from_str(&r.get::<_, String>(10)?)
                    .unwrap_or(serde_json::Value::Array(Vec::new())),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Persisted events of one session, oldest first.
    pub fn events_of(&self, session_id: Uuid) -> Result<Vec<SessionEvent>> {
        let conn = self.conn();
        let mut st = conn.prepare(
            "SELECT seq, kind, session_id, session_name, access_key, reason, exit_code, kernel_id
             FROM events WHERE session_id = ?1 ORDER BY seq",
        )?;
        let rows = st.query_map([session_id.to_string()], |r| {
            let kind: String = r.get(1)?;
            let sid: String = r.get(2)?;
            let kid: Option<String> = r.get(7)?;
            Ok((
                r.get(0)?,
                kind,
                sid,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                kid,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, kind, sid, name, ak, reason, exit_code, kid): (
                i64,
                String,
                String,
                String,
                String,
                String,
                Option<i32>,
                Option<String>,
            ) = row?;
            let Some(kind) = EventKind::parse(&kind) else {
                continue;
            };
            out.push(SessionEvent {
                seq,
                kind,
                session_id: Uuid::parse_str(&sid).map_err(|e| corrupt("session_id", e))?,
                session_name: name,
                access_key: ak,
                reason,
                exit_code,
                kernel_id: kid.and_then(|k| Uuid::parse_str(&k).ok()),
            });
        }
        Ok(out)
    }

    /// Appends events that come without a status change (e.g. `session_success`).
    pub fn add_events(
        &self,
        row: &SessionRow,
        kinds: &[EventKind],
        reason: &str,
    ) -> Result<Vec<SessionEvent>> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let now = now_str();
        let mut out = Vec::new();
        for k in kinds {
            out.push(insert_event_tx(
                &tx,
                *k,
                row.id,
                &row.name,
                &row.access_key,
                reason,
                row.exit_code,
                k.is_kernel().then_some(row.main_kernel_id),
                &now,
            )?);
        }
        tx.commit()?;
        Ok(out)
    }

    /// Drops events older than `keep_secs` (events are kept for a bounded time).
    pub fn prune_events(&self, keep_secs: i64) -> Result<usize> {
        let cutoff = (chrono::Utc::now() - chrono::Duration::seconds(keep_secs))
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, false);
        Ok(self
            .conn()
            .execute("DELETE FROM events WHERE created_at < ?1", [cutoff])?)
    }
}

/// [`Store::cas_status`] inside a caller's transaction (not committed here).
pub(crate) fn cas_status_tx(
    tx: &rusqlite::Transaction<'_>,
    id: Uuid,
    change: &StatusChange<'_>,
    now: &str,
) -> Result<Option<(SessionRow, Vec<SessionEvent>)>> {
    let now = now.to_string();
    let row = tx
        .prepare_cached(&format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"))?
        .query_row([id.to_string()], parse_row)
        .optional()?;
    let Some(row) = row else { return Ok(None) };
    let mut row = row?;
    if row.status != change.from {
        return Ok(None);
    }
    row.status_history
        .entry(change.to.as_str().to_string())
        .or_insert_with(|| now.clone());
    let hist = serde_json::to_string(&row.status_history).map_err(|e| corrupt("hist", e))?;
    let terminated_at = if change.to.is_terminal() {
        Some(now.clone())
    } else {
        row.terminated_at.clone()
    };
    let result = change.result.unwrap_or(row.result);
    let exit_code = change.exit_code.or(row.exit_code);
    let agent_id = change.agent_id.map(str::to_string).or(row.agent_id.clone());
    let container_id = change
        .container_id
        .map(str::to_string)
        .or(row.container_id.clone());
    tx.prepare_cached(
        "UPDATE sessions SET status = ?2, status_info = ?3, status_changed = ?4,
        status_history = ?5, terminated_at = ?6, result = ?7, exit_code = ?8,
        agent_id = ?9, container_id = ?10
         WHERE id = ?1 AND status = ?11",
    )?
    .execute(params![
        id.to_string(),
        change.to.as_str(),
        change.info,
        now,
        hist,
        terminated_at,
        result.as_str(),
        exit_code,
        agent_id,
        container_id,
        change.from.as_str(),
    ])?;
    let is_error = matches!(change.to, SessionStatus::Error);
    let history_result = change.history_result.unwrap_or(if is_error {
        HistoryResult::Failure
    } else {
        HistoryResult::Success
    });
    let error_code = change.error_code.or(is_error.then_some(change.info));
    add_history_with_steps_tx(
        tx,
        id,
        change.phase,
        history_result,
        Some(change.from),
        Some(change.to),
        error_code,
        change.info,
        change.sub_steps,
        &now,
    )?;
    let mut events = Vec::new();
    for kind in change.events {
        let kernel = kind.is_kernel().then_some(row.main_kernel_id);
        events.push(insert_event_tx(
            tx,
            *kind,
            id,
            &row.name,
            &row.access_key,
            change.info,
            exit_code,
            kernel,
            &now,
        )?);
    }
    row.status = change.to;
    row.status_info = Some(change.info.to_string());
    row.status_changed = now;
    row.terminated_at = terminated_at;
    row.result = result;
    row.exit_code = exit_code;
    row.agent_id = agent_id;
    row.container_id = container_id;
    Ok(Some((row, events)))
}

fn parse_history_result(s: &str) -> HistoryResult {
    match s {
        "SUCCESS" => HistoryResult::Success,
        "FAILURE" => HistoryResult::Failure,
        "STALE" => HistoryResult::Stale,
        "NEED_RETRY" => HistoryResult::NeedRetry,
        "EXPIRED" => HistoryResult::Expired,
        "GIVE_UP" => HistoryResult::GiveUp,
        _ => HistoryResult::Skipped,
    }
}

/// id, phase, result, from, to, error code, message of the latest history record.
type LastRecord = (
    i64,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
);

#[allow(clippy::too_many_arguments)]
fn add_history_tx(
    conn: &rusqlite::Connection,
    session_id: Uuid,
    phase: &str,
    result: HistoryResult,
    from: Option<SessionStatus>,
    to: Option<SessionStatus>,
    error_code: Option<&str>,
    message: &str,
    now: &str,
) -> Result<()> {
    add_history_with_steps_tx(
        conn, session_id, phase, result, from, to, error_code, message, "[]", now,
    )
}

/// Adds a history record, merging it into the last one of the session when that is the same
/// attempt again (same phase, result, from/to status and error code): `attempts += 1`, and
/// its message and sub-steps become the latest.
#[allow(clippy::too_many_arguments)]
pub(crate) fn add_history_with_steps_tx(
    conn: &rusqlite::Connection,
    session_id: Uuid,
    phase: &str,
    result: HistoryResult,
    from: Option<SessionStatus>,
    to: Option<SessionStatus>,
    error_code: Option<&str>,
    message: &str,
    sub_steps: &str,
    now: &str,
) -> Result<()> {
    let last: Option<LastRecord> = conn
        .prepare_cached(
            "SELECT id, phase, result, from_status, to_status, error_code, message
             FROM scheduling_history WHERE session_id = ?1 ORDER BY id DESC LIMIT 1",
        )?
        .query_row([session_id.to_string()], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })
        .optional()?;
    let from_s = from.map(|s| s.as_str().to_string());
    let to_s = to.map(|s| s.as_str().to_string());
    if let Some((id, p, r, f, t, e, _)) = last
        && p == phase
        && r == result.as_str()
        && f == from_s
        && t == to_s
        && e.as_deref() == error_code
    {
        conn.prepare_cached(
            "UPDATE scheduling_history SET attempts = attempts + 1, updated_at = ?2,
                message = ?3, sub_steps = ?4 WHERE id = ?1",
        )?
        .execute(params![id, now, message, sub_steps])?;
        return Ok(());
    }
    insert_history_tx(
        conn,
        session_id,
        phase,
        result,
        from_s.as_deref(),
        to_s.as_deref(),
        error_code,
        message,
        sub_steps,
        now,
    )
}

/// A new history record (`attempts` 1), never merged.
#[allow(clippy::too_many_arguments)]
pub(crate) fn insert_history_tx(
    conn: &rusqlite::Connection,
    session_id: Uuid,
    phase: &str,
    result: HistoryResult,
    from: Option<&str>,
    to: Option<&str>,
    error_code: Option<&str>,
    message: &str,
    sub_steps: &str,
    now: &str,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO scheduling_history(session_id, phase, result, from_status, to_status,
            error_code, message, attempts, created_at, updated_at, sub_steps)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8, ?8, ?9)",
    )?
    .execute(params![
        session_id.to_string(),
        phase,
        result.as_str(),
        from,
        to,
        error_code,
        message,
        now,
        sub_steps
    ])?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn insert_event_tx(
    conn: &rusqlite::Connection,
    kind: EventKind,
    session_id: Uuid,
    name: &str,
    access_key: &str,
    reason: &str,
    exit_code: Option<i32>,
    kernel_id: Option<Uuid>,
    now: &str,
) -> Result<SessionEvent> {
    conn.prepare_cached(
        "INSERT INTO events(kind, session_id, session_name, access_key, reason, exit_code,
            kernel_id, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        kind.as_str(),
        session_id.to_string(),
        name,
        access_key,
        reason,
        exit_code,
        kernel_id.map(|k| k.to_string()),
        now
    ])?;
    Ok(SessionEvent {
        seq: conn.last_insert_rowid(),
        kind,
        session_id,
        session_name: name.to_string(),
        access_key: access_key.to_string(),
        reason: reason.to_string(),
        exit_code,
        kernel_id,
    })
}

/// What a session keeps after its kernel is gone (a text column each).
#[derive(Debug, Clone, Copy)]
enum Kept {
    Logs,
    LastStat,
}

impl Kept {
    fn column(self) -> &'static str {
        match self {
            Kept::Logs => "logs",
            Kept::LastStat => "last_stat",
        }
    }
}

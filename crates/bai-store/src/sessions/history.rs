//! The scheduling history of sessions and their persisted events.

use super::corrupt;
use crate::db::{OptionalExtension, params};
use crate::{Result, SessionRow, Store, now_str};
use bai_core::event::{EventKind, SessionEvent};
use bai_core::history::{HistoryRecord, HistoryResult};
use bai_core::status::SessionStatus;
use uuid::Uuid;

impl Store {
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
        let conn = self.read();
        let mut st = conn.prepare(
            "SELECT uuid, phase, result, from_status, to_status, error_code, message, attempts,
                    created_at, updated_at, sub_steps
             FROM scheduling_history WHERE session_id = ?1 ORDER BY id",
        )?;
        let rows = st.query_map([session_id.to_string()], |r| {
            let result: String = r.get(2)?;
            let from: Option<String> = r.get(3)?;
            let to: Option<String> = r.get(4)?;
            let steps: String = r.get(10)?;
            let uuid: Option<String> = r.get(0)?;
            let record = HistoryRecord {
                id: uuid
                    .and_then(|u| Uuid::parse_str(&u).ok())
                    .unwrap_or_else(Uuid::nil),
                session_id,
                phase: r.get(1)?,
                result: parse_history_result(&result),
                from_status: None,
                to_status: None,
                error_code: r.get(5)?,
                message: r.get(6)?,
                attempts: r.get(7)?,
                created_at: r.get(8)?,
                updated_at: r.get(9)?,
                sub_steps: Vec::new(),
            };
            Ok((record, from, to, steps))
        })?;
        let status = |s: Option<String>, column| {
            s.map(|s| {
                s.parse::<SessionStatus>()
                    .map_err(|e| super::corrupt(column, e))
            })
            .transpose()
        };
        let mut out = Vec::new();
        for row in rows {
            let (mut record, from, to, steps) = row?;
            record.from_status = status(from, "scheduling_history.from_status")?;
            record.to_status = status(to, "scheduling_history.to_status")?;
            record.sub_steps = serde_json::from_str(&steps)
                .map_err(|e| super::corrupt("scheduling_history.sub_steps", e))?;
            out.push(record);
        }
        Ok(out)
    }

    /// Persisted events of one session, oldest first.
    pub fn events_of(&self, session_id: Uuid) -> Result<Vec<SessionEvent>> {
        let conn = self.read();
        let mut st = conn.prepare(&format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE session_id = ?1 ORDER BY seq"
        ))?;
        let rows = st.query_map([session_id.to_string()], event_row)?;
        decode_events(rows)
    }

    /// Persisted events after `after` (an event's `seq`, the SSE id a reconnecting client
    /// sends), oldest first, at most `limit`; only `access_key`'s when given. It reads the
    /// primary key from `after` on, so it costs what it returns, not the history before it.
    pub fn events_since(
        &self,
        after: i64,
        access_key: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SessionEvent>> {
        let conn = self.read();
        let mut st = conn.prepare(&format!(
            "SELECT {EVENT_COLUMNS} FROM events
             WHERE seq > ?1 AND (?2 IS NULL OR access_key = ?2)
             ORDER BY seq LIMIT ?3"
        ))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = st.query_map(params![after, access_key, limit], event_row)?;
        decode_events(rows)
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
                &row.spec.access_key,
                reason,
                row.state.exit_code,
                k.is_kernel().then_some(row.main_kernel_id),
                &now,
            )?);
        }
        tx.commit()?;
        Ok(out)
    }

    /// Records `kind` for one kernel of a cluster session (which kernel is being made, is up,
    /// has ended), with that kernel's id.
    pub fn add_kernel_event(
        &self,
        row: &SessionRow,
        kind: EventKind,
        kernel_id: Uuid,
        reason: &str,
        exit_code: Option<i32>,
    ) -> Result<SessionEvent> {
        let conn = self.conn();
        insert_event_tx(
            &conn,
            kind,
            row.id,
            &row.name,
            &row.spec.access_key,
            reason,
            exit_code,
            Some(kernel_id),
            &now_str(),
        )
    }

    /// Drops the details of the sessions that ended before `before` (an RFC 3339 time): their
    /// scheduling history records, their events and their logs. Each session's row (its
    /// summary: owner, image, resources, status, times, result, exit code) and its kernels
    /// stay, listed and shown as before. Returns how many sessions lost their details.
    /// Sessions pruned once are not read again: the sweep starts where the last one ended.
    pub fn prune_ended_details(&self, before: &str) -> Result<usize> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let since: String = tx
            .query_row(
                "SELECT value FROM meta WHERE key = 'details_pruned_until'",
                [],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or_default();
        if before <= since.as_str() {
            return Ok(0);
        }
        let ended = format!(
            "SELECT id FROM sessions WHERE status_changed >= ?1 AND status_changed < ?2
                AND status IN ({})",
            super::status_list(&SessionStatus::LIST_DEAD)
        );
        let window = [since.as_str(), before];
        tx.execute(
            &format!("DELETE FROM scheduling_history WHERE session_id IN ({ended})"),
            window,
        )?;
        tx.execute(
            &format!("DELETE FROM events WHERE session_id IN ({ended})"),
            window,
        )?;
        tx.execute(
            &format!("UPDATE kernels SET logs = NULL WHERE session_id IN ({ended})"),
            window,
        )?;
        let n = tx.execute(
            &format!("UPDATE sessions SET logs = NULL WHERE id IN ({ended})"),
            window,
        )?;
        tx.execute(
            "INSERT INTO meta(key, value) VALUES ('details_pruned_until', ?1)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [before],
        )?;
        tx.commit()?;
        Ok(n)
    }

    /// Drops events older than `keep_secs` (events are kept for a bounded time): those
    /// before the first event that young. Events are written in time order (`seq` grows with
    /// `created_at`), so this reads the old events and one more, where a filter on
    /// `created_at` (no index) read the whole table at every sweep, and on SQLite filled the
    /// writer's page cache with it (32 MiB with 20,000 ended sessions, back 5 s after any
    /// release) besides holding the writer for the scan.
    pub fn prune_events(&self, keep_secs: i64) -> Result<usize> {
        let cutoff = (chrono::Utc::now() - chrono::Duration::seconds(keep_secs))
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, false);
        Ok(self.conn().execute(PRUNE_EVENTS, [cutoff])?)
    }
}

/// [`Store::prune_events`]: every event before the first one written at or after the cutoff
/// (all of them when none was).
const PRUNE_EVENTS: &str = "DELETE FROM events WHERE seq < COALESCE(
        (SELECT seq FROM events WHERE created_at >= ?1 ORDER BY seq LIMIT 1),
        (SELECT MAX(seq) + 1 FROM events))";

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
pub(crate) fn add_history_tx(
    conn: &crate::db::Connection,
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
    conn: &crate::db::Connection,
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
    conn: &crate::db::Connection,
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
            error_code, message, attempts, created_at, updated_at, sub_steps, uuid)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8, ?8, ?9, ?10)",
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
        sub_steps,
        Uuid::new_v4().to_string()
    ])?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn insert_event_tx(
    conn: &crate::db::Connection,
    kind: EventKind,
    session_id: Uuid,
    name: &str,
    access_key: &str,
    reason: &str,
    exit_code: Option<i32>,
    kernel_id: Option<Uuid>,
    now: &str,
) -> Result<SessionEvent> {
    let seq = conn.insert_returning_key(
        "INSERT INTO events(kind, session_id, session_name, access_key, reason, exit_code,
            kernel_id, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        "seq",
        params![
            kind.as_str(),
            session_id.to_string(),
            name,
            access_key,
            reason,
            exit_code,
            kernel_id.map(|k| k.to_string()),
            now
        ],
    )?;
    Ok(SessionEvent {
        seq,
        kind,
        session_id,
        session_name: name.to_string(),
        access_key: access_key.to_string(),
        reason: reason.to_string(),
        exit_code,
        kernel_id,
    })
}

const EVENT_COLUMNS: &str =
    "seq, kind, session_id, session_name, access_key, reason, exit_code, kernel_id";

/// An `events` row as read: seq, kind, session id, name, access key, reason, exit code, kernel.
type EventRow = (
    i64,
    String,
    String,
    String,
    String,
    String,
    Option<i32>,
    Option<String>,
);

fn event_row(r: &crate::db::Row<'_>) -> crate::db::Result<EventRow> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
    ))
}

/// Events from their rows; a kind this build does not know is skipped.
fn decode_events(
    rows: impl Iterator<Item = crate::db::Result<EventRow>>,
) -> Result<Vec<SessionEvent>> {
    let mut out = Vec::new();
    for row in rows {
        let (seq, kind, sid, name, ak, reason, exit_code, kid) = row?;
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const OLD: &str = "2000-01-01T00:00:00.000000+00:00";

    fn event(store: &Store, at: &str) -> i64 {
        let id = Uuid::new_v4();
        let conn = store.conn();
        let e = insert_event_tx(
            &conn,
            EventKind::SessionEnqueued,
            id,
            "s",
            "AK",
            "r",
            None,
            None,
            at,
        );
        e.unwrap().seq
    }

    fn seqs(store: &Store) -> Vec<i64> {
        let conn = store.conn();
        let mut st = conn.prepare("SELECT seq FROM events ORDER BY seq").unwrap();
        st.query_map(params![], |r| r.get(0))
            .unwrap()
            .collect::<crate::db::Result<_>>()
            .unwrap()
    }

    /// The old events go, the young ones stay; with no young one, all go.
    #[test]
    fn prune_events_drops_the_old_ones() {
        let store = Store::open_for_tests().unwrap();
        assert_eq!(store.prune_events(3600).unwrap(), 0, "no events");
        let old: Vec<i64> = (0..3).map(|_| event(&store, OLD)).collect();
        let young: Vec<i64> = (0..2).map(|_| event(&store, &now_str())).collect();
        assert_eq!(store.prune_events(3600).unwrap(), old.len());
        assert_eq!(seqs(&store), young);
        assert_eq!(store.prune_events(3600).unwrap(), 0);
        assert_eq!(
            store.prune_events(0).unwrap(),
            young.len(),
            "none that young"
        );
        assert!(seqs(&store).is_empty());
    }

    /// On SQLite the delete is a range of `seq`, not a scan of the table filtered by date.
    #[test]
    fn prune_events_reads_a_range() {
        let store = Store::open_in_memory().unwrap();
        let conn = store.conn();
        let c = conn.sqlite().unwrap();
        let mut st = c
            .prepare(&format!("EXPLAIN QUERY PLAN {PRUNE_EVENTS}"))
            .unwrap();
        let plan: Vec<String> = st
            .query_map([OLD], |r| r.get(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(
            plan.iter()
                .any(|p| p.starts_with("SEARCH events USING INTEGER PRIMARY KEY (rowid<?)")),
            "{plan:?}"
        );
    }
}

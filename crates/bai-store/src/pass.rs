//! Persisting one scheduling pass: every placement, wait and give-up of the pass in a single
//! transaction, so a crash leaves either all of it or none of it.

use crate::sessions::{
    add_history_with_steps_tx, cas_status_tx, insert_event_tx, insert_history_tx,
};
use crate::{Result, SessionRow, StatusChange, Store, now_str};
use bai_core::event::{EventKind, SessionEvent};
use bai_core::history::HistoryResult;
use bai_core::status::SessionStatus;
use rusqlite::{OptionalExtension, params};
use uuid::Uuid;

/// What the pass decided for one session.
#[derive(Debug, Clone)]
pub enum PassWrite {
    /// PENDING → SCHEDULED on `agent`.
    Placed { agent: String },
    /// Stays PENDING; `info` becomes its status_info.
    Wait {
        code: String,
        info: String,
        message: String,
    },
    /// Not attempted this pass (held behind the head of the queue).
    Held { info: String, message: String },
    /// PENDING → CANCELLED: it can never run.
    GiveUp { code: String, message: String },
}

/// One session's entry of the pass.
#[derive(Debug, Clone)]
pub struct PassEntry {
    pub id: Uuid,
    pub write: PassWrite,
    /// The scheduler's sub-steps, a JSON array.
    pub sub_steps: String,
}

/// What committing the pass changed.
#[derive(Debug, Default)]
pub struct PassResult {
    /// Sessions now SCHEDULED (to launch), with their `session_scheduled` events.
    pub placed: Vec<(Uuid, SessionEvent)>,
    /// Sessions now CANCELLED, with their events.
    pub cancelled: Vec<(SessionRow, Vec<SessionEvent>)>,
}

const PHASE: &str = "schedule";

impl Store {
    pub fn apply_pass(&self, entries: &[PassEntry]) -> Result<PassResult> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let now = now_str();
        let mut out = PassResult::default();
        for e in entries {
            match &e.write {
                PassWrite::Placed { agent } => {
                    if let Some(ev) = place_tx(&tx, e.id, agent, &e.sub_steps, &now)? {
                        out.placed.push((e.id, ev));
                    }
                }
                PassWrite::GiveUp { code, message } => {
                    let info = format!("{code}: {message}");
                    let change = StatusChange::new(
                        SessionStatus::Pending,
                        SessionStatus::Cancelled,
                        &info,
                        PHASE,
                    )
                    .events(&[EventKind::SessionCancelled])
                    .outcome(HistoryResult::GiveUp, code)
                    .steps(&e.sub_steps);
                    if let Some(moved) = cas_status_tx(&tx, e.id, &change, &now)? {
                        out.cancelled.push(moved);
                    }
                }
                PassWrite::Wait {
                    code,
                    info,
                    message,
                } => {
                    set_info_tx(&tx, e.id, info)?;
                    add_history_with_steps_tx(
                        &tx,
                        e.id,
                        PHASE,
                        HistoryResult::NeedRetry,
                        Some(SessionStatus::Pending),
                        Some(SessionStatus::Pending),
                        Some(code),
                        message,
                        &e.sub_steps,
                        &now,
                    )?;
                }
                PassWrite::Held { info, message } => {
                    set_info_tx(&tx, e.id, info)?;
                    add_history_with_steps_tx(
                        &tx,
                        e.id,
                        PHASE,
                        HistoryResult::Skipped,
                        Some(SessionStatus::Pending),
                        Some(SessionStatus::Pending),
                        Some("held-for-head-of-line"),
                        message,
                        &e.sub_steps,
                        &now,
                    )?;
                }
            }
        }
        tx.commit()?;
        Ok(out)
    }
}

/// PENDING → SCHEDULED on `agent` as one compare-and-set statement, with its history record
/// and its event; None when the session is no longer PENDING.
fn place_tx(
    tx: &rusqlite::Transaction<'_>,
    id: Uuid,
    agent: &str,
    sub_steps: &str,
    now: &str,
) -> Result<Option<SessionEvent>> {
    let info = format!("scheduled on {agent}");
    let moved: Option<(String, String, String)> = tx
        .prepare_cached(
            "UPDATE sessions SET status = 'SCHEDULED', status_info = ?3, status_changed = ?4,
                agent_id = ?2,
                status_history = json_insert(status_history, '$.SCHEDULED', ?4)
             WHERE id = ?1 AND status = 'PENDING'
             RETURNING name, access_key, main_kernel_id",
        )?
        .query_row(params![id.to_string(), agent, info, now], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .optional()?;
    let Some((name, access_key, _kernel)) = moved else {
        return Ok(None);
    };
    // A placement is always a record of its own (never merged into an earlier one).
    insert_history_tx(
        tx,
        id,
        PHASE,
        HistoryResult::Success,
        Some(SessionStatus::Pending.as_str()),
        Some(SessionStatus::Scheduled.as_str()),
        None,
        &info,
        sub_steps,
        now,
    )?;
    let ev = insert_event_tx(
        tx,
        EventKind::SessionScheduled,
        id,
        &name,
        &access_key,
        &info,
        None,
        None,
        now,
    )?;
    Ok(Some(ev))
}

fn set_info_tx(tx: &rusqlite::Transaction<'_>, id: Uuid, info: &str) -> Result<()> {
    tx.prepare_cached(
        "UPDATE sessions SET status_info = ?2 WHERE id = ?1 AND status = 'PENDING'
            AND (status_info IS NULL OR status_info != ?2)",
    )?
    .execute(params![id.to_string(), info])?;
    Ok(())
}

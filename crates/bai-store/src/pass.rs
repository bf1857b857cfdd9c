//! Persisting one scheduling pass: every placement, wait and give-up of the pass in a single
//! transaction, so a crash leaves either all of it or none of it.

use crate::db::Engine;
use crate::db::params;
use crate::sessions::{
    PLACEMENT_PHASE, Placement, add_history_with_steps_tx, cas_status_tx, place_many_tx, place_tx,
};
use crate::{Result, SessionRow, StatusChange, Store, now_str};
use bai_core::Reason;
use bai_core::event::{EventKind, SessionEvent};
use bai_core::history::HistoryResult;
use bai_core::status::SessionStatus;
use uuid::Uuid;

/// What the pass decided for one session.
#[derive(Debug, Clone)]
pub enum PassWrite {
    /// PENDING → SCHEDULED on `agent` (main1's); a multi-node session's sub kernels on
    /// `subs` (sub1 first).
    Placed { agent: String, subs: Vec<String> },
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
    /// PENDING → CANCELLED: it waited longer than its group allows (history `EXPIRED`).
    Expire { code: String, message: String },
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

/// The scheduler's phase name (its placements are written by `place_tx` under the same one).
const PHASE: &str = PLACEMENT_PHASE;

impl Store {
    pub fn apply_pass(&self, entries: &[PassEntry]) -> Result<PassResult> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let now = now_str();
        let mut out = PassResult::default();
        // On PostgreSQL, where each statement is a round trip, the single-node placements go
        // in batches (the same rows, records and events as one by one).
        let pg = tx.engine() == Engine::Postgres;
        let batch: Vec<Placement<'_>> = entries.iter().filter_map(|e| batched(e, pg)).collect();
        if !batch.is_empty() {
            out.placed = place_many_tx(&tx, &batch, &now)?;
            if out.placed.len() < batch.len() {
                let placed: std::collections::HashSet<Uuid> =
                    out.placed.iter().map(|(id, _)| *id).collect();
                for p in batch.iter().filter(|p| !placed.contains(&p.id)) {
                    stale_tx(&tx, p.id, &now)?;
                }
            }
        }
        for e in entries.iter().filter(|e| batched(e, pg).is_none()) {
            match &e.write {
                PassWrite::Placed { agent, subs } => {
                    match place_tx(&tx, e.id, agent, &e.sub_steps, &now)? {
                        Some(ev) => {
                            if !subs.is_empty() {
                                crate::sessions::kernels::place_subs_tx(&tx, e.id, subs)?;
                            }
                            out.placed.push((e.id, ev));
                        }
                        None => stale_tx(&tx, e.id, &now)?,
                    }
                }
                PassWrite::GiveUp { code, message } | PassWrite::Expire { code, message } => {
                    let result = match &e.write {
                        PassWrite::Expire { .. } => HistoryResult::Expired,
                        _ => HistoryResult::GiveUp,
                    };
                    let change = StatusChange::new(
                        SessionStatus::Pending,
                        SessionStatus::Cancelled,
                        Reason::Scheduler {
                            code: code.clone(),
                            message: message.clone(),
                        },
                        PHASE,
                    )
                    .events(&[EventKind::SessionCancelled])
                    .outcome(result, code)
                    .steps(&e.sub_steps);
                    match cas_status_tx(&tx, e.id, &change, &now)? {
                        Some(moved) => out.cancelled.push(moved),
                        None => stale_tx(&tx, e.id, &now)?,
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

/// An entry written in a batch (on PostgreSQL, `pg`: a single-node placement), as such.
fn batched(e: &PassEntry, pg: bool) -> Option<Placement<'_>> {
    match &e.write {
        PassWrite::Placed { agent, subs } if pg && subs.is_empty() => Some(Placement {
            id: e.id,
            agent,
            sub_steps: &e.sub_steps,
        }),
        _ => None,
    }
}

/// A decision the pass could not write: the session left PENDING while the pass looked at it
/// (terminated by its owner, placed by an earlier pass), so what the pass saw was stale.
/// Recorded as `STALE`, naming where the session is now.
fn stale_tx(tx: &crate::db::Transaction<'_>, id: Uuid, now: &str) -> Result<()> {
    let status: Option<String> = tx
        .prepare_cached("SELECT status FROM sessions WHERE id = ?1")?
        .query_row([id.to_string()], |r| r.get(0))
        .ok();
    let Some(status) = status else {
        return Ok(());
    };
    add_history_with_steps_tx(
        tx,
        id,
        PHASE,
        HistoryResult::Stale,
        Some(SessionStatus::Pending),
        status.parse().ok(),
        Some("stale-snapshot"),
        &format!("the decision was not written: the session was {status} by then"),
        "[]",
        now,
    )
}

fn set_info_tx(tx: &crate::db::Transaction<'_>, id: Uuid, info: &str) -> Result<()> {
    tx.prepare_cached(
        "UPDATE sessions SET status_info = ?2 WHERE id = ?1 AND status = 'PENDING'
            AND (status_info IS NULL OR status_info != ?2)",
    )?
    .execute(params![id.to_string(), info])?;
    Ok(())
}

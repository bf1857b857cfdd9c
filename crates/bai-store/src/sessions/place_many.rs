//! The scheduler's placements in batches (PostgreSQL's pass, where each statement is a round
//! trip): for up to [`BATCH`] sessions one statement moves the rows PENDING → SCHEDULED and,
//! from what that moved, writes their history records and events: the same rows, records and
//! events as [`super::place_tx`] one session at a time.

use super::change::{PLACEMENT_PHASE, StatusChange, legal};
use super::corrupt;
use crate::Result;
use crate::db::Value;
use bai_core::Reason;
use bai_core::event::{EventKind, SessionEvent};
use bai_core::history::HistoryResult;
use bai_core::status::SessionStatus;
use std::collections::HashMap;
use std::fmt::Write;
use uuid::Uuid;

/// How many placements one statement of [`place_many_tx`] writes at most.
const BATCH: usize = 512;

/// One placement of [`place_many_tx`].
pub(crate) struct Placement<'a> {
    pub id: Uuid,
    pub agent: &'a str,
    pub sub_steps: &'a str,
}

/// [`super::place_tx`] for many sessions at once: the same legality check, the same row,
/// history record and event, in one statement for up to [`BATCH`] sessions. Batches are cut
/// in powers of two, so a connection prepares a few shapes of the statement, not one per
/// size. Returns each placed session with its event, in the order given; a session missing
/// from the result was no longer PENDING.
pub(crate) fn place_many_tx(
    tx: &crate::db::Transaction<'_>,
    placements: &[Placement<'_>],
    now: &str,
) -> Result<Vec<(Uuid, SessionEvent)>> {
    let mut out = Vec::with_capacity(placements.len());
    let mut rest = placements;
    while !rest.is_empty() {
        let n = if rest.len() >= BATCH {
            BATCH
        } else {
            1 << rest.len().ilog2()
        };
        let (batch, after) = rest.split_at(n);
        out.extend(place_batch_tx(tx, batch, now)?);
        rest = after;
    }
    Ok(out)
}

/// Parameters ?1..=?FIXED are the batch's own; each placement then has [`PER_ROW`].
const FIXED: usize = 6;
const PER_ROW: usize = 5;

/// The statement for `rows` placements: the rows moved where still PENDING (`moved`), a
/// history record for each of those (a placement is always a record of its own), and its
/// event, whose row comes back.
fn statement(rows: usize, kernel_event: bool) -> String {
    let mut values = String::with_capacity(rows * 32);
    for r in 0..rows {
        let first = FIXED + 1 + r * PER_ROW;
        if r > 0 {
            values.push_str(", ");
        }
        values.push('(');
        for c in 0..PER_ROW {
            if c > 0 {
                values.push_str(", ");
            }
            let _ = write!(values, "?{}", first + c);
        }
        values.push(')');
    }
    let kernel = if kernel_event { "kernel" } else { "NULL" };
    format!(
        "WITH moved AS (
            UPDATE sessions AS s SET status = ?2, status_info = v.info, status_changed = ?1,
                agent_id = v.agent,
                status_history = (jsonb_build_object(?2::text, ?1::text)
                    || s.status_history::jsonb)::text
            FROM (VALUES {values}) AS v(id, agent, info, steps, uuid)
            WHERE s.id = v.id AND s.status = ?3
            RETURNING s.id, s.name, s.access_key, s.main_kernel_id AS kernel, v.info, v.steps,
                v.uuid
         ), recorded AS (
            INSERT INTO scheduling_history(session_id, phase, result, from_status, to_status,
                error_code, message, attempts, created_at, updated_at, sub_steps, uuid)
            SELECT id, ?4, ?5, ?3, ?2, NULL, info, 1, ?1, ?1, steps, uuid FROM moved
         )
         INSERT INTO events(kind, session_id, session_name, access_key, reason, exit_code,
            kernel_id, created_at)
         SELECT ?6, id, name, access_key, info, NULL, {kernel}, ?1 FROM moved
         RETURNING seq, session_id, session_name, access_key, kernel_id"
    )
}

fn place_batch_tx(
    tx: &crate::db::Transaction<'_>,
    batch: &[Placement<'_>],
    now: &str,
) -> Result<Vec<(Uuid, SessionEvent)>> {
    let change = StatusChange::new(
        SessionStatus::Pending,
        SessionStatus::Scheduled,
        Reason::ScheduledOn(String::new()),
        PLACEMENT_PHASE,
    )
    .events(&[EventKind::SessionScheduled]);
    legal(&change)?;
    let kind = EventKind::SessionScheduled;
    let result = change.history_result.unwrap_or(HistoryResult::Success);
    let mut params = Vec::with_capacity(FIXED + batch.len() * PER_ROW);
    params.extend([
        Value::Text(now.to_string()),
        Value::Text(change.to.as_str().into()),
        Value::Text(change.from.as_str().into()),
        Value::Text(change.phase.into()),
        Value::Text(result.as_str().into()),
        Value::Text(kind.as_str().into()),
    ]);
    // Each placement by its id as stored, with its reason (the row's status_info, the
    // record's message, the event's reason).
    let mut named: HashMap<String, (&Placement<'_>, String)> = HashMap::with_capacity(batch.len());
    for p in batch {
        let id = p.id.to_string();
        let info = Reason::ScheduledOn(p.agent.to_string()).to_string();
        params.extend([
            Value::Text(id.clone()),
            Value::Text(p.agent.to_string()),
            Value::Text(info.clone()),
            Value::Text(p.sub_steps.to_string()),
            Value::Text(Uuid::new_v4().to_string()),
        ]);
        named.insert(id, (p, info));
    }
    let made: Vec<(i64, String, String, String, Option<String>)> = tx
        .prepare_cached(&statement(batch.len(), kind.is_kernel()))?
        .query_map(params, |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?
        .collect::<crate::db::Result<_>>()?;
    let mut events: HashMap<Uuid, SessionEvent> = HashMap::with_capacity(made.len());
    for (seq, id, session_name, access_key, kernel) in made {
        let (p, info) = named
            .remove(&id)
            .ok_or_else(|| corrupt("events", format!("{id} is not of this batch")))?;
        let kernel_id = kernel
            .map(|k| Uuid::parse_str(&k).map_err(|e| corrupt("kernel_id", e)))
            .transpose()?;
        events.insert(
            p.id,
            SessionEvent {
                seq,
                kind,
                session_id: p.id,
                session_name,
                access_key,
                reason: info,
                exit_code: None,
                kernel_id,
            },
        );
    }
    // In the batch's order, as the pass placed them.
    Ok(batch
        .iter()
        .filter_map(|p| events.remove(&p.id).map(|ev| (p.id, ev)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_placement_has_its_own_parameters() {
        let sql = statement(2, false);
        assert!(sql.contains("(VALUES (?7, ?8, ?9, ?10, ?11), (?12, ?13, ?14, ?15, ?16))"));
        assert!(!sql.contains("?17"));
        assert!(sql.contains("?4, ?5, ?3, ?2, NULL, info"));
        assert!(
            statement(1, true).contains("SELECT ?6, id, name, access_key, info, NULL, kernel,")
        );
    }
}

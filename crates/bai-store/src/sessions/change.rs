//! The one door for status changes: a compare-and-set that refuses what the state machine
//! does not allow ([`SessionStatus::can_transition_to`]) and writes the row, its history
//! record and its events in the caller's transaction.

use super::history::{add_history_with_steps_tx, insert_event_tx, insert_history_tx};
use super::{COLUMNS, SessionRow, corrupt, parse_row};
use crate::db::Engine;
use crate::db::{OptionalExtension, params};
use crate::{Result, Store, StoreError, now_str};
use bai_core::Reason;
use bai_core::event::{EventKind, SessionEvent};
use bai_core::history::HistoryResult;
use bai_core::status::{SessionResult, SessionStatus};
use uuid::Uuid;

/// A status change, written together with its history record and its events.
#[derive(Debug, Clone)]
pub struct StatusChange<'a> {
    pub from: SessionStatus,
    pub to: SessionStatus,
    /// Why; becomes the session's `status_info`, the history message and the events' reason.
    pub reason: Reason,
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
    /// The egress policy the session's kernels start under, as JSON (kept when none).
    pub egress: Option<&'a str>,
}

impl<'a> StatusChange<'a> {
    pub fn new(from: SessionStatus, to: SessionStatus, reason: Reason, phase: &'a str) -> Self {
        StatusChange {
            from,
            to,
            reason,
            phase,
            events: &[],
            result: None,
            exit_code: None,
            agent_id: None,
            container_id: None,
            history_result: None,
            error_code: None,
            sub_steps: "[]",
            egress: None,
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
    pub fn egress(mut self, json: &'a str) -> Self {
        self.egress = Some(json);
        self
    }
}

impl Store {
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
}

/// The state machine's check, made by every write of a status: an illegal change is an error
/// (a bug in the caller), never a write.
pub(super) fn legal(change: &StatusChange<'_>) -> Result<()> {
    if change.from.can_transition_to(change.to) {
        Ok(())
    } else {
        Err(StoreError::IllegalTransition {
            from: change.from,
            to: change.to,
        })
    }
}

/// [`Store::cas_status`] inside a caller's transaction (not committed here).
pub(crate) fn cas_status_tx(
    tx: &crate::db::Transaction<'_>,
    id: Uuid,
    change: &StatusChange<'_>,
    now: &str,
) -> Result<Option<(SessionRow, Vec<SessionEvent>)>> {
    legal(change)?;
    let now = now.to_string();
    let info = change.reason.to_string();
    let row = tx
        .prepare_cached(&format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"))?
        .query_row([id.to_string()], parse_row)
        .optional()?;
    let Some(row) = row else { return Ok(None) };
    let mut row = row?;
    if row.state.status != change.from {
        return Ok(None);
    }
    row.state
        .status_history
        .entry(change.to)
        .or_insert_with(|| now.clone());
    let hist = serde_json::to_string(&row.state.status_history).map_err(|e| corrupt("hist", e))?;
    let terminated_at = if change.to.is_terminal() {
        Some(now.clone())
    } else {
        row.state.terminated_at.clone()
    };
    let result = change.result.unwrap_or(row.state.result);
    let exit_code = change.exit_code.or(row.state.exit_code);
    let agent_id = change
        .agent_id
        .map(str::to_string)
        .or(row.state.agent_id.clone());
    let container_id = change
        .container_id
        .map(str::to_string)
        .or(row.state.container_id.clone());
    tx.prepare_cached(
        "UPDATE sessions SET status = ?2, status_info = ?3, status_changed = ?4,
        status_history = ?5, terminated_at = ?6, result = ?7, exit_code = ?8,
        agent_id = ?9, container_id = ?10, egress = COALESCE(?12, egress)
         WHERE id = ?1 AND status = ?11",
    )?
    .execute(params![
        id.to_string(),
        change.to.as_str(),
        info,
        now,
        hist,
        terminated_at,
        result.as_str(),
        exit_code,
        agent_id,
        container_id,
        change.from.as_str(),
        change.egress,
    ])?;
    if change.to == SessionStatus::Pending {
        row.main_kernel_id = renew_kernels_tx(tx, id)?;
    }
    record_tx(
        tx,
        id,
        change,
        &info,
        &row.name,
        &row.spec.access_key,
        row.main_kernel_id,
        exit_code,
        &now,
    )
    .map(|events| {
        row.state.status = change.to;
        row.state.status_info = Some(info.clone());
        row.state.status_changed = now.clone();
        row.state.terminated_at = terminated_at;
        row.state.result = result;
        row.state.exit_code = exit_code;
        row.state.agent_id = agent_id;
        row.state.container_id = container_id;
        if let Some(e) = change.egress.and_then(|e| serde_json::from_str(e).ok()) {
            row.state.egress = Some(e);
        }
        Some((row, events))
    })
}

/// A session sent back to the queue gets new kernel ids: its next launch makes new kernels
/// (new containers, new scratch directories), so nothing an earlier attempt left behind (a
/// removal still under way on the agent, an exit reported late) can touch them. The sub
/// kernels keep their index; what the old ones left (container, exit code, logs) goes.
/// Returns the new main kernel id.
fn renew_kernels_tx(tx: &crate::db::Transaction<'_>, id: Uuid) -> Result<Uuid> {
    let main = Uuid::new_v4();
    tx.prepare_cached("UPDATE sessions SET main_kernel_id = ?2 WHERE id = ?1")?
        .execute(params![id.to_string(), main.to_string()])?;
    let subs: Vec<String> = tx
        .prepare_cached("SELECT id FROM kernels WHERE session_id = ?1")?
        .query_map([id.to_string()], |r| r.get(0))?
        .collect::<crate::db::Result<_>>()?;
    let mut renew = tx.prepare_cached(
        "UPDATE kernels SET id = ?2, container_id = NULL, exit_code = NULL, logs = NULL
         WHERE id = ?1",
    )?;
    for old in subs {
        renew.execute(params![old, Uuid::new_v4().to_string()])?;
    }
    Ok(main)
}

/// The history record and the events of a change that was written.
#[allow(clippy::too_many_arguments)]
fn record_tx(
    tx: &crate::db::Transaction<'_>,
    id: Uuid,
    change: &StatusChange<'_>,
    info: &str,
    name: &str,
    access_key: &str,
    kernel_id: Uuid,
    exit_code: Option<i32>,
    now: &str,
) -> Result<Vec<SessionEvent>> {
    let is_error = matches!(change.to, SessionStatus::Error);
    let history_result = change.history_result.unwrap_or(if is_error {
        HistoryResult::Failure
    } else {
        HistoryResult::Success
    });
    let error_code = change.error_code.or(is_error.then_some(info));
    if change.to == SessionStatus::Scheduled && change.phase == PLACEMENT_PHASE {
        // A placement is always a record of its own (never merged into an earlier one).
        insert_history_tx(
            tx,
            id,
            change.phase,
            history_result,
            Some(change.from.as_str()),
            Some(change.to.as_str()),
            error_code,
            info,
            change.sub_steps,
            now,
        )?;
    } else {
        add_history_with_steps_tx(
            tx,
            id,
            change.phase,
            history_result,
            Some(change.from),
            Some(change.to),
            error_code,
            info,
            change.sub_steps,
            now,
        )?;
    }
    let mut events = Vec::new();
    for kind in change.events {
        let kernel = kind.is_kernel().then_some(kernel_id);
        events.push(insert_event_tx(
            tx, *kind, id, name, access_key, info, exit_code, kernel, now,
        )?);
    }
    Ok(events)
}

/// The phase name of the scheduler's placements.
pub(crate) const PLACEMENT_PHASE: &str = "schedule";

/// The scheduler's placement: PENDING → SCHEDULED on `agent`, through the same legality check
/// as every other change, but as one `UPDATE … RETURNING` statement (a pass places thousands
/// of sessions). None when the session is no longer PENDING.
pub(crate) fn place_tx(
    tx: &crate::db::Transaction<'_>,
    id: Uuid,
    agent: &str,
    sub_steps: &str,
    now: &str,
) -> Result<Option<SessionEvent>> {
    let change = StatusChange::new(
        SessionStatus::Pending,
        SessionStatus::Scheduled,
        Reason::ScheduledOn(agent.to_string()),
        PLACEMENT_PHASE,
    )
    .agent(agent)
    .steps(sub_steps)
    .events(&[EventKind::SessionScheduled]);
    legal(&change)?;
    let info = change.reason.to_string();
    let moved: Option<(String, String, String)> = tx
        .prepare_cached(match tx.engine() {
            Engine::Sqlite => {
                "UPDATE sessions SET status = ?5, status_info = ?3, status_changed = ?4,
                    agent_id = ?2,
                    status_history = json_insert(status_history, '$.' || ?5, ?4)
                 WHERE id = ?1 AND status = ?6
                 RETURNING name, access_key, main_kernel_id"
            }
            // `||` of two objects keeps the right one's keys: an earlier time of the status
            // stays, as json_insert keeps it.
            Engine::Postgres => {
                "UPDATE sessions SET status = ?5, status_info = ?3, status_changed = ?4,
                    agent_id = ?2,
                    status_history = (jsonb_build_object(?5::text, ?4::text)
                        || status_history::jsonb)::text
                 WHERE id = ?1 AND status = ?6
                 RETURNING name, access_key, main_kernel_id"
            }
        })?
        .query_row(
            params![
                id.to_string(),
                agent,
                info,
                now,
                change.to.as_str(),
                change.from.as_str()
            ],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((name, access_key, kernel)) = moved else {
        return Ok(None);
    };
    let kernel = Uuid::parse_str(&kernel).map_err(|e| corrupt("main_kernel_id", e))?;
    let mut events = record_tx(
        tx,
        id,
        &change,
        &info,
        &name,
        &access_key,
        kernel,
        None,
        now,
    )?;
    Ok(events.pop())
}

//! Preemption in the store: the victims of one preemption marked PREEMPTED together, or none
//! of them; and the requeued victims that wait for their preemptor.

use super::change::{StatusChange, cas_status_tx};
use super::{SessionRow, corrupt};
use crate::db::{OptionalExtension, params};
use crate::{Result, Store, now_str};
use bai_core::Reason;
use bai_core::event::{EventKind, SessionEvent};
use bai_core::status::SessionStatus;
use uuid::Uuid;

/// Each victim marked PREEMPTED, with the events of its mark.
pub type Marked = Vec<(SessionRow, Vec<SessionEvent>)>;

impl Store {
    /// Marks every one of `victims` PREEMPTED for `preemptor` (each from the up status it is
    /// in, with `why` in its status info and a `session_preempted` event), in one
    /// transaction. None, and nothing written, when any of them is no longer up: a victim
    /// never ends for a preemption that is not whole.
    pub fn preempt(&self, preemptor: Uuid, victims: &[Uuid], why: &str) -> Result<Option<Marked>> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let now = now_str();
        let reason = Reason::Preempted {
            by: preemptor.to_string(),
            why: why.to_string(),
        };
        let mut out = Vec::with_capacity(victims.len());
        for &v in victims {
            let status: Option<String> = tx
                .prepare_cached("SELECT status FROM sessions WHERE id = ?1")?
                .query_row([v.to_string()], |r| r.get(0))
                .optional()?;
            let Some(from) = status.and_then(|s| s.parse::<SessionStatus>().ok()) else {
                return Ok(None);
            };
            if !from.is_up() {
                return Ok(None);
            }
            let change =
                StatusChange::new(from, SessionStatus::Preempted, reason.clone(), "preempt")
                    .events(&[EventKind::SessionPreempted]);
            let Some((mut row, events)) = cas_status_tx(&tx, v, &change, &now)? else {
                return Ok(None);
            };
            tx.prepare_cached("UPDATE sessions SET preempted_by = ?2 WHERE id = ?1")?
                .execute(params![v.to_string(), preemptor.to_string()])?;
            row.state.preempted_by = Some(preemptor);
            out.push((row, events));
        }
        tx.commit()?;
        Ok(Some(out))
    }

    /// PENDING sessions sent back by a preemption whose preemptor is still PENDING (each
    /// with it): they wait until it has started.
    pub fn requeued_behind(&self) -> Result<Vec<(Uuid, Uuid)>> {
        let conn = self.read();
        let mut st = conn.prepare_cached(
            "SELECT s.id, s.preempted_by FROM sessions s JOIN sessions p ON p.id = s.preempted_by
             WHERE s.status = 'PENDING' AND s.preempted_by IS NOT NULL AND p.status = 'PENDING'",
        )?;
        let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut out = Vec::new();
        for r in rows {
            let (a, b) = r?;
            out.push((
                Uuid::parse_str(&a).map_err(|e| corrupt("id", e))?,
                Uuid::parse_str(&b).map_err(|e| corrupt("preempted_by", e))?,
            ));
        }
        Ok(out)
    }
}

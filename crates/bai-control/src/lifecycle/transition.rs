//! The one function that moves a session between statuses.

use super::Lifecycle;
use bai_core::status::SessionStatus;
use bai_store::{SessionRow, StatusChange};
use uuid::Uuid;

/// A requested status change (why, by which phase, with which events).
pub type Change<'a> = StatusChange<'a>;

#[derive(Debug, thiserror::Error)]
pub enum TransitionError {
    #[error("illegal transition {0} -> {1}")]
    Illegal(SessionStatus, SessionStatus),
    #[error(transparent)]
    Store(#[from] bai_store::StoreError),
}

/// An illegal transition is the caller's bug (500, nothing was written); a store failure
/// answers as the store says.
impl From<TransitionError> for bai_core::Problem {
    fn from(e: TransitionError) -> bai_core::Problem {
        match e {
            TransitionError::Store(e) => e.into(),
            e @ TransitionError::Illegal(..) => bai_core::Problem::internal(e.to_string()),
        }
    }
}

/// Moves the session if it is still in `change.from`. Returns the updated row, or `None`
/// when somebody else moved it first (the caller re-reads and decides).
pub fn transition(
    lifecycle: &Lifecycle,
    id: Uuid,
    change: Change<'_>,
) -> Result<Option<SessionRow>, TransitionError> {
    // Crash tests stop the process on either side of the write (test builds only).
    bai_fault::transition(&change.from, &change.to, bai_fault::Side::Before);
    // The store's compare-and-set is the one door: it refuses what the state machine does
    // not allow.
    let moved = lifecycle
        .store
        .cas_status(id, &change)
        .map_err(|e| match e {
            bai_store::StoreError::IllegalTransition { from, to } => {
                TransitionError::Illegal(from, to)
            }
            e => TransitionError::Store(e),
        })?;
    match moved {
        Some((row, events)) => {
            bai_fault::transition(&change.from, &change.to, bai_fault::Side::After);
            tracing::debug!(session = %id, from = %change.from, to = %change.to, reason = %change.reason, "transition");
            lifecycle.bus.publish(events);
            if change.from.occupies_resources() && !change.to.occupies_resources() {
                // Resources were freed: queued sessions may fit now.
                lifecycle.bus.wake_scheduler();
            }
            Ok(Some(row))
        }
        None => Ok(None),
    }
}

/// [`transition`] where the caller has nothing else to do about the outcome: a lost race is
/// fine (someone else moved the session), an error is logged with what was attempted.
pub fn transition_or_log(
    lifecycle: &Lifecycle,
    id: Uuid,
    change: Change<'_>,
) -> Option<SessionRow> {
    let (from, to) = (change.from, change.to);
    match transition(lifecycle, id, change) {
        Ok(row) => row,
        Err(e) => {
            tracing::error!(session = %id, %from, %to, error = %e, "status change failed");
            None
        }
    }
}

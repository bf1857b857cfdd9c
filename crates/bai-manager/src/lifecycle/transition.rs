//! The one function that moves a session between statuses.

use crate::state::Manager;
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

/// Moves the session if it is still in `change.from`. Returns the updated row, or `None`
/// when somebody else moved it first (the caller re-reads and decides).
pub fn transition(
    m: &Manager,
    id: Uuid,
    change: Change<'_>,
) -> Result<Option<SessionRow>, TransitionError> {
    if !change.from.can_transition_to(change.to) {
        return Err(TransitionError::Illegal(change.from, change.to));
    }
    match m.store.cas_status(id, &change)? {
        Some((row, events)) => {
            tracing::debug!(session = %id, from = %change.from, to = %change.to, info = change.info, "transition");
            m.publish(events);
            if change.from.occupies_resources() && !change.to.occupies_resources() {
                // Resources were freed: queued sessions may fit now.
                m.wake_scheduler.notify_one();
            }
            Ok(Some(row))
        }
        None => Ok(None),
    }
}

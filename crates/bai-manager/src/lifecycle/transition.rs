//! The one function that moves a session between statuses.

use crate::state::Manager;
use bai_core::event::EventKind;
use bai_core::status::{SessionResult, SessionStatus};
use bai_store::{SessionRow, StatusChange};
use uuid::Uuid;

/// A requested status change.
#[derive(Debug, Clone)]
pub struct Change<'a> {
    pub from: SessionStatus,
    pub to: SessionStatus,
    /// Why, in words a user understands (`user-requested`, `task-timeout`, …).
    pub info: &'a str,
    /// Which part of the system made the change (history `phase`).
    pub phase: &'a str,
    pub events: &'a [EventKind],
    pub result: Option<SessionResult>,
    pub exit_code: Option<i32>,
    pub agent_id: Option<&'a str>,
    pub container_id: Option<&'a str>,
}

impl<'a> Change<'a> {
    pub fn new(from: SessionStatus, to: SessionStatus, info: &'a str, phase: &'a str) -> Self {
        Change {
            from,
            to,
            info,
            phase,
            events: &[],
            result: None,
            exit_code: None,
            agent_id: None,
            container_id: None,
        }
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
    let sc = StatusChange {
        from: change.from,
        to: change.to,
        info: change.info,
        phase: change.phase,
        events: change.events,
        result: change.result,
        exit_code: change.exit_code,
        agent_id: change.agent_id,
        container_id: change.container_id,
    };
    match m.store.cas_status(id, &sc)? {
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

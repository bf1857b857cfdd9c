//! Which sessions are being committed now: one commit at a time per session, and a
//! terminate that is not forced is refused meanwhile (a forced one cancels the commit).

use bai_ground::bgtask::BgTask;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use uuid::Uuid;

#[derive(Default)]
pub struct Commits {
    by_session: Mutex<HashMap<Uuid, Arc<BgTask>>>,
}

fn lock<T>(lock: &Mutex<T>) -> MutexGuard<'_, T> {
    lock.lock().unwrap_or_else(|p| p.into_inner())
}

impl Commits {
    /// Marks the session as being committed by `task`; false when a commit already runs.
    pub fn begin(&self, session: Uuid, task: Arc<BgTask>) -> bool {
        let mut lock = lock(&self.by_session);
        if lock.contains_key(&session) {
            return false;
        }
        lock.insert(session, task);
        true
    }

    pub fn end(&self, session: Uuid) {
        lock(&self.by_session).remove(&session);
    }

    /// The commit task running for the session, if any.
    pub fn ongoing(&self, session: Uuid) -> Option<Arc<BgTask>> {
        lock(&self.by_session).get(&session).cloned()
    }

    /// Asks the session's commit to stop (a forced terminate); true when one was running.
    pub fn cancel(&self, session: Uuid) -> bool {
        match lock(&self.by_session).get(&session) {
            Some(t) => {
                t.cancel();
                true
            }
            None => false,
        }
    }
}

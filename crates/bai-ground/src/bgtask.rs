//! Background tasks (commits, conversions to images): each has an owner, a progress and one
//! final outcome, followed on `GET /events/background-task?task_id=` as Backend.AI's
//! `bgtask_updated`, `bgtask_done`, `bgtask_failed` and `bgtask_cancelled` events. A late
//! subscriber gets the last progress or the outcome at once; finished tasks are kept a while.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::broadcast;
use uuid::Uuid;

/// How many finished tasks are remembered for late subscribers.
const KEEP_FINISHED: usize = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BgKind {
    Updated,
    Done,
    Failed,
    Cancelled,
}

impl BgKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BgKind::Updated => "bgtask_updated",
            BgKind::Done => "bgtask_done",
            BgKind::Failed => "bgtask_failed",
            BgKind::Cancelled => "bgtask_cancelled",
        }
    }

    pub fn is_final(self) -> bool {
        self != BgKind::Updated
    }
}

/// One event of a task.
#[derive(Debug, Clone, PartialEq)]
pub struct BgEvent {
    pub task_id: Uuid,
    pub kind: BgKind,
    pub current_progress: u64,
    pub total_progress: u64,
    pub message: String,
}

/// A running or finished task.
pub struct BgTask {
    pub id: Uuid,
    /// The access key that started it (its owner may follow it; admins may too).
    pub owner_access_key: String,
    tx: broadcast::Sender<BgEvent>,
    last: Mutex<Option<BgEvent>>,
    cancelled: AtomicBool,
}

fn lock<T>(lock: &Mutex<T>) -> MutexGuard<'_, T> {
    lock.lock().unwrap_or_else(|p| p.into_inner())
}

impl BgTask {
    fn send(&self, kind: BgKind, current: u64, total: u64, message: String) {
        let mut last = lock(&self.last);
        if last.as_ref().is_some_and(|e| e.kind.is_final()) {
            return;
        }
        let ev = BgEvent {
            task_id: self.id,
            kind,
            current_progress: current,
            total_progress: total,
            message,
        };
        *last = Some(ev.clone());
        let _ = self.tx.send(ev);
    }

    pub fn update(&self, current: u64, total: u64, message: impl Into<String>) {
        self.send(BgKind::Updated, current, total, message.into());
    }

    pub fn done(&self, message: impl Into<String>) {
        let total = self.total();
        self.send(BgKind::Done, total, total, message.into());
    }

    pub fn failed(&self, message: impl Into<String>) {
        let (c, t) = self.progress();
        self.send(BgKind::Failed, c, t, message.into());
    }

    pub fn cancelled(&self, message: impl Into<String>) {
        let (c, t) = self.progress();
        self.send(BgKind::Cancelled, c, t, message.into());
    }

    fn progress(&self) -> (u64, u64) {
        lock(&self.last)
            .as_ref()
            .map(|e| (e.current_progress, e.total_progress))
            .unwrap_or((0, 0))
    }

    fn total(&self) -> u64 {
        self.progress().1.max(1)
    }

    /// Asks the task to stop; it notices at its next step.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// The latest event (None before the first) and the events after it.
    pub fn subscribe(&self) -> (Option<BgEvent>, broadcast::Receiver<BgEvent>) {
        let last = lock(&self.last);
        (last.clone(), self.tx.subscribe())
    }

    pub fn finished(&self) -> Option<BgEvent> {
        lock(&self.last).clone().filter(|e| e.kind.is_final())
    }
}

#[derive(Default)]
pub struct BgTasks {
    tasks: Mutex<HashMap<Uuid, Arc<BgTask>>>,
}

impl BgTasks {
    pub fn start(&self, owner_access_key: &str) -> Arc<BgTask> {
        let (tx, _) = broadcast::channel(64);
        let task = Arc::new(BgTask {
            id: Uuid::new_v4(),
            owner_access_key: owner_access_key.to_string(),
            tx,
            last: Mutex::new(None),
            cancelled: AtomicBool::new(false),
        });
        let mut tasks = lock(&self.tasks);
        if tasks.len() > KEEP_FINISHED {
            let finished: Vec<Uuid> = tasks
                .values()
                .filter(|t| t.finished().is_some())
                .map(|t| t.id)
                .collect();
            let excess = tasks.len().saturating_sub(KEEP_FINISHED);
            for id in finished.into_iter().take(excess) {
                tasks.remove(&id);
            }
        }
        tasks.insert(task.id, task.clone());
        task
    }

    pub fn get(&self, id: Uuid) -> Option<Arc<BgTask>> {
        lock(&self.tasks).get(&id).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_ends_once_and_late_subscribers_see_the_end() {
        let tasks = BgTasks::default();
        let t = tasks.start("AK");
        let (first, mut rx) = t.subscribe();
        assert!(first.is_none());
        t.update(1, 4, "one");
        t.done("image-id");
        t.failed("too late");
        let a = rx.try_recv().ok().map(|e| e.kind);
        let b = rx
            .try_recv()
            .ok()
            .map(|e| (e.kind, e.message, e.current_progress));
        assert_eq!(a, Some(BgKind::Updated));
        assert_eq!(b, Some((BgKind::Done, "image-id".to_string(), 4)));
        assert!(rx.try_recv().is_err(), "nothing after the end");
        let got = tasks.get(t.id).and_then(|t| t.finished());
        assert_eq!(got.map(|e| e.kind), Some(BgKind::Done));
    }
}

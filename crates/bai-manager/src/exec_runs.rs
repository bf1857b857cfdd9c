//! Executions by long poll (`POST /session/{ref}`) between their polls: each run's output
//! stream by session and run id, at most [`MAX_RUNS`] at once (an abandoned run is dropped
//! first). Kept apart from the handler so the manager's state names no HTTP code.

use bai_core::agent::ExecEvent;
use futures::stream::BoxStream;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::Mutex;
use uuid::Uuid;

/// Most runs kept at once per manager (an abandoned run is dropped first).
const MAX_RUNS: usize = 256;

/// A run between answers: the agent's output stream, read on by the next poll.
pub struct Run {
    pub stream: BoxStream<'static, ExecEvent>,
}

/// A run by its session and run id.
type RunMap = HashMap<(Uuid, String), Arc<Mutex<Run>>>;

/// Runs waiting for their next poll, by session and run id.
#[derive(Default)]
pub struct Runs {
    runs: std::sync::Mutex<RunMap>,
}

impl Runs {
    pub(crate) fn get(&self, key: &(Uuid, String)) -> Option<Arc<Mutex<Run>>> {
        self.runs.lock().ok()?.get(key).cloned()
    }
    pub(crate) fn put(&self, key: (Uuid, String), run: Run) -> Arc<Mutex<Run>> {
        let run = Arc::new(Mutex::new(run));
        if let Ok(mut m) = self.runs.lock() {
            if m.len() >= MAX_RUNS
                && let Some(k) = m.keys().next().cloned()
            {
                m.remove(&k);
            }
            m.insert(key, run.clone());
        }
        run
    }
    pub(crate) fn remove(&self, key: &(Uuid, String)) {
        if let Ok(mut m) = self.runs.lock() {
            m.remove(key);
        }
    }
}

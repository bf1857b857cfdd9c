//! What the autoscaler remembers between rounds: each service's recent counter readings,
//! each rule's memory, the last note recorded per rule, and when each service was last
//! changed. No I/O and no manager code.

use bai_core::serving::autoscale::Memory;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Instant;
use uuid::Uuid;

/// One reading of an endpoint's counters.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    pub at: f64,
    pub inflight: u64,
    pub requests: u64,
    pub latency_us: u64,
}

/// What the autoscaler remembers between rounds.
pub struct State {
    pub(crate) started: Instant,
    pub(crate) readings: Mutex<HashMap<Uuid, VecDeque<Reading>>>,
    pub(crate) memories: Mutex<HashMap<Uuid, Memory>>,
    /// The last note recorded per rule (a firing that changes nothing is recorded once).
    pub(crate) notes: Mutex<HashMap<Uuid, String>>,
    /// When the autoscaler last changed each service (endpoint-level cooldown).
    pub(crate) changed: Mutex<HashMap<Uuid, chrono::DateTime<chrono::Utc>>>,
}

impl Default for State {
    fn default() -> Self {
        State {
            started: Instant::now(),
            readings: Default::default(),
            memories: Default::default(),
            notes: Default::default(),
            changed: Default::default(),
        }
    }
}

pub(crate) fn lock<T>(lock: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    lock.lock().unwrap_or_else(|p| p.into_inner())
}

//! What the people who run bai watch: counters and timings kept as the manager works
//! (API requests by route, scheduler passes, store calls, session events by kind), and
//! [`render`] writing them with the store's and agents' current state in Prometheus' text
//! format for `GET /metrics`.

mod histogram;
mod render;

pub use histogram::{AtomicHistogram, Histogram};
pub use render::render;

use std::collections::BTreeMap;
use std::sync::Mutex;

/// One API route's answers: how many by status, and how long they took.
#[derive(Debug, Default)]
pub struct RouteStats {
    pub by_status: BTreeMap<u16, u64>,
    pub latency: Histogram,
}

/// Everything counted since the manager started.
#[derive(Default)]
pub struct Metrics {
    /// By (method, route template).
    api: Mutex<BTreeMap<(String, String), RouteStats>>,
    scheduler_pass: Mutex<Histogram>,
    /// By store operation.
    store: Mutex<BTreeMap<&'static str, Histogram>>,
    /// Session events by kind (fed from the typed events the manager publishes).
    events: Mutex<BTreeMap<&'static str, u64>>,
    /// Every use of the store's write connection and of its read connections: each query or
    /// transaction, waiting for the connection included.
    pub store_write: AtomicHistogram,
    pub store_read: AtomicHistogram,
}

fn lock<T>(lock: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    lock.lock().unwrap_or_else(|p| p.into_inner())
}

impl Metrics {
    /// One API answer. `route` is the router's template (`/session/{reference}`), never
    /// the concrete path, so names and ids never become labels.
    pub fn api(&self, method: &str, route: &str, status: u16, secs: f64) {
        let mut api = lock(&self.api);
        let r = api
            .entry((method.to_string(), route.to_string()))
            .or_default();
        *r.by_status.entry(status).or_default() += 1;
        r.latency.observe(secs);
    }

    pub fn scheduler_pass(&self, secs: f64) {
        lock(&self.scheduler_pass).observe(secs);
    }

    pub fn store(&self, op: &'static str, secs: f64) {
        lock(&self.store).entry(op).or_default().observe(secs);
    }

    /// One use of a store connection (`kind`: `write` or `read`).
    pub fn store_connection(&self, kind: &str, secs: f64) {
        match kind {
            "write" => self.store_write.observe(secs),
            _ => self.store_read.observe(secs),
        }
    }

    pub fn event(&self, kind: &'static str) {
        *lock(&self.events).entry(kind).or_default() += 1;
    }
}

/// Times `f` as the store operation `op`.
pub fn timed<T>(metrics: &Metrics, op: &'static str, f: impl FnOnce() -> T) -> T {
    let t = std::time::Instant::now();
    let out = f();
    metrics.store(op, t.elapsed().as_secs_f64());
    out
}

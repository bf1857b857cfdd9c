//! The recent resource use of running sessions, kept in memory.

use bai_core::idle::UtilizationConfig;
use bai_core::stats::{KernelStats, StatSample};
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;
use uuid::Uuid;

/// How the monitor runs.
#[derive(Debug, Clone)]
pub struct MonitorConfig {
    /// Between two readings of every session's counters (and two idle checks).
    pub interval: Duration,
    /// The utilization checker, when an administrator set one up.
    pub utilization: Option<UtilizationConfig>,
}

impl Default for MonitorConfig {
    fn default() -> Self {
        MonitorConfig {
            interval: Duration::from_secs(5),
            utilization: None,
        }
    }
}

/// Samples kept per session: 30 minutes at the default interval.
const KEEP_SAMPLES: usize = 360;

#[derive(Debug, Default)]
struct Series {
    last: Option<KernelStats>,
    samples: VecDeque<StatSample>,
}

/// The recent resource use of every running session.
#[derive(Debug, Default)]
pub struct StatsBook(Mutex<HashMap<Uuid, Series>>);

impl StatsBook {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, Series>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a reading; from the second one on, each makes a sample.
    pub fn record(&self, session: Uuid, alloc: &bai_core::ResourceSlots, reading: KernelStats) {
        let mut book = self.lock();
        let series = book.entry(session).or_default();
        if let Some(prev) = &series.last
            && let Some(s) = StatSample::between(prev, &reading, alloc)
        {
            if series.samples.len() == KEEP_SAMPLES {
                series.samples.pop_front();
            }
            series.samples.push_back(s);
        }
        series.last = Some(reading);
    }

    /// The session's samples, oldest first.
    pub fn samples(&self, session: Uuid) -> Vec<StatSample> {
        self.lock()
            .get(&session)
            .map(|s| s.samples.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The last raw reading (cumulative counters).
    pub fn last(&self, session: Uuid) -> Option<KernelStats> {
        self.lock().get(&session).and_then(|s| s.last.clone())
    }

    /// The last reading and the newest sample, once there is a sample.
    pub fn latest(&self, session: Uuid) -> Option<(KernelStats, StatSample)> {
        let book = self.lock();
        let series = book.get(&session)?;
        Some((series.last.clone()?, series.samples.back()?.clone()))
    }

    /// The sessions with a series.
    pub fn sessions(&self) -> Vec<Uuid> {
        self.lock().keys().copied().collect()
    }

    pub fn forget(&self, session: Uuid) {
        self.lock().remove(&session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_book_makes_samples_from_the_second_reading_and_forgets_ended_sessions() {
        let book = StatsBook::default();
        let id = Uuid::new_v4();
        let alloc = bai_core::ResourceSlots {
            cpu_milli: 1000,
            mem: 1000,
            ..Default::default()
        };
        let reading = |at_ms, cpu_s: u64| KernelStats {
            at_ms,
            cpu_used_ns: cpu_s * 1_000_000_000,
            mem_bytes: 500,
            ..Default::default()
        };
        book.record(id, &alloc, reading(1000, 0));
        assert!(book.samples(id).is_empty());
        book.record(id, &alloc, reading(3000, 1));
        let s = book.samples(id);
        assert_eq!(s.len(), 1);
        assert!((s[0].cpu_util - 50.0).abs() < 1e-9);
        assert_eq!(s[0].mem, 50.0);
        for i in 0..(KEEP_SAMPLES as i64 + 10) {
            book.record(id, &alloc, reading(4000 + i * 1000, 2));
        }
        assert_eq!(book.samples(id).len(), KEEP_SAMPLES);
        assert_eq!(book.sessions(), [id]);
        book.forget(id);
        assert!(book.samples(id).is_empty() && book.last(id).is_none());
    }
}

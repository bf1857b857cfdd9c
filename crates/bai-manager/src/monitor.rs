//! The monitor: every interval it reads each running session's resource counters from its
//! agent, keeps a short series of samples per session (the detail panel's charts, the
//! utilization checker's input), asks the idle checkers of `bai_core::idle` about each
//! session, and terminates the sessions one of them finds idle.

use crate::lifecycle::terminate::terminate;
use crate::state::Manager;
use bai_core::idle::{self, Report, UtilizationConfig};
use bai_core::stats::{KernelStats, StatSample, now_ms};
use bai_core::status::{SessionResult, SessionStatus as S, SessionType};
use bai_store::SessionRow;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
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

/// Unix milliseconds of an RFC 3339 time.
fn ms(t: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(t)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// When the session started running, if it did.
fn running_since(row: &SessionRow) -> Option<i64> {
    row.status_history.get("RUNNING").and_then(|t| ms(t))
}

/// Every checker's report on a running session, in checker order. Sessions that do not
/// run get none.
pub fn reports(m: &Manager, row: &SessionRow) -> Vec<Report> {
    let Some(since) = running_since(row).filter(|_| row.status == S::Running) else {
        return Vec::new();
    };
    let policy = m.store.policy_of(&row.access_key).unwrap_or_default();
    judge(m, row, since, &policy, now_ms())
}

fn judge(
    m: &Manager,
    row: &SessionRow,
    running_since: i64,
    policy: &bai_store::PolicyRow,
    now: i64,
) -> Vec<Report> {
    let mut out = Vec::new();
    out.extend(idle::lifetime(
        u64::try_from(policy.max_session_lifetime).unwrap_or(0),
        running_since,
        now,
    ));
    // What happened before this manager started is not known: nobody is idle for it.
    let since = running_since.max(m.started_ms);
    let last_activity = m
        .traffic
        .get(row.id)
        .map(|t| {
            t.last_activity_ms
                .load(std::sync::atomic::Ordering::Relaxed)
        })
        .filter(|t| *t > 0);
    out.extend(idle::network(
        u64::try_from(policy.idle_timeout).unwrap_or(0),
        last_activity,
        since,
        now,
        row.session_type == SessionType::Batch,
    ));
    if let Some(cfg) = &m.config.monitor.utilization {
        let samples = m.stats.samples(row.id);
        let slots = &row.requested_slots;
        out.push(idle::utilization(
            cfg,
            &samples,
            since,
            now,
            |metric| match metric {
                "cpu_util" => slots.cpu_milli > 0,
                "mem" => slots.mem > 0,
                _ => false,
            },
        ));
    }
    out
}

/// The session's recent use as the API shows it: the interval, the samples, and the
/// cumulative counters of the last reading.
pub fn stats_json(m: &Manager, row: &SessionRow) -> serde_json::Value {
    serde_json::json!({
        "interval_secs": m.config.monitor.interval.as_secs_f64(),
        "samples": m.stats.samples(row.id),
        "counters": m.stats.last(row.id),
    })
}

/// The reports as Backend.AI's `idle_checks` field: checker name → report.
pub fn idle_checks_json(reports: &[Report]) -> serde_json::Value {
    serde_json::Value::Object(
        reports
            .iter()
            .map(|r| {
                (
                    r.checker.as_str().to_string(),
                    serde_json::to_value(r).unwrap_or_default(),
                )
            })
            .collect(),
    )
}

/// Backend.AI's `live_stat` of a kernel (a JSON text; metric → current, capacity, pct), from
/// the last sample and reading; None before the second reading.
pub fn live_stat(m: &Manager, row: &SessionRow) -> Option<String> {
    live_stat_value(m, row).map(|v| v.to_string())
}

fn live_stat_value(m: &Manager, row: &SessionRow) -> Option<serde_json::Value> {
    let (last, s) = m.stats.latest(row.id)?;
    let cores = row.requested_slots.cpu_milli as f64 / 1000.0;
    let v = serde_json::json!({
        "cpu_util": {"current": format!("{:.2}", s.cpu_util * cores), "capacity": format!("{:.2}", cores * 100.0), "pct": format!("{:.2}", s.cpu_util), "unit_hint": "percent"},
        "cpu_used": {"current": format!("{:.0}", last.cpu_used_ns as f64 / 1e6), "capacity": null, "unit_hint": "msec"},
        "mem": {"current": last.mem_bytes.to_string(), "capacity": row.requested_slots.mem.to_string(), "pct": format!("{:.2}", s.mem), "unit_hint": "bytes"},
        "net_rx": {"current": last.net_rx_bytes.to_string(), "capacity": null, "unit_hint": "bytes"},
        "net_tx": {"current": last.net_tx_bytes.to_string(), "capacity": null, "unit_hint": "bytes"},
        "io_read": {"current": last.io_read_bytes.to_string(), "capacity": null, "unit_hint": "bytes"},
        "io_write": {"current": last.io_write_bytes.to_string(), "capacity": null, "unit_hint": "bytes"},
    });
    Some(v)
}

/// What a session that ends leaves behind (Backend.AI's `last_stat`, a JSON text): its last
/// `live_stat` metrics, when there were two readings, and the traffic through its proxies
/// under `network`. None when nothing was measured.
pub fn last_stat(m: &Manager, row: &SessionRow) -> Option<String> {
    let mut v = live_stat_value(m, row).unwrap_or_else(|| serde_json::json!({}));
    if let Some(t) = m.traffic.get(row.id) {
        v["network"] = t.json();
    }
    (v.as_object().is_some_and(|o| !o.is_empty())).then(|| v.to_string())
}

/// Keeps a session's last counters in the store, then forgets its series and traffic: an
/// ended session holds no memory in the manager.
pub fn keep_last_stat(m: &Manager, row: &SessionRow) {
    if let Some(stat) = last_stat(m, row)
        && let Err(e) = m.store.set_last_stat(row.id, &stat)
    {
        tracing::warn!(session = %row.id, error = %e, "cannot keep the last stat");
    }
    m.stats.forget(row.id);
    m.traffic.forget(row.id);
}

/// Drops the series and traffic of sessions that ended. `keep_last_stat` does that as a
/// session terminates (a TERMINATING session keeps its series until then, for its
/// `last_stat`); this catches the rest: sessions cancelled before they ran, or a manager
/// restart mid-termination.
fn forget_ended(m: &Manager, running: &[SessionRow]) {
    let mut known = m.stats.sessions();
    known.extend(m.traffic.sessions());
    known.sort_unstable();
    known.dedup();
    for id in known {
        if running.iter().any(|r| r.id == id) {
            continue;
        }
        let ended = match m.store.session(id) {
            Ok(Some(r)) => r.status.is_terminal(),
            Ok(None) => true,
            Err(_) => false,
        };
        if ended {
            m.stats.forget(id);
            m.traffic.forget(id);
        }
    }
}

/// One round: read every running session's counters, then judge each.
pub async fn round(m: &Arc<Manager>) {
    let Ok(rows) = m.store.sessions_in(&[S::Running]) else {
        return;
    };
    let readings = futures::future::join_all(rows.iter().map(|row| {
        let agent = row.agent_id.as_deref().and_then(|a| m.agent(a));
        let kernel = row.main_kernel_id;
        async move {
            match agent {
                Some(a) => a.rpc.kernel_stats(kernel).await.ok(),
                None => None,
            }
        }
    }))
    .await;
    for (row, reading) in rows.iter().zip(readings) {
        if let Some(r) = reading {
            m.stats.record(row.id, &row.requested_slots, r);
        }
    }
    forget_ended(m, &rows);
    let now = now_ms();
    let mut policies: HashMap<String, bai_store::PolicyRow> = HashMap::new();
    for row in &rows {
        let Some(since) = running_since(row) else {
            continue;
        };
        let policy = policies
            .entry(row.access_key.clone())
            .or_insert_with(|| m.store.policy_of(&row.access_key).unwrap_or_default())
            .clone();
        let Some(verdict) = judge(m, row, since, &policy, now)
            .into_iter()
            .find(|r| r.idle)
        else {
            continue;
        };
        // The readings took a while: the session may be ending already.
        if !matches!(m.store.session(row.id), Ok(Some(r)) if r.status == S::Running) {
            continue;
        }
        let reason = verdict.checker.reason();
        tracing::info!(session = %row.id, name = %row.name, checker = verdict.checker.as_str(), reason, "idle checker ends a session");
        let m = m.clone();
        let id = row.id;
        tokio::spawn(async move {
            if let Err(e) = terminate(&m, id, reason, SessionResult::Failure).await {
                tracing::error!(session = %id, error = %e, "idle termination failed");
            }
        });
    }
}

/// Runs [`round`] every interval, for good.
pub fn spawn(m: Arc<Manager>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(m.config.monitor.interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            round(&m).await;
        }
    });
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

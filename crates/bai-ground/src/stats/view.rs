//! What the monitor knows about one session, as the API shows it (`live_stat`, `last_stat`,
//! the idle checks and the stats series), and what an ending session keeps.

use super::readings::Readings;
use bai_core::idle::{self, Checker, Report};
use bai_core::stats::now_ms;
use bai_core::status::{SessionStatus as S, SessionType};
use bai_store::SessionRow;

/// Unix milliseconds of an RFC 3339 time.
pub(crate) fn ms(t: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(t)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// When the session started running, if it did.
pub fn running_since(row: &SessionRow) -> Option<i64> {
    row.state
        .status_history
        .get(&bai_core::SessionStatus::Running)
        .and_then(|t| ms(t))
}

/// Every checker's report on a running session, in checker order. Sessions that do not
/// run get none.
pub fn reports(readings: &Readings, row: &SessionRow) -> Vec<Report> {
    let Some(since) = running_since(row).filter(|_| row.state.status == S::Running) else {
        return Vec::new();
    };
    let policy = readings
        .store
        .policy_of(&row.spec.access_key)
        .unwrap_or_default();
    judge(readings, row, since, &policy, now_ms())
}

pub fn judge(
    readings: &Readings,
    row: &SessionRow,
    running_since: i64,
    policy: &bai_store::PolicyRow,
    now: i64,
) -> Vec<Report> {
    let mut out = Vec::new();
    // A service's replicas are never reclaimed: the service decides how many run. A bare
    // inference session (made through the API, no service owns it) is checked as any other.
    if row.spec.session_type == SessionType::Inference
        && readings
            .store
            .route_of_session(row.id)
            .ok()
            .flatten()
            .is_some()
    {
        return out;
    }
    out.extend(idle::lifetime(
        u64::try_from(policy.max_session_lifetime).unwrap_or(0),
        running_since,
        now,
    ));
    // What happened before this manager started is not known: nobody is idle for it.
    let since = running_since.max(readings.started_ms);
    let last_activity = readings
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
        row.spec.session_type == SessionType::Batch,
    ));
    if let Some(cfg) = &readings.config.utilization {
        let samples = readings.stats.samples(row.id);
        let slots = &row.spec.requested_slots;
        out.push(idle::utilization(
            cfg,
            &samples,
            since,
            now,
            |metric| match metric {
                "cpu_util" => slots.cpu_milli > 0,
                "mem" => slots.mem > 0,
                // Accelerator metrics judge only sessions that hold an accelerator.
                "cuda_util" | "cuda_mem" => slots.accel.values().any(|v| *v > 0),
                _ => false,
            },
        ));
    }
    out
}

/// The reports as Backend.AI's `idle_checks` field: checker → report.
pub fn idle_checks(reports: Vec<Report>) -> std::collections::BTreeMap<Checker, Report> {
    reports.into_iter().map(|r| (r.checker, r)).collect()
}

/// Backend.AI's `live_stat` of a kernel (a JSON text; metric → current, capacity, pct), from
/// the last sample and reading; None before the second reading.
pub fn live_stat(readings: &Readings, row: &SessionRow) -> Option<String> {
    live_stat_value(readings, row).map(|v| v.to_string())
}

fn live_stat_value(readings: &Readings, row: &SessionRow) -> Option<serde_json::Value> {
    let (last, s) = readings.stats.latest(row.id)?;
    let cores = row.spec.requested_slots.cpu_milli as f64 / 1000.0;
    let v = serde_json::json!({
        "cpu_util": {"current": format!("{:.2}", s.cpu_util * cores), "capacity": format!("{:.2}", cores * 100.0), "pct": format!("{:.2}", s.cpu_util), "unit_hint": "percent"},
        "cpu_used": {"current": format!("{:.0}", last.cpu_used_ns as f64 / 1e6), "capacity": null, "unit_hint": "msec"},
        "mem": {"current": last.mem_bytes.to_string(), "capacity": row.spec.requested_slots.mem.to_string(), "pct": format!("{:.2}", s.mem), "unit_hint": "bytes"},
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
pub fn last_stat(readings: &Readings, row: &SessionRow) -> Option<String> {
    let mut v = live_stat_value(readings, row).unwrap_or_else(|| serde_json::json!({}));
    if let Some(t) = readings.traffic.get(row.id) {
        v["network"] = serde_json::to_value(t.network()).unwrap_or_default();
    }
    (v.as_object().is_some_and(|o| !o.is_empty())).then(|| v.to_string())
}

/// Keeps a session's last counters in the store, then forgets its series and traffic: an
/// ended session holds no memory in the manager.
pub fn keep_last_stat(readings: &Readings, row: &SessionRow) {
    if let Some(stat) = last_stat(readings, row)
        && let Err(e) = readings.store.set_last_stat(row.id, &stat)
    {
        tracing::warn!(session = %row.id, error = %e, "cannot keep the last stat");
    }
    readings.stats.forget(row.id);
    readings.traffic.forget(row.id);
}

/// Drops the series and traffic of sessions that ended. `keep_last_stat` does that as a
/// session terminates (a TERMINATING session keeps its series until then, for its
/// `last_stat`); this catches the rest: sessions cancelled before they ran, or a manager
/// restart mid-termination.
pub fn forget_ended(readings: &Readings, running: &[SessionRow]) {
    let mut known = readings.stats.sessions();
    known.extend(readings.traffic.sessions());
    known.sort_unstable();
    known.dedup();
    for id in known {
        if running.iter().any(|r| r.id == id) {
            continue;
        }
        let ended = match readings.store.session(id) {
            Ok(Some(r)) => r.state.status.is_terminal(),
            Ok(None) => true,
            Err(_) => false,
        };
        if ended {
            readings.stats.forget(id);
            readings.traffic.forget(id);
        }
    }
}

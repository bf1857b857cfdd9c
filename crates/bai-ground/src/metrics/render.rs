//! Prometheus' text exposition format (version 0.0.4) of the manager's metrics.

use super::{Histogram, Metrics, lock};
use crate::agents::Agents;
use crate::apps::TrafficBook;
use crate::stats::book::StatsBook;
use bai_store::Store;
use std::fmt::Write;

/// Escapes a label value (backslash, quote, newline).
fn esc(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn head(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn histogram(out: &mut String, name: &str, labels: &str, h: &Histogram) {
    let sep = if labels.is_empty() { "" } else { "," };
    for (le, n) in h.cumulative() {
        let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"{le}\"}} {n}");
    }
    let braces = if labels.is_empty() {
        String::new()
    } else {
        format!("{{{labels}}}")
    };
    let _ = writeln!(out, "{name}_sum{braces} {}", h.sum);
    let _ = writeln!(out, "{name}_count{braces} {}", h.count);
}

/// Per running session that holds accelerators: its GPU busy time and memory (percent of
/// its share, from the newest sample) and each device's memory in use, bytes.
fn session_gpus(out: &mut String, stats: &StatsBook) {
    let mut rows: Vec<_> = stats
        .sessions()
        .into_iter()
        .filter_map(|s| stats.latest(s).map(|(last, sample)| (s, last, sample)))
        .filter(|(_, last, _)| !last.devices.is_empty())
        .collect();
    rows.sort_by_key(|(s, _, _)| *s);
    head(
        out,
        "bai_session_cuda_util_percent",
        "gauge",
        "Per session holding GPUs: how busy its processes keep them, percent (the utilization idle checker's cuda_util).",
    );
    for (s, _, sample) in &rows {
        let _ = writeln!(
            out,
            "bai_session_cuda_util_percent{{session=\"{s}\"}} {}",
            sample.cuda_util.unwrap_or(0.0)
        );
    }
    head(
        out,
        "bai_session_cuda_mem_percent",
        "gauge",
        "Per session holding GPUs: device memory its processes use, percent of its share (cuda_mem).",
    );
    for (s, _, sample) in &rows {
        let _ = writeln!(
            out,
            "bai_session_cuda_mem_percent{{session=\"{s}\"}} {}",
            sample.cuda_mem.unwrap_or(0.0)
        );
    }
    head(
        out,
        "bai_session_gpu_memory_used_bytes",
        "gauge",
        "Per session and device: device memory its processes use, bytes.",
    );
    for (s, last, _) in &rows {
        for d in &last.devices {
            let _ = writeln!(
                out,
                "bai_session_gpu_memory_used_bytes{{session=\"{s}\",device=\"{}\"}} {}",
                esc(&d.device),
                d.mem_used
            );
        }
    }
}

/// Everything `/metrics` answers: the manager's own counters, and what the store, the agents,
/// the running sessions' readings and the app proxies' traffic say now.
pub fn render(
    metrics: &Metrics,
    store: &Store,
    agents: &Agents,
    stats: &StatsBook,
    traffic: &TrafficBook,
) -> String {
    let mut out = String::new();
    head(&mut out, "bai_up", "gauge", "1 while the manager serves.");
    let _ = writeln!(out, "bai_up 1");
    head(
        &mut out,
        "bai_build_info",
        "gauge",
        "The manager's release and API version.",
    );
    let _ = writeln!(
        out,
        "bai_build_info{{version=\"{}\",api=\"{}\"}} 1",
        bai_core::MANAGER_VERSION,
        bai_core::API_VERSION
    );

    let counts = super::timed(metrics, "session_counts", || store.session_counts());
    head(
        &mut out,
        "bai_sessions",
        "gauge",
        "Sessions by status and type.",
    );
    for c in counts.unwrap_or_default() {
        let _ = writeln!(
            out,
            "bai_sessions{{status=\"{}\",type=\"{}\"}} {}",
            esc(&c.status),
            esc(&c.session_type),
            c.count
        );
    }

    let queues = super::timed(metrics, "queues", || store.queues()).unwrap_or_default();
    let now = chrono::Utc::now();
    head(
        &mut out,
        "bai_queue_length",
        "gauge",
        "PENDING sessions per resource group.",
    );
    for q in &queues {
        let _ = writeln!(
            out,
            "bai_queue_length{{group=\"{}\"}} {}",
            esc(&q.group),
            q.pending
        );
    }
    head(
        &mut out,
        "bai_queue_oldest_wait_seconds",
        "gauge",
        "How long the longest-waiting PENDING session of each resource group has waited.",
    );
    for q in &queues {
        let waited = chrono::DateTime::parse_from_rfc3339(&q.oldest_created_at)
            .map(|t| (now - t.with_timezone(&chrono::Utc)).num_milliseconds() as f64 / 1000.0)
            .unwrap_or(0.0)
            .max(0.0);
        let _ = writeln!(
            out,
            "bai_queue_oldest_wait_seconds{{group=\"{}\"}} {waited}",
            esc(&q.group)
        );
    }

    head(
        &mut out,
        "bai_agent_up",
        "gauge",
        "Per agent: 1 while alive (heartbeats arrive), 0 when lost.",
    );
    let agents = agents.all();
    for a in &agents {
        let _ = writeln!(
            out,
            "bai_agent_up{{agent=\"{}\",state=\"{}\",drained=\"{}\"}} {}",
            esc(&a.id),
            a.status().as_str(),
            a.is_drained(),
            u8::from(a.is_alive())
        );
    }
    head(
        &mut out,
        "bai_agent_heartbeat_age_seconds",
        "gauge",
        "Seconds since a remote agent was last heard from.",
    );
    for a in &agents {
        if let Some(slot) = &a.remote {
            let _ = writeln!(
                out,
                "bai_agent_heartbeat_age_seconds{{agent=\"{}\"}} {}",
                esc(&a.id),
                slot.silent_for().as_secs_f64()
            );
        }
    }

    session_gpus(&mut out, stats);

    let (to_session, to_user) = traffic.totals();
    head(
        &mut out,
        "bai_proxy_bytes_total",
        "counter",
        "Bytes through the app, terminal and execute proxies.",
    );
    let _ = writeln!(
        out,
        "bai_proxy_bytes_total{{direction=\"to_session\"}} {to_session}"
    );
    let _ = writeln!(
        out,
        "bai_proxy_bytes_total{{direction=\"to_user\"}} {to_user}"
    );

    head(
        &mut out,
        "bai_session_events_total",
        "counter",
        "Session events the manager published, by kind.",
    );
    for (kind, n) in lock(&metrics.events).iter() {
        let _ = writeln!(out, "bai_session_events_total{{kind=\"{kind}\"}} {n}");
    }

    head(
        &mut out,
        "bai_scheduler_pass_seconds",
        "histogram",
        "How long one scheduling pass over every resource group took.",
    );
    histogram(
        &mut out,
        "bai_scheduler_pass_seconds",
        "",
        &lock(&metrics.scheduler_pass),
    );

    head(
        &mut out,
        "bai_store_seconds",
        "histogram",
        "How long store operations took, by operation.",
    );
    for (op, h) in lock(&metrics.store).iter() {
        histogram(&mut out, "bai_store_seconds", &format!("op=\"{op}\""), h);
    }
    head(
        &mut out,
        "bai_store_query_seconds",
        "histogram",
        "How long each use of a store connection took (every query and transaction, waiting \
         for the connection included), by connection kind.",
    );
    for (kind, h) in [
        ("write", &metrics.store_write),
        ("read", &metrics.store_read),
    ] {
        histogram(
            &mut out,
            "bai_store_query_seconds",
            &format!("kind=\"{kind}\""),
            &h.snapshot(),
        );
    }

    let api = lock(&metrics.api);
    head(
        &mut out,
        "bai_api_requests_total",
        "counter",
        "API answers by method, route and status (4xx and 5xx are the errors).",
    );
    for ((method, route), r) in api.iter() {
        for (status, n) in &r.by_status {
            let _ = writeln!(
                out,
                "bai_api_requests_total{{method=\"{method}\",route=\"{}\",status=\"{status}\"}} {n}",
                esc(route)
            );
        }
    }
    head(
        &mut out,
        "bai_api_request_seconds",
        "histogram",
        "How long API answers took, by method and route.",
    );
    for ((method, route), r) in api.iter() {
        histogram(
            &mut out,
            "bai_api_request_seconds",
            &format!("method=\"{method}\",route=\"{}\"", esc(route)),
            &r.latency,
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bai_core::accel::DeviceReading;
    use bai_core::stats::KernelStats;

    fn reading(at_ms: i64, util: f64, used: u64) -> KernelStats {
        KernelStats {
            at_ms,
            devices: vec![DeviceReading {
                device: "0".into(),
                util,
                mem_used: used,
                mem_total: 1000,
            }],
            ..Default::default()
        }
    }

    #[test]
    fn sessions_holding_gpus_show_their_use_and_others_do_not() {
        let book = StatsBook::default();
        let gpu = uuid::Uuid::new_v4();
        let cpu_only = uuid::Uuid::new_v4();
        let alloc = bai_core::ResourceSlots::default();
        book.record(gpu, &alloc, reading(1000, 10.0, 100));
        book.record(gpu, &alloc, reading(2000, 87.0, 250));
        book.record(
            cpu_only,
            &alloc,
            KernelStats {
                at_ms: 1000,
                ..Default::default()
            },
        );
        book.record(
            cpu_only,
            &alloc,
            KernelStats {
                at_ms: 2000,
                ..Default::default()
            },
        );
        let mut out = String::new();
        session_gpus(&mut out, &book);
        assert!(
            out.contains(&format!(
                "bai_session_cuda_util_percent{{session=\"{gpu}\"}} 87"
            )),
            "{out}"
        );
        assert!(
            out.contains(&format!(
                "bai_session_cuda_mem_percent{{session=\"{gpu}\"}} 25"
            )),
            "{out}"
        );
        assert!(out.contains(&format!(
            "bai_session_gpu_memory_used_bytes{{session=\"{gpu}\",device=\"0\"}} 250"
        )));
        assert!(!out.contains(&cpu_only.to_string()), "{out}");
    }
}

//! `bai rm`, `bai logs`, `bai session info|rename|history`.

use crate::args::{HistoryArgs, InfoArgs, RmArgs};
use crate::output::{cell, table};
use anyhow::{Result, anyhow};
use bai_api::sessions::stats::{IdleChecker, IdleReport, RemainingKind};
use bai_api::sessions::{Destroyed, HistoryRecord, PendingInfo, SessionStatus};
use bai_client::Client;
use serde_json::Value;
use std::collections::BTreeMap;

/// `terminated` or `cancelled` from a DELETE reply (`stats.status`, else `status`).
pub fn terminated_word(v: &Destroyed) -> String {
    let word = if v.stats.status.is_empty() {
        v.status.as_str()
    } else {
        v.stats.status.as_str()
    };
    word.to_ascii_lowercase()
}

/// Terminates each session; a failure is reported and the others still go. Exit 1 if any
/// failed.
pub async fn rm(client: &Client, a: &RmArgs) -> Result<i32> {
    let mut failed = false;
    for r in &a.references {
        match client.destroy(r, a.forced).await {
            Ok(v) => println!("Session {r} is {}.", terminated_word(&v)),
            Err(e) => {
                eprintln!("error: {r}: {e}");
                failed = true;
            }
        }
    }
    Ok(i32::from(failed))
}

pub async fn logs(client: &Client, reference: &str, kernel: Option<&str>) -> Result<i32> {
    let text = client.kernel_logs(reference, kernel).await?;
    print!("{text}");
    if !text.is_empty() && !text.ends_with('\n') {
        println!();
    }
    Ok(0)
}

pub async fn rename(client: &Client, reference: &str, new_name: &str) -> Result<i32> {
    bai_core::SessionName::parse(new_name).map_err(|e| anyhow!("{e}"))?;
    client.rename(reference, new_name).await?;
    println!("Session {reference} is renamed to {new_name}.");
    Ok(0)
}

/// Fields shown first by `session info`, in this order; the rest follow alphabetically.
const INFO_FIRST: &[&str] = &[
    "name",
    "id",
    "type",
    "status",
    "status_info",
    "result",
    "exit_code",
    "image",
    "tag",
    "access_key",
    "user_email",
    "domain_name",
    "group_name",
    "scaling_group",
    "egress",
    "agent",
    "cpu",
    "mem",
    "shmem",
    "startup_command",
    "created_at",
    "starts_at",
    "batch_timeout",
    "status_changed",
    "terminated_at",
];

/// Nested details left to `--json`.
const INFO_SKIP: &[&str] = &[
    "containers",
    "kernels",
    "status_history",
    "pending",
    "idle_checks",
    "live_stat",
    "last_stat",
];

/// `1h 2m`, `3m 4s`, `5s`.
fn span(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m {s}s"),
        (h, m, _) => format!("{h}h {m}m"),
    }
}

/// The idle checkers' reports as `GET /session` gives them (`idle_checks`, a JSON text),
/// in words; nothing when there are none or they cannot be read.
pub fn idle_lines(text: &str) -> Vec<String> {
    serde_json::from_str::<IdleChecks>(text)
        .map(|checks| idle_report_lines(&checks))
        .unwrap_or_default()
}

/// The idle checks by checker, as the wire contract types them.
type IdleChecks = std::collections::BTreeMap<IdleChecker, IdleReport>;

/// The idle checkers' reports in words, one line each.
pub fn idle_report_lines(checks: &IdleChecks) -> Vec<String> {
    if checks.is_empty() {
        return Vec::new();
    }
    let mut out = vec!["idle checks:".to_string()];
    for (checker, r) in checks {
        let remaining = span(r.remaining);
        let limit = span(r.threshold as f64);
        let when = if r.remaining_time_type == RemainingKind::GracePeriod {
            format!("grace period, {remaining} left")
        } else if r.idle {
            "idle: ending now".to_string()
        } else {
            format!("ends in {remaining} unless used (limit {limit})")
        };
        let mut line = format!("  {:<17} {when}", checker.as_str());
        if let Some(extra) = &r.extra {
            let parts: Vec<String> = extra
                .resources
                .iter()
                .map(|(metric, (avg, threshold))| {
                    let avg = avg
                        .map(|a| format!("{a:.1}%"))
                        .unwrap_or_else(|| "-".into());
                    format!(
                        "{metric} {avg} (threshold {}%)",
                        cell(&Value::from(*threshold))
                    )
                })
                .collect();
            line.push_str(&format!("; {}", parts.join(", ")));
        }
        out.push(line);
    }
    out
}

/// An ended session's last readings (`last_stat`, a JSON text), in words.
pub fn last_stat_lines(text: Option<&str>) -> Vec<String> {
    let parsed: Value = text
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or(Value::Null);
    let Some(stat) = parsed.as_object().filter(|o| !o.is_empty()) else {
        return Vec::new();
    };
    let number = |metric: &str| {
        stat.get(metric)
            .and_then(|m| m["current"].as_str())
            .and_then(|c| c.parse::<f64>().ok())
    };
    let bytes = |b: f64| bai_core::resources::format_bytes(b.max(0.0) as u64);
    let mut parts = Vec::new();
    if let Some(ms) = number("cpu_used") {
        parts.push(format!("CPU time {:.1}s", ms / 1000.0));
    }
    if let Some(b) = number("mem") {
        parts.push(format!("memory {}", bytes(b)));
    }
    if let (Some(rx), Some(tx)) = (number("net_rx"), number("net_tx")) {
        parts.push(format!("network {} in, {} out", bytes(rx), bytes(tx)));
    }
    if let Some(n) = stat.get("network") {
        let b = |k: &str| bytes(n[k].as_f64().unwrap_or(0.0));
        parts.push(format!(
            "through apps {} in, {} out",
            b("rx_bytes"),
            b("tx_bytes")
        ));
    }
    vec![format!("last stat: {}", parts.join("; "))]
}

/// "Why is it waiting", in words, for a PENDING session's `pending` object.
pub fn pending_lines(p: Option<&PendingInfo>) -> Vec<String> {
    let Some(p) = p else {
        return Vec::new();
    };
    let mut out = vec![format!("waiting because: {}", p.reason)];
    out.push(format!(
        "queue position: {} of {} in resource group {}",
        p.queue_position, p.queue_length, p.resource_group
    ));
    if !p.short_of.is_empty() {
        let parts: Vec<String> = p
            .short_of
            .iter()
            .map(|(what, agents)| {
                let what = if what == "mem" { "memory" } else { what };
                format!("{what} on {agents}")
            })
            .collect();
        out.push(format!(
            "short of: {} (of {} agents)",
            parts.join(", "),
            p.agents_considered
        ));
    }
    if let Some(t) = &p.estimated_start {
        out.push(format!("estimated start: {t}"));
    }
    out
}

/// `key: value` lines for a session object.
pub fn info_lines(v: &Value) -> Vec<String> {
    let Some(obj) = v.as_object() else {
        return vec![cell(v)];
    };
    let mut keys: Vec<&str> = INFO_FIRST
        .iter()
        .copied()
        .filter(|k| obj.contains_key(*k))
        .collect();
    let mut rest: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| !INFO_FIRST.contains(k) && !INFO_SKIP.contains(k))
        .collect();
    rest.sort_unstable();
    keys.extend(rest);
    keys.iter()
        .map(|k| match *k {
            // The policy in one line: `default`, `closed allow 10.0.0.0/8`.
            "egress" => {
                match serde_json::from_value::<bai_core::egress::EgressPolicy>(obj[*k].clone()) {
                    Ok(p) => format!("egress: {}", p.summary()),
                    Err(_) => format!("egress: {}", cell(&obj[*k])),
                }
            }
            _ => format!("{k}: {}", cell(&obj[*k])),
        })
        .collect()
}

pub async fn info(client: &Client, a: &InfoArgs) -> Result<i32> {
    let info = client.info_rest(&a.reference).await?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&info)?);
    } else {
        for l in info_lines(&serde_json::to_value(&info)?) {
            println!("{l}");
        }
        for l in super::session_kernels::kernel_lines(&info.kernels)
            .into_iter()
            .chain(pending_lines(info.pending.as_ref()))
            .chain(idle_lines(&info.idle_checks))
            .chain(last_stat_lines(info.last_stat.as_deref()))
        {
            println!("{l}");
        }
    }
    Ok(0)
}

/// `bai session stats`: the latest samples as a table, then the idle checks.
pub async fn stats(client: &Client, a: &InfoArgs) -> Result<i32> {
    let stats = client.stats(&a.reference).await?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&stats)?);
        return Ok(0);
    }
    if stats.samples.is_empty() {
        println!("no samples yet (the session is not running, or it just started)");
    }
    let mib = |x: f64| format!("{:.1}", x / (1 << 20) as f64);
    let kib = |x: f64| format!("{:.1}", x / 1024.0);
    let skip = stats.samples.len().saturating_sub(12);
    // GPU columns only for a session that holds an accelerator.
    let gpu = stats.samples.iter().any(|s| s.cuda_util.is_some());
    let pct = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into());
    let rows: Vec<Vec<String>> = stats.samples[skip..]
        .iter()
        .map(|s| {
            let at = chrono::DateTime::from_timestamp_millis(s.at_ms)
                .map(|t| t.format("%H:%M:%S").to_string())
                .unwrap_or_default();
            let mut row = vec![
                at,
                format!("{:.1}", s.cpu_util),
                mib(s.mem_bytes as f64),
                kib(s.net_rx_bps),
                kib(s.net_tx_bps),
                kib(s.io_read_bps),
                kib(s.io_write_bps),
            ];
            if gpu {
                row.extend([pct(s.cuda_util), pct(s.cuda_mem)]);
            }
            row
        })
        .collect();
    if !rows.is_empty() {
        let mut head = vec![
            "Time",
            "CPU %",
            "Mem MiB",
            "Net in KiB/s",
            "Net out KiB/s",
            "Disk read KiB/s",
            "Disk write KiB/s",
        ];
        if gpu {
            head.extend(["GPU %", "GPU mem %"]);
        }
        table(&head, &rows);
    }
    for l in idle_report_lines(&stats.idle_checks) {
        println!("{l}");
    }
    Ok(0)
}

/// `(status, time)` pairs in time order from a status-history result.
pub fn history_entries(h: &BTreeMap<SessionStatus, String>) -> Vec<(SessionStatus, String)> {
    let mut entries: Vec<(SessionStatus, String)> =
        h.iter().map(|(k, v)| (*k, v.clone())).collect();
    entries.sort_by(|a, b| a.1.cmp(&b.1));
    entries
}

/// A text, or `-` for none or an empty one.
fn or_dash(v: Option<&str>) -> String {
    v.filter(|s| !s.is_empty()).unwrap_or("-").to_string()
}

/// A value's word on the wire (`SUCCESS`, `NEED_RETRY`, …).
fn wire_word<T: serde::Serialize>(v: T) -> String {
    cell(&serde_json::to_value(v).unwrap_or(Value::Null))
}

/// One row of the scheduling-history table.
fn record_row(r: &HistoryRecord) -> Vec<String> {
    vec![
        r.id.to_string(),
        or_dash(Some(&r.phase)),
        wire_word(r.result),
        format!(
            "{} -> {}",
            or_dash(r.from_status.map(SessionStatus::as_str)),
            or_dash(r.to_status.map(SessionStatus::as_str))
        ),
        r.attempts.to_string(),
        or_dash(r.error_code.as_deref()),
        or_dash(Some(&r.message)),
        or_dash(Some(&r.updated_at)),
    ]
}

pub async fn history(client: &Client, a: &HistoryArgs) -> Result<i32> {
    let h = client.status_history(&a.reference).await?;
    for (status, time) in history_entries(&h) {
        println!("{:<16} {time}", status.as_str());
    }
    let filter = a.filter();
    if a.scheduling || a.steps || !filter.is_empty() {
        let pairs: Vec<(&str, &str)> = filter.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let sched = client
            .scheduling_history_filtered(&a.reference, &pairs)
            .await?;
        println!();
        let rows: Vec<Vec<String>> = sched.iter().map(record_row).collect();
        table(
            &[
                "ID",
                "Phase",
                "Result",
                "Transition",
                "Attempts",
                "Error code",
                "Message",
                "Updated",
            ],
            &rows,
        );
        if a.steps {
            for r in &sched {
                if r.sub_steps.is_empty() {
                    continue;
                }
                let row = record_row(r);
                println!();
                println!("{} {} (record {}):", row[1], row[2], r.id);
                let rows: Vec<Vec<String>> = r
                    .sub_steps
                    .iter()
                    .map(|s| {
                        vec![
                            or_dash(Some(&s.step)),
                            wire_word(s.result),
                            or_dash(s.error_code.as_deref()),
                            or_dash(Some(&s.message)),
                        ]
                    })
                    .collect();
                table(&["Step", "Result", "Error code", "Message"], &rows);
            }
        }
    }
    Ok(0)
}

/// `bai session files REF [PATH]`: a directory of a running session.
pub async fn files(client: &Client, reference: &str, path: &str) -> Result<i32> {
    let (abspath, entries) = client.session_files(reference, path).await?;
    if crate::output::json_items(&entries) {
        return Ok(0);
    }
    println!("{abspath}:");
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|e| {
            let text = |k: &str| match &e[k] {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Null => String::new(),
                v => v.to_string(),
            };
            let mtime = e["mtime"]
                .as_f64()
                .and_then(|t| chrono::DateTime::from_timestamp(t as i64, 0))
                .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
                .unwrap_or_default();
            vec![text("mode"), text("size"), mtime, text("filename")]
        })
        .collect();
    crate::output::table(&["Mode", "Size", "Modified (UTC)", "Name"], &rows);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn destroy_replies() {
        let reply = |stats: &str, status| Destroyed {
            stats: bai_api::sessions::DestroyedStats {
                status: stats.into(),
            },
            status,
            session_id: "u".into(),
        };
        assert_eq!(
            terminated_word(&reply("cancelled", SessionStatus::Cancelled)),
            "cancelled"
        );
        assert_eq!(
            terminated_word(&reply("", SessionStatus::Terminating)),
            "terminating"
        );
    }

    #[test]
    fn idle_checks_in_words() {
        let v = json!({
            "network_timeout": {"checker": "network_timeout", "remaining": 65.2, "remaining_time_type": "expire_after", "threshold": 1800, "idle": false},
            "utilization": {"checker": "utilization", "remaining": 30.0, "remaining_time_type": "grace_period", "threshold": 600, "idle": false,
                "extra": {"resources": {"cpu_util": [2.5, 10.0], "mem": [null, 5.0]}, "thresholds_check_operator": "and"}}
        });
        let l = idle_lines(&v.to_string());
        assert_eq!(l[0], "idle checks:");
        assert_eq!(
            l[1],
            "  network_timeout   ends in 1m 5s unless used (limit 30m 0s)"
        );
        assert_eq!(
            l[2],
            "  utilization       grace period, 30s left; cpu_util 2.5% (threshold 10.0%), mem - (threshold 5.0%)"
        );
        assert!(idle_lines("{}").is_empty());
        assert!(idle_lines("not json").is_empty());
    }

    #[test]
    fn last_stat_in_words() {
        let last = json!({
            "cpu_used": {"current": "1500", "unit_hint": "msec"},
            "mem": {"current": "1048576", "unit_hint": "bytes"},
            "network": {"rx_bytes": 2048, "tx_bytes": 10, "last_activity": null},
        });
        assert_eq!(
            last_stat_lines(Some(&last.to_string())),
            ["last stat: CPU time 1.5s; memory 1 MiB; through apps 2 KiB in, 10 B out"]
        );
        assert!(last_stat_lines(None).is_empty());
        assert!(last_stat_lines(Some("{}")).is_empty());
    }

    #[test]
    fn info_and_history_lines() {
        let l = info_lines(
            &json!({"zeta": 1, "status": "RUNNING", "name": "s", "kernels": [], "tag": null}),
        );
        assert_eq!(l, vec!["name: s", "status: RUNNING", "tag: -", "zeta: 1"]);
        let h = history_entries(
            &[
                (SessionStatus::Running, "2026-01-01T00:00:02".to_string()),
                (SessionStatus::Pending, "2026-01-01T00:00:00".to_string()),
            ]
            .into(),
        );
        assert_eq!(h[0].0, SessionStatus::Pending);
        assert_eq!(h[1].0, SessionStatus::Running);
    }

    #[test]
    fn waiting_in_words() {
        let p = PendingInfo {
            reason: "no agent has room".into(),
            code: "no-available-instances".into(),
            queue_position: 2,
            queue_length: 3,
            resource_group: "default".into(),
            short_of: vec![("mem".into(), 2), ("cpu".into(), 1)],
            agents_considered: 2,
            estimated_start: None,
            updated_at: "2026-01-01T00:00:00Z".into(),
        };
        assert_eq!(
            pending_lines(Some(&p)),
            [
                "waiting because: no agent has room",
                "queue position: 2 of 3 in resource group default",
                "short of: memory on 2, cpu on 1 (of 2 agents)",
            ]
        );
        assert!(pending_lines(None).is_empty());
    }

    #[test]
    fn scheduling_records_in_a_row() {
        let r = HistoryRecord {
            id: "5f0c6f0e-8a8c-4c55-9a57-8d0f0f5f6a11".parse().unwrap(),
            session_id: uuid::Uuid::nil(),
            phase: "schedule".into(),
            result: bai_api::sessions::HistoryResult::NeedRetry,
            from_status: Some(SessionStatus::Pending),
            to_status: None,
            error_code: Some("no-available-instances".into()),
            message: String::new(),
            attempts: 3,
            created_at: "t0".into(),
            updated_at: "t1".into(),
            sub_steps: vec![],
        };
        assert_eq!(
            record_row(&r),
            [
                "5f0c6f0e-8a8c-4c55-9a57-8d0f0f5f6a11",
                "schedule",
                "NEED_RETRY",
                "PENDING -> -",
                "3",
                "no-available-instances",
                "-",
                "t1"
            ]
        );
    }
}

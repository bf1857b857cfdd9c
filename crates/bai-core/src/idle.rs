//! Idle checkers: the three criteria under which a running session is reclaimed (seeds,
//! "Idleness checks"), as pure judgments over times and samples. The manager gathers the
//! inputs, asks each checker, terminates a session that one of them finds idle, and shows the
//! reports in the session detail (remaining time per checker, utilization against the
//! thresholds).
//!
//! - **Max session lifetime**: ends a session this long after it started running, whatever
//!   it does (the keypair policy's `max_session_lifetime`; reason `max-lifetime-exceeded`).
//! - **Network idle timeout**: ends a session that exchanged no bytes with its user (apps,
//!   terminals, tunnels, executions, downloads) for this long (the policy's `idle_timeout`;
//!   batch sessions are exempt; reason `idle-timeout`).
//! - **Utilization checker**: after a grace period, ends a session whose average use over the
//!   time window stays below the thresholds (`and`: all of them, `or`: any of them); resources
//!   the session did not ask for, and metrics no sample has, are left out (reason
//!   `idle-utilization`).

use crate::stats::StatSample;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The checkers, by the names Backend.AI reports them under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(rename = "IdleChecker")
)]
#[serde(rename_all = "snake_case")]
pub enum Checker {
    SessionLifetime,
    NetworkTimeout,
    Utilization,
}

impl Checker {
    pub fn as_str(self) -> &'static str {
        match self {
            Checker::SessionLifetime => "session_lifetime",
            Checker::NetworkTimeout => "network_timeout",
            Checker::Utilization => "utilization",
        }
    }

    /// Why a session this checker ends was ended.
    pub fn reason(self) -> crate::Reason {
        match self {
            Checker::SessionLifetime => crate::Reason::MaxLifetimeExceeded,
            Checker::NetworkTimeout => crate::Reason::IdleTimeout,
            Checker::Utilization => crate::Reason::IdleUtilization,
        }
    }
}

/// What `remaining` counts down to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RemainingKind {
    /// The session is ended when it reaches 0.
    ExpireAfter,
    /// The checker does not judge before it reaches 0.
    GracePeriod,
}

/// How the utilization thresholds combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ThresholdOp {
    /// Idle only when every metric is below its threshold.
    #[default]
    And,
    /// Idle when any metric is below its threshold.
    Or,
}

/// The utilization checker's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UtilizationConfig {
    /// The averages are taken over this many seconds.
    pub window_secs: u64,
    /// No judgment before this many seconds after the session started running.
    pub grace_secs: u64,
    pub op: ThresholdOp,
    /// Metric name (`cpu_util`, `mem`, …) → threshold in percent.
    pub thresholds: BTreeMap<String, f64>,
}

impl UtilizationConfig {
    /// Parses `window=600,grace=300,op=and,cpu_util=10,mem=5,cuda_util=1` (seconds, percent).
    pub fn parse(s: &str) -> Result<UtilizationConfig, String> {
        let mut c = UtilizationConfig {
            window_secs: 0,
            grace_secs: 0,
            op: ThresholdOp::And,
            thresholds: BTreeMap::new(),
        };
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| format!("{item:?} is not key=value"))?;
            let secs = || {
                crate::units::parse_duration(v)
                    .map(crate::units::round_secs)
                    .map_err(|e| format!("{k}={v:?} is not a duration (seconds, or 30m, 1h): {e}"))
            };
            match k {
                "window" => c.window_secs = secs()?,
                "grace" => c.grace_secs = secs()?,
                "op" => {
                    c.op = match v {
                        "and" => ThresholdOp::And,
                        "or" => ThresholdOp::Or,
                        _ => return Err(format!("op={v:?}: use and or or")),
                    }
                }
                "cpu_util" | "mem" | "cuda_util" | "cuda_mem" => {
                    let pct: f64 = v
                        .parse()
                        .ok()
                        .filter(|p: &f64| (0.0..=100.0).contains(p))
                        .ok_or_else(|| format!("{k}={v:?} is not a percentage from 0 to 100"))?;
                    c.thresholds.insert(k.to_string(), pct);
                }
                _ => {
                    return Err(format!(
                        "unknown setting {k:?}: use window, grace, op, cpu_util, mem, cuda_util, cuda_mem"
                    ));
                }
            }
        }
        if c.window_secs == 0 {
            return Err("window=SECONDS is required and must be more than 0".into());
        }
        if c.thresholds.is_empty() {
            return Err(
                "give at least one threshold (cpu_util, mem, cuda_util or cuda_mem =PCT)".into(),
            );
        }
        Ok(c)
    }
}

/// One checker's view of one session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(rename = "IdleReport")
)]
pub struct Report {
    pub checker: Checker,
    /// Seconds until `remaining_time_type` is reached (0: now).
    pub remaining: f64,
    pub remaining_time_type: RemainingKind,
    /// The checker's limit in seconds (lifetime, timeout, window).
    pub threshold: u64,
    /// The session is idle by this checker and is to be ended.
    pub idle: bool,
    /// Utilization only: metric → [average over the window, threshold] (percent), and how
    /// the thresholds combine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<UtilizationExtra>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UtilizationExtra {
    pub resources: BTreeMap<String, (Option<f64>, f64)>,
    pub thresholds_check_operator: ThresholdOp,
}

fn secs_left(deadline_ms: i64, now_ms: i64) -> f64 {
    ((deadline_ms - now_ms) as f64 / 1000.0).max(0.0)
}

/// Max session lifetime; None when the policy sets none (0).
pub fn lifetime(max_lifetime_secs: u64, running_since_ms: i64, now_ms: i64) -> Option<Report> {
    if max_lifetime_secs == 0 {
        return None;
    }
    let deadline = running_since_ms + (max_lifetime_secs as i64) * 1000;
    Some(Report {
        checker: Checker::SessionLifetime,
        remaining: secs_left(deadline, now_ms),
        remaining_time_type: RemainingKind::ExpireAfter,
        threshold: max_lifetime_secs,
        idle: now_ms >= deadline,
        extra: None,
    })
}

/// Network idle timeout; None when the policy sets none (0) or for batch sessions. The
/// countdown starts at the last byte exchanged, or when the session started running.
pub fn network(
    timeout_secs: u64,
    last_activity_ms: Option<i64>,
    running_since_ms: i64,
    now_ms: i64,
    batch: bool,
) -> Option<Report> {
    if timeout_secs == 0 || batch {
        return None;
    }
    let since = last_activity_ms
        .unwrap_or(running_since_ms)
        .max(running_since_ms);
    let deadline = since + (timeout_secs as i64) * 1000;
    Some(Report {
        checker: Checker::NetworkTimeout,
        remaining: secs_left(deadline, now_ms),
        remaining_time_type: RemainingKind::ExpireAfter,
        threshold: timeout_secs,
        idle: now_ms >= deadline,
        extra: None,
    })
}

/// The utilization checker over `samples` (oldest first). `requested` tells which metrics
/// apply: a metric is left out when the session asked for none of its resource (`asked`
/// returns false for it).
pub fn utilization(
    cfg: &UtilizationConfig,
    samples: &[StatSample],
    running_since_ms: i64,
    now_ms: i64,
    asked: impl Fn(&str) -> bool,
) -> Report {
    let window_ms = (cfg.window_secs as i64) * 1000;
    let grace_end = running_since_ms + (cfg.grace_secs as i64) * 1000;
    let from = now_ms - window_ms;
    let in_window: Vec<&StatSample> = samples.iter().filter(|s| s.at_ms > from).collect();
    let mut resources = BTreeMap::new();
    let mut below = Vec::new();
    for (metric, threshold) in &cfg.thresholds {
        if !asked(metric) {
            continue;
        }
        let values: Vec<f64> = in_window.iter().filter_map(|s| s.metric(metric)).collect();
        let avg = (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64);
        if let Some(a) = avg {
            below.push(a < *threshold);
        }
        resources.insert(metric.clone(), (avg, *threshold));
    }
    let extra = Some(UtilizationExtra {
        resources,
        thresholds_check_operator: cfg.op,
    });
    let report = |remaining: f64, kind, idle| Report {
        checker: Checker::Utilization,
        remaining,
        remaining_time_type: kind,
        threshold: cfg.window_secs,
        idle,
        extra: extra.clone(),
    };
    if now_ms < grace_end {
        return report(
            secs_left(grace_end, now_ms),
            RemainingKind::GracePeriod,
            false,
        );
    }
    // A verdict needs a whole window of samples after the grace period.
    let judged_from = grace_end.max(running_since_ms) + window_ms;
    if now_ms < judged_from {
        return report(
            secs_left(judged_from, now_ms),
            RemainingKind::ExpireAfter,
            false,
        );
    }
    let idle = !below.is_empty()
        && match cfg.op {
            ThresholdOp::And => below.iter().all(|b| *b),
            ThresholdOp::Or => below.iter().any(|b| *b),
        };
    let remaining = if idle { 0.0 } else { cfg.window_secs as f64 };
    report(remaining, RemainingKind::ExpireAfter, idle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at_ms: i64, cpu: f64, mem: f64) -> StatSample {
        StatSample {
            at_ms,
            cpu_util: cpu,
            mem,
            ..Default::default()
        }
    }

    fn cfg(op: ThresholdOp) -> UtilizationConfig {
        UtilizationConfig::parse(&format!(
            "window=10,grace=5,cpu_util=20,mem=30,op={}",
            match op {
                ThresholdOp::And => "and",
                ThresholdOp::Or => "or",
            }
        ))
        .unwrap()
    }

    #[test]
    fn lifetime_counts_from_running() {
        assert!(lifetime(0, 0, 1_000_000).is_none());
        let r = lifetime(60, 1_000, 31_000).unwrap();
        assert_eq!(r.remaining, 30.0);
        assert!(!r.idle);
        assert!(lifetime(60, 1_000, 61_000).unwrap().idle);
    }

    #[test]
    fn network_counts_from_the_last_byte_and_spares_batch() {
        assert!(network(60, None, 0, 100_000, true).is_none());
        assert!(network(0, None, 0, 100_000, false).is_none());
        // Never touched: counts from the start.
        assert!(network(60, None, 0, 60_000, false).unwrap().idle);
        // Activity at 50 s keeps it alive until 110 s.
        let r = network(60, Some(50_000), 0, 60_000, false).unwrap();
        assert!(!r.idle);
        assert_eq!(r.remaining, 50.0);
        assert!(network(60, Some(50_000), 0, 110_000, false).unwrap().idle);
    }

    #[test]
    fn utilization_waits_for_grace_then_a_full_window() {
        let c = cfg(ThresholdOp::And);
        let low: Vec<StatSample> = (1..=20).map(|i| sample(i * 1000, 1.0, 1.0)).collect();
        let r = utilization(&c, &low, 0, 3_000, |_| true);
        assert_eq!(r.remaining_time_type, RemainingKind::GracePeriod);
        assert_eq!(r.remaining, 2.0);
        assert!(!r.idle);
        // Grace ends at 5 s; the first verdict comes at 15 s.
        let r = utilization(&c, &low, 0, 12_000, |_| true);
        assert_eq!(r.remaining_time_type, RemainingKind::ExpireAfter);
        assert_eq!(r.remaining, 3.0);
        assert!(!r.idle);
        let r = utilization(&c, &low, 0, 16_000, |_| true);
        assert!(r.idle);
        let extra = r.extra.unwrap();
        assert_eq!(extra.resources["cpu_util"], (Some(1.0), 20.0));
    }

    #[test]
    fn and_needs_every_metric_low_or_needs_one() {
        // CPU low, memory high.
        let s: Vec<StatSample> = (1..=20).map(|i| sample(i * 1000, 1.0, 90.0)).collect();
        assert!(!utilization(&cfg(ThresholdOp::And), &s, 0, 20_000, |_| true).idle);
        assert!(utilization(&cfg(ThresholdOp::Or), &s, 0, 20_000, |_| true).idle);
        // Metrics the session did not ask for are left out: only memory counts then.
        assert!(!utilization(&cfg(ThresholdOp::Or), &s, 0, 20_000, |m| m == "mem").idle);
    }

    #[test]
    fn accelerator_thresholds_judge_only_sessions_with_accelerators() {
        let c = UtilizationConfig::parse("window=10,cuda_util=1").unwrap();
        // CPU busy, GPU idle.
        let s: Vec<StatSample> = (1..=20)
            .map(|i| StatSample {
                cuda_util: Some(0.0),
                ..sample(i * 1000, 90.0, 50.0)
            })
            .collect();
        assert!(utilization(&c, &s, 0, 20_000, |m| m.starts_with("cuda")).idle);
        // A session without accelerators skips the metric: nothing judges it idle.
        assert!(!utilization(&c, &s, 0, 20_000, |m| !m.starts_with("cuda")).idle);
        // A busy GPU keeps it.
        let busy: Vec<StatSample> = (1..=20)
            .map(|i| StatSample {
                cuda_util: Some(40.0),
                ..sample(i * 1000, 0.0, 0.0)
            })
            .collect();
        assert!(!utilization(&c, &busy, 0, 20_000, |_| true).idle);
    }

    #[test]
    fn busy_sessions_and_sessions_without_samples_are_not_idle() {
        let busy: Vec<StatSample> = (1..=20).map(|i| sample(i * 1000, 80.0, 90.0)).collect();
        assert!(!utilization(&cfg(ThresholdOp::And), &busy, 0, 20_000, |_| true).idle);
        assert!(!utilization(&cfg(ThresholdOp::And), &[], 0, 20_000, |_| true).idle);
    }

    #[test]
    fn config_parses_and_refuses_nonsense() {
        let c = UtilizationConfig::parse("window=600, grace=300, op=or, cpu_util=10").unwrap();
        assert_eq!(
            (c.window_secs, c.grace_secs, c.op),
            (600, 300, ThresholdOp::Or)
        );
        assert_eq!(c.thresholds["cpu_util"], 10.0);
        for bad in [
            "",
            "window=0,cpu_util=1",
            "window=10",
            "window=10,cpu_util=200",
            "window=x,mem=1",
            "window=10,gpu=3",
            "window=10,op=xor,mem=1",
        ] {
            assert!(UtilizationConfig::parse(bad).is_err(), "{bad}");
        }
    }
}

//! `GET /session/{reference}/stats`: recent resource use and the idle checks.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A session's recent resource use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Stats {
    /// Seconds between two readings.
    pub interval_secs: f64,
    /// One sample per interval, oldest first (at most 360).
    pub samples: Vec<StatSample>,
    /// The last raw reading; null before the first.
    pub counters: Option<Counters>,
    /// Each idle checker's report (none unless the session runs).
    pub idle_checks: BTreeMap<IdleChecker, IdleReport>,
}

/// What the kernel used between two readings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StatSample {
    /// Unix milliseconds at the end of the interval.
    pub at_ms: i64,
    /// CPU used, in percent of the CPU allocated (100: all of it busy).
    pub cpu_util: f64,
    /// Memory in use at the end of the interval, bytes.
    pub mem_bytes: u64,
    /// Memory in use, in percent of the memory allocated.
    pub mem: f64,
    /// Bytes per second received by the container.
    pub net_rx_bps: f64,
    /// Bytes per second sent by the container.
    pub net_tx_bps: f64,
    /// Bytes per second read from block devices.
    pub io_read_bps: f64,
    /// Bytes per second written to block devices.
    pub io_write_bps: f64,
}

/// One raw reading of the kernel's counters (cumulative since it started; memory is the
/// current use).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Counters {
    /// The kernel's id.
    pub kernel_id: String,
    /// Unix milliseconds of the reading.
    pub at_ms: i64,
    /// CPU time used, nanoseconds (all cores together).
    pub cpu_used_ns: u64,
    /// Memory in use, bytes.
    pub mem_bytes: u64,
    /// Bytes received.
    pub net_rx_bytes: u64,
    /// Bytes sent.
    pub net_tx_bytes: u64,
    /// Bytes read from block devices.
    pub io_read_bytes: u64,
    /// Bytes written to block devices.
    pub io_write_bytes: u64,
}

/// The idle checkers, by Backend.AI's names.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum IdleChecker {
    /// The keypair policy's maximum session lifetime.
    SessionLifetime,
    /// The policy's network idle timeout.
    NetworkTimeout,
    /// The administrator's utilization thresholds.
    Utilization,
}

/// What `remaining` counts down to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RemainingKind {
    /// The session is ended when it reaches 0.
    ExpireAfter,
    /// The checker does not judge before it reaches 0.
    GracePeriod,
}

/// How the utilization thresholds combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ThresholdOp {
    /// Idle only when every metric is below its threshold.
    And,
    /// Idle when any metric is below its threshold.
    Or,
}

/// One checker's view of a running session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IdleReport {
    /// The checker.
    pub checker: IdleChecker,
    /// Seconds until `remaining_time_type` is reached (0: now).
    pub remaining: f64,
    /// What the countdown leads to.
    pub remaining_time_type: RemainingKind,
    /// The checker's limit in seconds (lifetime, timeout, window).
    pub threshold: u64,
    /// Idle by this checker: the session is to be ended.
    pub idle: bool,
    /// Utilization only: the averages against the thresholds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<UtilizationExtra>,
}

/// The utilization checker's details.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UtilizationExtra {
    /// Metric → `[average over the window (null: no sample), threshold]`, in percent.
    pub resources: BTreeMap<String, (Option<f64>, f64)>,
    /// How the thresholds combine.
    pub thresholds_check_operator: ThresholdOp,
}

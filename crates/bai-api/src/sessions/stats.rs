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

// The samples, counters and idle reports are `bai-core`'s own types (what the server
// serializes), with their schemas from `bai-core`'s `schema` feature.
pub use bai_core::idle::{
    Checker as IdleChecker, RemainingKind, Report as IdleReport, ThresholdOp, UtilizationExtra,
};
pub use bai_core::stats::{KernelStats as Counters, StatSample};

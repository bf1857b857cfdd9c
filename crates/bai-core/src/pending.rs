//! Why a PENDING session waits, as the scheduler's last pass saw it (the scheduler writes
//! it; `GET /session` shows it).

use serde::{Deserialize, Serialize};

/// Why a PENDING session waits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PendingInfo {
    /// The reason in words.
    pub reason: String,
    /// The reason's code (`no-available-instances`, `concurrency-limit`, …).
    pub code: String,
    /// 1-based position in its resource group's queue, in the order the last pass tried it.
    pub queue_position: u64,
    /// Sessions in that queue.
    pub queue_length: u64,
    /// The resource group.
    pub resource_group: String,
    /// `[resource, number of agents short of it]`.
    pub short_of: Vec<(String, u64)>,
    /// Agents the pass considered.
    pub agents_considered: u64,
    /// Earliest possible start from running sessions' known ends (RFC 3339), if any.
    pub estimated_start: Option<String>,
    /// When the pass ran (RFC 3339).
    pub updated_at: String,
}

//! Why a session waits: what the last scheduling pass found, kept per PENDING session.

use serde::Serialize;

/// Why a session is still PENDING, as of the last pass.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PendingView {
    /// The reason in words.
    pub reason: String,
    /// The code of the reason (`no-available-instances`, `concurrency-limit`, …).
    pub code: String,
    /// 1-based position in its group's queue, in the order the last pass tried it.
    pub queue_position: usize,
    pub queue_length: usize,
    pub resource_group: String,
    /// `[(resource, agents short of it)]` and the number of agents considered.
    pub short_of: Vec<(String, usize)>,
    pub agents_considered: usize,
    /// Earliest possible start from running sessions' known ends (RFC 3339), if any.
    pub estimated_start: Option<String>,
    pub updated_at: String,
}

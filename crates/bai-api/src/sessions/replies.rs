//! The small answers about one session: logs, termination, status and scheduling history.

use super::status::SessionStatus;
pub use bai_core::history::{HistoryRecord, HistoryResult, StepResult, SubStep};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `GET /session/{reference}/logs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Logs {
    /// The logs.
    pub result: LogsResult,
}

/// The logs of a kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LogsResult {
    /// The container's output (stdout and stderr), as text; kept after the session ended.
    pub logs: String,
}

/// The `data` of a 400 `too-many-sessions-matched`: the sessions a reference matched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionMatches {
    pub matches: Vec<SessionMatch>,
}

/// One session a reference matched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionMatch {
    pub id: String,
    pub name: String,
    pub status: String,
}

/// `DELETE /session/{reference}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Destroyed {
    /// What the official client prints with `-s`.
    pub stats: DestroyedStats,
    /// The status after the request (`CANCELLED`, `TERMINATING`, `TERMINATED`).
    pub status: SessionStatus,
    /// The session's id.
    #[serde(rename = "sessionId")]
    pub session_id: String,
}

/// The `stats` of a termination.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DestroyedStats {
    /// The status after the request in lower case (`terminated`, `cancelled`, …).
    pub status: String,
}

/// `GET /session/{reference}/status-history`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StatusHistory {
    /// Status → when the session first entered it (RFC 3339).
    pub result: BTreeMap<SessionStatus, String>,
}

/// `GET /session/{reference}/files`: one directory of the session's main kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileListing {
    /// A JSON text: `[{"filename", "size", "mode" (like `-rw-r--r--`), "mtime" (epoch
    /// seconds)}]`, as Backend.AI sends it.
    pub files: String,
    /// Always null (errors are problems).
    pub errors: Option<String>,
    /// The directory listed, absolute inside the kernel.
    pub abspath: String,
}

/// `GET /session/{reference}/dependency-graph`: a session and what it waits for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DependencyNode {
    /// The session's id.
    pub session_id: String,
    /// Its name (null for a session that no longer exists).
    pub session_name: Option<String>,
    /// Its status (null for a session that no longer exists).
    pub status: Option<SessionStatus>,
    /// When its status last changed (RFC 3339).
    pub status_changed: Option<String>,
    /// The sessions it depends on, each as a node of its own.
    pub depends_on: Vec<DependencyNode>,
}

/// `GET /session/{reference}/scheduling-history`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SchedulingHistory {
    /// The records that match the filter, oldest first.
    pub result: Vec<HistoryRecord>,
}

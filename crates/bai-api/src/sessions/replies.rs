//! The small answers about one session: logs, termination, status and scheduling history.

use super::status::SessionStatus;
pub use bai_core::history::{HistoryResult, StepResult, SubStep};
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

/// One record of what happened to a session on its way. Identical consecutive attempts
/// merge into one (`attempts` counts them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HistoryRecord {
    /// The record's id (a UUID).
    pub id: String,
    /// The session's id.
    pub session_id: String,
    /// Which part acted: `schedule`, `launch`, `terminate`, …
    pub phase: String,
    /// How it went.
    pub result: HistoryResult,
    /// The status before.
    pub from_status: Option<SessionStatus>,
    /// The status after.
    pub to_status: Option<SessionStatus>,
    /// The code of a failure or wait (e.g. `no-available-instances`).
    pub error_code: Option<String>,
    /// What happened, in words.
    pub message: String,
    /// How many identical attempts this record stands for.
    pub attempts: i64,
    /// The first attempt (RFC 3339).
    pub created_at: String,
    /// The last attempt (RFC 3339).
    pub updated_at: String,
    /// The scheduler's steps (none for lifecycle records).
    pub sub_steps: Vec<SubStep>,
}

impl From<bai_core::history::HistoryRecord> for HistoryRecord {
    fn from(r: bai_core::history::HistoryRecord) -> HistoryRecord {
        HistoryRecord {
            id: r.id.to_string(),
            session_id: r.session_id.to_string(),
            phase: r.phase,
            result: r.result,
            from_status: r.from_status,
            to_status: r.to_status,
            error_code: r.error_code,
            message: r.message,
            attempts: r.attempts,
            created_at: r.created_at,
            updated_at: r.updated_at,
            sub_steps: r.sub_steps,
        }
    }
}

//! Scheduling history: what happened to a session on its way through the scheduler and the
//! lifecycle, phase by phase, as the seeds' Scheduling History modal shows it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum HistoryResult {
    Success,
    Failure,
    Stale,
    NeedRetry,
    Expired,
    GiveUp,
    Skipped,
}

impl HistoryResult {
    pub fn as_str(self) -> &'static str {
        match self {
            HistoryResult::Success => "SUCCESS",
            HistoryResult::Failure => "FAILURE",
            HistoryResult::Stale => "STALE",
            HistoryResult::NeedRetry => "NEED_RETRY",
            HistoryResult::Expired => "EXPIRED",
            HistoryResult::GiveUp => "GIVE_UP",
            HistoryResult::Skipped => "SKIPPED",
        }
    }
}

/// One record. Identical consecutive attempts merge (`attempts += 1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryRecord {
    pub id: i64,
    pub session_id: uuid::Uuid,
    pub phase: String,
    pub result: HistoryResult,
    pub from_status: Option<String>,
    pub to_status: Option<String>,
    pub error_code: Option<String>,
    pub message: String,
    pub attempts: i64,
    pub created_at: String,
    pub updated_at: String,
}

//! Scheduling history: what happened to a session on its way through the scheduler and the
//! lifecycle, phase by phase, as the seeds' Scheduling History modal shows it.

use crate::status::SessionStatus;
use serde::{Deserialize, Serialize};

/// The outcome of a scheduling or lifecycle step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum HistoryResult {
    /// It happened.
    Success,
    /// It failed.
    Failure,
    /// It no longer applied.
    Stale,
    /// It is tried again (e.g. no agent has room yet).
    NeedRetry,
    /// It ran out of time.
    Expired,
    /// It is not tried again.
    GiveUp,
    /// It was not needed.
    Skipped,
}

impl HistoryResult {
    pub const ALL: [HistoryResult; 7] = [
        HistoryResult::Success,
        HistoryResult::Failure,
        HistoryResult::Stale,
        HistoryResult::NeedRetry,
        HistoryResult::Expired,
        HistoryResult::GiveUp,
        HistoryResult::Skipped,
    ];

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

/// How a step went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StepResult {
    /// It passed.
    Success,
    /// It failed.
    Failure,
}

/// One step of a scheduling attempt: a validator, the sequencer, the agent selector or the
/// allocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SubStep {
    /// The step's name.
    pub step: String,
    /// How it went.
    pub result: StepResult,
    /// What it found.
    pub message: String,
    /// The failure's code.
    pub error_code: Option<String>,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// When it ended (RFC 3339).
    pub ended_at: String,
}

impl SubStep {
    /// A step that took no measurable time at `at` (RFC 3339; a pass formats it once).
    pub fn at(at: &str, step: &str, outcome: Result<String, (String, String)>) -> SubStep {
        let (result, message, error_code) = match outcome {
            Ok(msg) => (StepResult::Success, msg, None),
            Err((code, msg)) => (StepResult::Failure, msg, Some(code)),
        };
        SubStep {
            step: step.to_string(),
            result,
            message,
            error_code,
            started_at: at.to_string(),
            ended_at: at.to_string(),
        }
    }
}

// As the store keeps it and as the API shows it (one spelling; the ids are UUIDs, as
// Backend.AI's, written as text).
/// One record of what happened to a session on its way. Identical consecutive attempts
/// merge into one (`attempts` counts them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HistoryRecord {
    /// The record's id (a UUID).
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub id: uuid::Uuid,
    /// The session's id.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub session_id: uuid::Uuid,
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

/// The Scheduling History modal's filter bar: every given field must match (`message` as a
/// case-insensitive substring, the others exactly; statuses and results case-insensitively).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct HistoryFilter {
    pub id: Option<uuid::Uuid>,
    pub phase: Option<String>,
    pub result: Option<String>,
    pub from_status: Option<String>,
    pub to_status: Option<String>,
    pub error_code: Option<String>,
    pub message: Option<String>,
}

impl HistoryFilter {
    pub fn matches(&self, r: &HistoryRecord) -> bool {
        let eq_ci = |want: &Option<String>, have: Option<&str>| {
            want.as_deref()
                .is_none_or(|w| have.is_some_and(|h| h.eq_ignore_ascii_case(w)))
        };
        self.id.is_none_or(|id| id == r.id)
            && self.phase.as_deref().is_none_or(|p| p == r.phase)
            && eq_ci(&self.result, Some(r.result.as_str()))
            && eq_ci(&self.from_status, r.from_status.map(SessionStatus::as_str))
            && eq_ci(&self.to_status, r.to_status.map(SessionStatus::as_str))
            && self
                .error_code
                .as_deref()
                .is_none_or(|c| r.error_code.as_deref() == Some(c))
            && self.message.as_deref().is_none_or(|m| {
                r.message
                    .to_ascii_lowercase()
                    .contains(&m.to_ascii_lowercase())
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec() -> HistoryRecord {
        HistoryRecord {
            id: uuid::Uuid::from_u128(7),
            session_id: uuid::Uuid::nil(),
            phase: "schedule".into(),
            result: HistoryResult::NeedRetry,
            from_status: Some(SessionStatus::Pending),
            to_status: Some(SessionStatus::Pending),
            error_code: Some("no-available-instances".into()),
            message: "Memory short on 3 of 4 agents".into(),
            attempts: 3,
            created_at: String::new(),
            updated_at: String::new(),
            sub_steps: Vec::new(),
        }
    }

    #[test]
    fn filter_fields_all_must_match() {
        let r = rec();
        assert!(HistoryFilter::default().matches(&r));
        let f = HistoryFilter {
            result: Some("need_retry".into()),
            from_status: Some("pending".into()),
            message: Some("memory short".into()),
            error_code: Some("no-available-instances".into()),
            ..Default::default()
        };
        assert!(f.matches(&r));
        let f = HistoryFilter {
            phase: Some("launch".into()),
            ..Default::default()
        };
        assert!(!f.matches(&r));
        let f = HistoryFilter {
            id: Some(uuid::Uuid::from_u128(8)),
            ..Default::default()
        };
        assert!(!f.matches(&r));
        let f = HistoryFilter {
            id: Some(uuid::Uuid::from_u128(7)),
            ..Default::default()
        };
        assert!(f.matches(&r));
    }
}

//! Sub-steps of a scheduling attempt, as the Scheduling History modal shows them.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StepResult {
    Success,
    Failure,
}

/// One step: a validator, the sequencer, the agent selector or the allocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubStep {
    pub step: String,
    pub result: StepResult,
    pub message: String,
    pub error_code: Option<String>,
    /// RFC 3339.
    pub started_at: String,
    /// RFC 3339.
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

//! Every error answer: an RFC 7807 problem with Backend.AI's fields.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// The problems' typed `data` are `bai-core`'s (what the server writes), with their schemas
// from its `schema` feature.
pub use bai_core::problem::{ExistingSession, QuotaData};

/// An error, as every route answers one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Problem {
    /// A URI naming the kind of problem, e.g. `https://api.backend.ai/probs/invalid-api-params`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The kind in words, e.g. "Invalid API parameters.".
    pub title: String,
    /// What went wrong with this request, for a person.
    pub msg: String,
    /// Backend.AI's error code, e.g. `api_generic_invalid-parameters`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Details (e.g. the sessions a reference matched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

//! `POST /admin/gql`: the legacy GraphQL endpoint. Its answers are shaped by the query, so
//! `data` is free JSON.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A GraphQL request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GqlRequest {
    /// The query or mutation text (`compute_session_list`, `compute_session`,
    /// `compute_session_node`, `keypair`, `vfolder_list`, `session_scheduling_histories`,
    /// `modify_compute_session`, …).
    pub query: String,
    /// The values of the query's variables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<serde_json::Map<String, serde_json::Value>>,
    /// The operation to run, when the text has several.
    #[serde(
        rename = "operationName",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub operation_name: Option<String>,
}

/// A GraphQL answer (always 200; failures are in `errors`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GqlAnswer {
    /// Root field → its value, with exactly the fields the query selected (free JSON; a
    /// field that failed is null); null when the query could not be read.
    pub data: serde_json::Value,
    /// What failed, when something did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<GqlError>>,
}

/// One failure of a GraphQL request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GqlError {
    /// What went wrong.
    pub message: String,
    /// The root field it concerns (absent when the query itself is wrong).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<String>>,
}

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

/// `modify_compute_session(input: ModifyComputeSessionInput!)`: what the web UI and the
/// official client change of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModifySessionInput {
    /// The session: a Relay global id (`compute_session_node:<uuid>`, base64) or its UUID.
    pub id: String,
    /// A new name (the session name rules apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A new priority (refused here: not available yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    /// Echoed back in the answer.
    #[serde(
        rename = "clientMutationId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_mutation_id: Option<String>,
}

/// `modify_compute_session`'s arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModifySessionArgs {
    pub input: ModifySessionInput,
}

/// `session_scheduling_histories` and `admin_session_scheduling_histories`: one session's
/// records, filtered as the Scheduling History modal's filter bar does, a page at a time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SchedulingHistoriesArgs {
    /// The session: a Relay global id or its UUID (also read as `sessionId`).
    #[serde(alias = "sessionId")]
    pub session_id: String,
    /// One record by its id (a UUID).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The phase (`schedule`, `launch`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// The result, in any case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Part of the message, in any case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Records to skip.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Records to answer at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<u64>,
}

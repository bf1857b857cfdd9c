//! One entry of the audit log, as the store keeps it and `GET /admin/audit` shows it.

use serde::{Deserialize, Serialize};

// One spelling for the store's rows and the API's entries (`AuditEntry`). `actor` is the
// user's e-mail (or what a failed login gave); `action` what was done (`METHOD
// /route/{template}`, `graphql FIELD`, or `login`); `target` what it was done to (a session
// id, a folder, a policy name, …); `outcome` may also be `failed`.
/// One audit log entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(rename = "AuditEntry")
)]
pub struct AuditRecord {
    pub id: i64,
    pub at: String,
    pub actor: String,
    pub access_key: Option<String>,
    pub action: String,
    pub target: String,
    /// `ok`, or `refused` with the status or reason in `detail`.
    pub outcome: String,
    pub detail: String,
}

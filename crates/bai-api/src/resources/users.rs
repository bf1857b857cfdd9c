//! Users as administrators look them up.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `GET /admin/users/{email}`: a user's keypair (for "assign a session owner").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UserKeypair {
    /// The user's email.
    pub email: String,
    /// The access key of the user's keypair.
    pub access_key: String,
    /// Whether the keypair is an administrator's.
    pub is_admin: bool,
}

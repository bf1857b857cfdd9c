//! The server itself: version, announcement, and the app proxy's path mode.

use crate::route::{Body, Route, json};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `GET /`: the API version a client must speak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Version {
    /// e.g. `v9.20250722`.
    pub version: String,
    /// The manager's release, e.g. `26.9.6`.
    pub manager: String,
}

/// `GET /manager/announcement`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Announcement {
    pub enabled: bool,
    pub message: String,
}

/// `GET /manager/status` (administrators; the official client's `admin manager status`):
/// Backend.AI's manager status. bai's managers do not freeze, so it is always `running`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ManagerStatus {
    /// `running`.
    pub status: String,
    /// Sessions not yet terminated or cancelled (pending ones included).
    pub active_sessions: i64,
    /// The manager that answered.
    pub nodes: Vec<ManagerNode>,
}

/// One manager in [`ManagerStatus`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ManagerNode {
    /// The manager's instance id.
    pub id: String,
    /// `running`.
    pub status: String,
    /// Its bai version.
    pub version: String,
    /// The API version it speaks (`v9.20250722`).
    pub api_version: String,
    /// Sessions not yet terminated or cancelled.
    pub active_sessions: i64,
}

/// `GET /config/resource-slots`: every resource slot the cluster has now, with its unit
/// (`cpu`: `count`, `mem`: `bytes`, an accelerator's: `count`), as Backend.AI answers it.
pub type ResourceSlotTypes = std::collections::BTreeMap<String, String>;

/// `GET /health`: whether the manager can serve (503 when its database does not answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Health {
    /// `ok`, or `unavailable`.
    pub status: String,
    /// `ok`, or the database's error.
    pub database: String,
    /// Agents registered, and how many of them answer.
    pub agents: usize,
    pub agents_alive: usize,
    pub version: String,
}

/// `GET /admin/audit` query: every field narrows the list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AuditQuery {
    /// The e-mail of who did it.
    pub actor: Option<String>,
    /// An action (`POST /session`, `login`, `graphql modify_keypair`); with a trailing `*`,
    /// every action starting so (`POST /session*`).
    pub action: Option<String>,
    /// What it was done to (a path, a session id, a name).
    pub target: Option<String>,
    /// Entries at or after this RFC 3339 time.
    pub since: Option<String>,
    /// At most this many (1–1000, default 100).
    pub limit: Option<i64>,
}

// An audit log entry is `bai-core`'s (what the store keeps), with its schema (`AuditEntry`)
// from its `schema` feature.
pub use bai_core::audit::AuditRecord as AuditEntry;

/// `GET /admin/audit`: newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AuditList {
    pub entries: Vec<AuditEntry>,
}

/// The server area's operations.
pub fn routes() -> Vec<Route> {
    let mut out = vec![
        Route::new("get", "/").answers(200, json::<Version>()),
        Route::new("get", "/manager/announcement").answers(200, json::<Announcement>()),
        Route::new("get", "/manager/status").answers(200, json::<ManagerStatus>()),
        Route::new("get", "/config/resource-slots").answers(200, json::<ResourceSlotTypes>()),
        Route::new("get", "/health").answers(200, json::<Health>()),
        Route::new("get", "/metrics").answers(200, Body::Bytes("text/plain")),
        Route::new("get", "/admin/audit").answers(200, json::<AuditList>()),
    ];
    // The app proxy's path mode passes requests and answers through as the app makes them.
    for path in [
        "/app/{session}/{app}",
        "/app/{session}/{app}/",
        "/app/{session}/{app}/{rest}",
    ] {
        for method in ["get", "post", "put", "patch", "delete"] {
            out.push(
                Route::new(method, path)
                    .takes(Body::Any)
                    .answers(200, Body::Any)
                    // The proxy's own refusals are pages for the browser.
                    .also("4XX", Body::Bytes("text/html")),
            );
        }
    }
    out
}

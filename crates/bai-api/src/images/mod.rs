//! The images area's bodies and routes: session commits and conversions to images, followed
//! as background tasks (wire reference next §1), and the catalogue's image as the GraphQL
//! `images` / `customized_images` fields answer it.

use crate::route::{Route, events, json};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `POST /session/{reference}/commit` → 201: the background task saving the main kernel as
/// a gzip'ed image tarball on its agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommitStarted {
    pub bgtask_id: String,
    /// The committed (main) kernel.
    pub kernel: String,
    /// The tarball's path under the agent's commit directory.
    pub path: String,
}

/// `GET /session/{reference}/commit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommitStatus {
    /// `ready` (no commit runs) or `ongoing`.
    pub status: String,
    pub kernel: String,
    /// The running commit's task (bai's addition).
    #[serde(default)]
    pub bgtask_id: Option<String>,
}

/// `POST /session/{reference}/imagify`: the fields, from the JSON body or the query string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImagifyRequest {
    /// 4–32 letters, digits, `-` and `_`. A second conversion with the same name replaces
    /// that image.
    pub image_name: String,
    /// Only `user` (the image is private to its owner).
    #[serde(default)]
    pub image_visibility: Option<String>,
}

/// `POST /session/{reference}/imagify` → 200.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImagifyStarted {
    pub task_id: String,
}

/// The `data` of `GET /events/background-task` events: `bgtask_updated` (progress),
/// then one of `bgtask_done` (for a conversion, `message` is the new image's id),
/// `bgtask_failed` (`message` says why) or `bgtask_cancelled`; then `server_close`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BgTaskEvent {
    pub task_id: String,
    pub message: String,
    pub current_progress: u64,
    pub total_progress: u64,
}

/// One label of an image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KeyValue {
    pub key: String,
    pub value: String,
}

/// A minimum (and maximum) resource of an image, from its labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceLimit {
    pub key: String,
    pub min: Option<String>,
    pub max: Option<String>,
}

/// An image of the catalogue (GraphQL `images`, `image`, `customized_images`). The fields are
/// optional because GraphQL answers only those asked for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Image {
    #[serde(default)]
    pub id: Option<String>,
    /// The repository path without the registry (`bai/python`).
    #[serde(default)]
    pub name: Option<String>,
    /// `local` for images of the agents' engines.
    #[serde(default)]
    pub registry: Option<String>,
    #[serde(default)]
    pub tag: Option<String>,
    #[serde(default)]
    pub architecture: Option<String>,
    #[serde(default)]
    pub digest: Option<String>,
    #[serde(default)]
    pub size_bytes: Option<u64>,
    #[serde(default)]
    pub aliases: Option<Vec<String>>,
    #[serde(default)]
    pub labels: Option<Vec<KeyValue>>,
    #[serde(default)]
    pub resource_limits: Option<Vec<ResourceLimit>>,
    #[serde(default)]
    pub installed: Option<bool>,
    #[serde(default)]
    pub installed_agents: Option<Vec<String>>,
    /// The cluster's registry holds it: agents that lack it pull it.
    #[serde(default)]
    pub in_registry: Option<bool>,
    /// The full reference a session is launched with.
    #[serde(default)]
    pub canonical_name: Option<String>,
    /// `NAME (Customized)` for an image made from a session.
    #[serde(default)]
    pub humanized_name: Option<String>,
    /// `Customized` for an image made from a session.
    #[serde(default)]
    pub tags: Option<Vec<KeyValue>>,
    /// Its web apps (the service-ports label's names).
    #[serde(default)]
    pub apps: Option<Vec<String>>,
}

impl Image {
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .as_ref()?
            .iter()
            .find(|l| l.key == key)
            .map(|l| l.value.as_str())
    }
}

pub fn routes() -> Vec<Route> {
    vec![
        Route::new("post", "/session/{reference}/commit").answers(201, json::<CommitStarted>()),
        Route::new("get", "/session/{reference}/commit").answers(200, json::<CommitStatus>()),
        Route::new("post", "/session/{reference}/imagify")
            .takes(json::<ImagifyRequest>())
            .answers(200, json::<ImagifyStarted>()),
        Route::new("get", "/events/background-task").answers(200, events::<BgTaskEvent>()),
    ]
}

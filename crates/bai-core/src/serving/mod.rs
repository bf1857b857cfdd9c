//! What a model service is made of, as the store keeps it: the template every replica
//! session is made from, and the model definition it serves. Typed from the create request to
//! the store and back; `bai-serving` runs services from it.

pub mod autoscale;
pub mod definition;
pub mod service;

pub use definition::Definition;
pub use service::ServiceSpec;

use crate::amount::NumberOrText;
use crate::cluster::ClusterMode;
use crate::problem::Problem;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Replicas one service may ask for.
pub const MAX_REPLICAS: u32 = 16;

/// A 400 of a service request, with Backend.AI's code.
pub fn invalid_params(msg: impl Into<String>) -> Problem {
    Problem::invalid(msg).with_code("api_parsing_invalid-parameters")
}

/// What every replica of a service is made from (the service row's `spec` column keeps it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplicaTemplate {
    /// Per replica kernel, as the service was created with (`cpu`, `mem`, accelerators);
    /// read with the cluster's accelerators when each replica is made.
    pub resources: BTreeMap<String, NumberOrText>,
    /// `shmem`.
    pub resource_opts: BTreeMap<String, NumberOrText>,
    pub environ: BTreeMap<String, String>,
    pub cluster_mode: ClusterMode,
    pub cluster_size: u32,
    pub startup_command: Option<String>,
    pub bootstrap_script: Option<String>,
    pub tag: Option<String>,
    pub model_name: String,
    pub definition: Definition,
}

/// Why a route failed to start, as its route keeps it (the `error` the API shows of a failed
/// route).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RouteError {
    /// `RouteFailedToStart`, or the title of the problem that refused its session.
    pub name: String,
    /// What went wrong.
    pub repr: String,
    /// Where: `create`, `session` or `health-check`.
    pub src: String,
}

impl RouteError {
    /// As the route keeps it: JSON text.
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

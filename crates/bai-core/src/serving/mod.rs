//! What a model service is made of, as the store keeps it: the template every replica
//! session is made from, and the model definition it serves. Typed from the create request to
//! the store and back; `bai-serving` runs services from it.

pub mod definition;

pub use definition::Definition;

use crate::amount::NumberOrText;
use crate::cluster::ClusterMode;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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

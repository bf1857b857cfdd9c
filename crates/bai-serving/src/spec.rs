//! What every replica of a service is made from, as the service row keeps it (`spec`, its
//! JSON text in the database; read back into this type, never handled as JSON).

use super::definition::Definition;
use bai_api::sessions::NumberOrText;
use bai_core::Problem;
use bai_core::cluster::ClusterMode;
use bai_store::EndpointRow;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What every replica of a service is made from (stored as the service's `spec`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spec {
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

impl Spec {
    pub fn of(e: &EndpointRow) -> Result<Spec, Problem> {
        serde_json::from_str(&e.spec).map_err(|err| {
            Problem::internal(format!(
                "the service {}'s stored spec is unreadable: {err}",
                e.id
            ))
        })
    }
}

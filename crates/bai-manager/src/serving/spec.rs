//! What every replica of a service is made from, as the service row keeps it (`spec`, JSON).

use super::definition::Definition;
use bai_core::Problem;
use bai_store::EndpointRow;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What every replica of a service is made from (stored as the service's `spec`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    pub resources: serde_json::Map<String, Value>,
    pub resource_opts: serde_json::Map<String, Value>,
    pub environ: serde_json::Map<String, Value>,
    pub cluster_mode: String,
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

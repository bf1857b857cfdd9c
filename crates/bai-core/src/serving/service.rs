//! A new service as a user asked for it ([`ServiceSpec`]): what `POST /services` becomes at the
//! HTTP edge, in every spelling, before `bai-serving` checks it against the server and makes
//! it a service row.

use crate::amount::NumberOrText;
use std::collections::BTreeMap;

/// What a user asked of a new service. Nothing here has been checked yet: `bai-serving`'s
/// `create::plan` checks it (the name, the replicas against the owner's policy, the runtime,
/// the model folder and its definition, and the replicas' session as `POST /session` would).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServiceSpec {
    /// The service's name; a generated one when absent.
    pub name: Option<String>,
    /// The image every replica runs.
    pub image: String,
    /// Desired replicas.
    pub replicas: u32,
    /// The project (Backend.AI's `group`); `default` when absent.
    pub project: Option<String>,
    /// The domain; `default` when absent.
    pub domain: Option<String>,
    /// Kernels per replica; 1 when absent.
    pub cluster_size: Option<u32>,
    /// How each replica's kernels are spread, as given (`single-node`, `MULTI_NODE`, …).
    pub cluster_mode: Option<String>,
    /// An admin creating the service for another keypair.
    pub owner_access_key: Option<String>,
    /// Whether the endpoint answers without a token.
    pub open_to_public: bool,
    /// `custom` (a model definition, the default) or `cmd`.
    pub runtime_variant: Option<String>,
    pub startup_command: Option<String>,
    pub bootstrap_script: Option<String>,
    pub tag: Option<String>,
    /// The model folder: its id or name.
    pub model: String,
    /// Where the model folder is mounted (`/models` when absent).
    pub model_mount_destination: Option<String>,
    /// The definition inside the folder (the default names when absent).
    pub model_definition_path: Option<String>,
    /// The resource group.
    pub scaling_group: Option<String>,
    /// Per replica kernel (`cpu`, `mem`, accelerators), as given.
    pub resources: BTreeMap<String, NumberOrText>,
    /// `shmem`, as given.
    pub resource_opts: BTreeMap<String, NumberOrText>,
    /// Environment variables of every replica.
    pub environ: BTreeMap<String, String>,
}

//! `GET /folders/_/hosts`: the storage hosts folders may be created on.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

// What keeps a host's folders is `bai-core`'s, with its schema from its `schema` feature.
pub use bai_core::storage::Backend;

/// The storage hosts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Hosts {
    /// The host a folder goes to when its request names none, e.g. `local:volume1`.
    pub default: String,
    /// Every host a folder may be created on.
    pub allowed: Vec<String>,
    /// Each host, by name: its backend, capabilities and filesystem usage.
    pub volume_info: BTreeMap<String, VolumeInfo>,
}

/// One storage host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VolumeInfo {
    /// What keeps its folders.
    pub backend: Backend,
    /// What it can do.
    pub capabilities: Vec<Capability>,
    /// The filesystem it lives on.
    pub usage: VolumeUsage,
}

/// Something a storage host can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Capability {
    /// It holds data folders.
    Vfolder,
}

/// A filesystem's size and use (both 0 when it cannot be read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VolumeUsage {
    /// Its size in bytes.
    pub total_bytes: u64,
    /// Bytes in use.
    pub used_bytes: u64,
}

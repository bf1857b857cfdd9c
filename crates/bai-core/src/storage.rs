//! Storage hosts: what keeps a host's data folders.

use serde::{Deserialize, Serialize};

/// What keeps a host's folders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The built-in host, under the server's data directory.
    Local,
    /// A host configured on a directory of its own.
    Vfs,
}

//! What a data folder lets its users do with its files.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Who may write a folder's files, as Backend.AI spells it on the wire (`rw`, `ro`, `wd`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(rename = "Permission")
)]
pub enum FolderPermission {
    /// Read and write.
    #[default]
    #[serde(rename = "rw")]
    ReadWrite,
    /// Read only: mounted read-only in sessions; a project folder's members may not change
    /// its files through the API (its administrators may).
    #[serde(rename = "ro")]
    ReadOnly,
    /// Read, write and delete (Backend.AI's owner permission). bai creates folders with `rw`
    /// or `ro` only and refuses `wd` in a request.
    #[serde(rename = "wd")]
    WriteDelete,
}

impl FolderPermission {
    pub const ALL: [FolderPermission; 3] = [
        FolderPermission::ReadWrite,
        FolderPermission::ReadOnly,
        FolderPermission::WriteDelete,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FolderPermission::ReadWrite => "rw",
            FolderPermission::ReadOnly => "ro",
            FolderPermission::WriteDelete => "wd",
        }
    }

    /// The wire spelling back; None for anything else.
    pub fn parse(s: &str) -> Option<FolderPermission> {
        FolderPermission::ALL.into_iter().find(|p| p.as_str() == s)
    }

    pub fn is_read_only(self) -> bool {
        self == FolderPermission::ReadOnly
    }
}

impl fmt::Display for FolderPermission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The status of a data folder in its owner's trash (Backend.AI's `delete-pending`): kept
/// whole, not mounted or changed, until it is restored or purged.
pub const FOLDER_TRASHED: &str = "delete-pending";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip() {
        for p in FolderPermission::ALL {
            assert_eq!(FolderPermission::parse(p.as_str()), Some(p));
        }
        assert_eq!(FolderPermission::parse("RW"), None);
        assert!(FolderPermission::ReadOnly.is_read_only());
        assert!(!FolderPermission::ReadWrite.is_read_only());
    }
}

//! Files inside a folder: listing, making directories, renaming, moving and deleting. Every
//! path is relative to the folder's root and confined to it; symbolic links are not
//! followed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// A directory's entries and a mkdir's answer are `bai-core`'s (the server's storage writes
// them), with their schemas from its `schema` feature.
pub use bai_core::files::{
    FileEntry, FileType, Listing, MkdirAnswer, MkdirItem, MkdirRefused, MkdirResults,
};

/// One path or several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged, expecting = "a path, or a list of paths")]
pub enum Paths {
    /// One path.
    One(String),
    /// Several paths.
    Many(Vec<String>),
}

/// `POST /folders/{id}/mkdir`: directories to make.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Mkdir {
    /// The directory or directories to make.
    pub path: Paths,
    /// Make missing parent directories too (`mkdir -p`); false when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parents: Option<bool>,
    /// A directory that exists already is a success; false when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exist_ok: Option<bool>,
}

/// `POST /folders/{id}/rename-file`: rename a file or directory in place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RenameFile {
    /// The file or directory to rename.
    pub target_path: String,
    /// Its new name: a name, not a path; nothing may have it yet.
    pub new_name: String,
}

/// `POST /folders/{id}/move-file`: move a file or directory inside the folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MoveFile {
    /// The file or directory to move.
    pub src: String,
    /// Where it goes: into `dst` when that is a directory, else to the path `dst`.
    pub dst: String,
}

/// `DELETE /folders/{id}/delete-files`: files and directories to delete. All are checked
/// before any is removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DeleteFiles {
    /// The paths to delete; at least one.
    pub files: Vec<String>,
    /// Delete directories with their contents (`rm -r`); without it a directory is refused.
    /// False when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recursive: Option<bool>,
}

/// An empty object: the operation was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Done {}

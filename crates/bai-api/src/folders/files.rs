//! Files inside a folder: listing, making directories, renaming, moving and deleting. Every
//! path is relative to the folder's root and confined to it; symbolic links are not
//! followed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `GET /folders/{id}/files?path=…`: a directory's entries, sorted by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Listing {
    /// The entries.
    pub items: Vec<FileEntry>,
}

/// One entry of a directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileEntry {
    /// The entry's name (not its path).
    pub name: String,
    /// What it is.
    #[serde(rename = "type")]
    pub kind: FileType,
    /// Its size in bytes (a directory's own size, not its contents').
    pub size: u64,
    /// Its permission bits in octal digits, e.g. `644` or `755`.
    pub mode: String,
    /// When it was created (RFC 3339, UTC; its modification time where the filesystem keeps
    /// no creation time; empty when neither can be read).
    pub created: String,
    /// When it was last modified (RFC 3339, UTC; empty when it cannot be read).
    pub modified: String,
}

/// What a directory entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum FileType {
    /// A regular file (or anything else that is neither a directory nor a link).
    File,
    /// A directory.
    Directory,
    /// A symbolic link (never followed).
    Symlink,
}

impl FileType {
    /// The wire spelling (`FILE`, `DIRECTORY`, `SYMLINK`).
    pub fn as_str(self) -> &'static str {
        match self {
            FileType::File => "FILE",
            FileType::Directory => "DIRECTORY",
            FileType::Symlink => "SYMLINK",
        }
    }
}

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

/// `POST /folders/{id}/mkdir`: what became of each path. The answer is 201 when at least one
/// directory was made (or none was asked for), else 400 with this same body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MkdirAnswer {
    /// The paths, split by outcome.
    pub results: MkdirResults,
}

/// The paths of a mkdir, split by outcome, each in the order asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MkdirResults {
    /// The directories made (or already there, with `exist_ok`).
    pub success: Vec<MkdirItem>,
    /// The directories that could not be made.
    pub failed: Vec<MkdirItem>,
}

/// One path of a mkdir.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MkdirItem {
    /// The path as asked.
    pub item: String,
    /// Why it failed, for a person; `null` on success.
    pub msg: Option<String>,
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

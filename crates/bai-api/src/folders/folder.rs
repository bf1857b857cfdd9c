//! A data folder as the API shows it, and the requests that create, find, rename and delete
//! one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Who may write a folder's files: `bai-core`'s type.
pub use bai_core::FolderPermission as Permission;

/// What a folder is for (Backend.AI's usage mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum UsageMode {
    /// Plain data; the default.
    General,
    /// A model store.
    Model,
    /// A dataset.
    Data,
}

/// A folder's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FolderStatus {
    /// Usable.
    Ready,
    /// Its storage host is not configured on this server: it cannot be used, and its usage
    /// reads as zero.
    Unavailable,
    /// In its owner's trash: kept whole, not mounted or changed, until restored or purged.
    #[serde(rename = "delete-pending")]
    DeletePending,
    /// Being filled by a clone: not mounted or changed until the copy is done.
    Cloning,
}

/// Whose a folder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Ownership {
    /// A user's own folder.
    User,
    /// A project's folder, shared by its members.
    Group,
}

/// A size: a number of bytes, or a text with a unit (`512m`, `1g`, `2 GiB`, `1048576`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Size {
    /// Bytes.
    Bytes(u64),
    /// A number with an optional unit: `b`, `k`/`kb`/`kib`, `m`/`mb`/`mib`, `g`/`gb`/`gib`,
    /// `t`/`tb`/`tib` (all binary), case-insensitive.
    Text(String),
}

/// `POST /folders`: a new folder. The official client sends every optional field, as `null`
/// when unset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CreateFolder {
    /// The folder's name: 1 to 64 letters, digits, `.`, `-` or `_`, unique per owner. A
    /// leading `.` makes an automount folder (mounted at `/home/work/NAME` in every session of
    /// its owner); a few such names are reserved.
    pub name: String,
    /// The storage host, e.g. `local:volume1`; absent, `null` or empty: the default host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// A project's name: the folder becomes that project's (administrators only). Absent or
    /// `null`: the caller's own folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// `rw` (the default) or `ro`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<Permission>,
    /// The usage mode; `general` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_mode: Option<UsageMode>,
    /// The folder's quota, at least 16 MiB; absent or `null`: no quota. Also read as
    /// `max_size`.
    #[serde(default, alias = "max_size", skip_serializing_if = "Option::is_none")]
    pub quota: Option<Size>,
    /// Unmanaged folders are not supported: must be absent or `null`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmanaged_path: Option<String>,
    /// Sent by the official client; ignored (folders are not cloneable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloneable: Option<bool>,
}

/// A data folder (`POST /folders`, `GET /folders`, `GET /folders/{id}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Folder {
    /// The folder's id: a UUID in 32 hex digits, without hyphens.
    pub id: String,
    /// The folder's name.
    pub name: String,
    /// The storage host it lives on, e.g. `local:volume1`.
    pub host: String,
    /// The usage mode.
    pub usage_mode: UsageMode,
    /// What the caller may do with its files: the folder's permission, or the one it is
    /// shared with the caller with.
    pub permission: Permission,
    /// Its state.
    pub status: FolderStatus,
    /// When it was created (RFC 3339, UTC, microseconds).
    pub created_at: String,
    /// Whether the caller owns it (false for a project folder and for a folder shared with
    /// the caller).
    pub is_owner: bool,
    /// Whose it is.
    pub ownership_type: Ownership,
    /// The same as `ownership_type` (the official client reads `type`).
    #[serde(rename = "type")]
    pub kind: Ownership,
    /// The owning user's id; `null` for a project folder.
    pub user: Option<String>,
    /// The id of the user who created it.
    pub creator: String,
    /// The owning project's name; `null` for a user's folder.
    pub group: Option<String>,
    /// The same as `group`.
    pub group_name: Option<String>,
    /// Always true: every folder the caller may read can be cloned.
    pub cloneable: bool,
    /// The quota in MiB (rounded down); 0 without a quota.
    pub max_size: u64,
    /// The quota in bytes; `null` without one.
    pub quota: Option<u64>,
    /// How many files it holds (directories not counted).
    #[serde(rename = "numFiles")]
    pub num_files: u64,
    /// How many bytes its files hold.
    pub used_bytes: u64,
}

/// `DELETE /folders`: which folder to delete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FolderId {
    /// The folder's id, in hex or hyphenated.
    pub id: String,
}

/// `GET /folders/_/id`: the folder to find, by name (also as `?name=`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct IdLookup {
    /// The folder's name.
    pub name: String,
}

/// `GET /folders/_/id`: the folder the name names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FolderRef {
    /// The folder's id, in 32 hex digits.
    pub id: String,
    /// The folder's name.
    pub name: String,
}

/// `POST /folders/{id}/rename`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RenameFolder {
    /// The new name (the rules of [`CreateFolder::name`]).
    pub new_name: String,
}

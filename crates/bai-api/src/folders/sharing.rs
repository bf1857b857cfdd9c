//! Sharing folders: invitations to a user's own folder, per-user permissions on a project
//! folder, leaving a folder shared with you, and cloning a folder.

use super::folder::{Folder, FolderStatus, Ownership, Permission, UsageMode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `POST /folders/{id}/invite`: offer users a share of the caller's own folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Invite {
    /// The permission the invitees get: `ro`, `rw` or `wd`. Also read as `permission`.
    #[serde(alias = "permission")]
    pub perm: Permission,
    /// The invitees' emails. Also read as `emails`.
    #[serde(alias = "emails")]
    pub user_ids: Vec<String>,
}

/// An invitee who was not invited again, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Skipped {
    pub email: String,
    /// `already shared` or `already invited`.
    pub reason: String,
}

/// The answer of `POST /folders/{id}/invite`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Invited {
    /// The new invitations' ids.
    pub invited_ids: Vec<String>,
    /// Invitees who have the folder already or a pending invitation to it.
    pub skipped: Vec<Skipped>,
}

/// A pending invitation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Invitation {
    pub id: String,
    /// The inviter's email.
    pub inviter: String,
    pub inviter_user_email: String,
    pub invitee_user_email: String,
    /// The permission offered.
    pub mount_permission: Permission,
    /// The same as `mount_permission`.
    pub perm: Permission,
    pub created_at: String,
    pub modified_at: Option<String>,
    /// The folder's id (32 hex digits).
    pub vfolder_id: String,
    pub vfolder_name: String,
    /// `pending`.
    pub status: String,
    /// The same as `status`.
    pub state: String,
}

/// `GET /folders/invitations/list` and `/list-sent`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Invitations {
    pub invitations: Vec<Invitation>,
}

/// `POST /folders/invitations/accept` and `DELETE /folders/invitations/delete`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InvitationRef {
    /// The invitation's id.
    pub inv_id: String,
}

/// `POST /folders/invitations/update/{id}`: the permission a pending invitation offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UpdateInvitation {
    /// Also read as `permission`.
    #[serde(alias = "permission")]
    pub perm: Permission,
}

/// An empty JSON object: the action was done.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Ok {}

/// `POST /folders/{id}/share`: give project members their own permission on a project
/// folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Share {
    /// Also read as `perm`.
    #[serde(alias = "perm")]
    pub permission: Permission,
    /// The members' emails.
    pub emails: Vec<String>,
}

/// The answer of `POST /folders/{id}/share`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Shared {
    pub shared_emails: Vec<String>,
}

/// `DELETE /folders/{id}/unshare`: end shares (a project folder's members get its own
/// permission back; invitees of a user folder lose it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Unshare {
    pub emails: Vec<String>,
}

/// The answer of `DELETE /folders/{id}/unshare`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Unshared {
    pub unshared_emails: Vec<String>,
}

/// `POST /folders/{id}/leave`: the caller leaves a folder shared with them; its owner may
/// name another user (`shared_user_uuid`) to take it from.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Leave {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_user_uuid: Option<String>,
}

/// Who a folder is shared with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SharedTo {
    pub uuid: String,
    pub email: String,
}

/// One share of `GET /folders/_/shared`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShareEntry {
    pub vfolder_id: String,
    pub vfolder_name: String,
    pub status: FolderStatus,
    /// The owning user's id, or the project's name.
    pub owner: String,
    /// Whose the folder is.
    #[serde(rename = "type")]
    pub kind: Ownership,
    pub shared_to: SharedTo,
    pub perm: Permission,
}

/// `GET /folders/_/shared` (`?vfolder_id=`: one folder's): the shares of the folders the
/// caller may manage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShareList {
    pub shared: Vec<ShareEntry>,
}

/// `POST /folders/_/shared`: set (or, with `perm: null`, end) one user's share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UpdateShare {
    /// The folder's id.
    pub vfolder: String,
    /// The user's id.
    pub user: String,
    /// The new permission; `null` ends the share.
    #[serde(default)]
    pub perm: Option<Permission>,
}

/// `POST /folders/{id}/clone`: a new folder of the caller's with a copy of the files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CloneFolder {
    /// The new folder's name.
    pub target_name: String,
    /// Its storage host; the source's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_host: Option<String>,
    /// Its usage mode; the source's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_mode: Option<UsageMode>,
    /// Its permission (`rw` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<Permission>,
    /// Sent by the official client; ignored (every folder you may read can be cloned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloneable: Option<bool>,
}

/// The answer of `POST /folders/{id}/clone`: the new folder (status `cloning` until the copy
/// is done) and the background task that copies (`GET /events/background-task`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Cloned {
    #[serde(flatten)]
    pub folder: Folder,
    pub bgtask_id: String,
}

//! Data folders (wire contract §5.9, §6.4): folder CRUD, name → id lookup, file operations,
//! and uploads (TUS subset) / downloads through unsigned, token-bearing URLs.
//! A user sees their own folders, those shared with them and their projects'; anything else
//! is 404.
//!
//! `folders`: folder CRUD and hosts; `files`: file operations inside a folder; `transfers`:
//! the tokens of uploads and downloads; `upload` (TUS) and `download` use them, with
//! `raw_io` for bai's own client's raw connections; `json`: a folder's JSON, also for GraphQL;
//! `trash`: deleting moves a folder to its owner's trash, whence it is restored or purged;
//! `invitations` and `sharing`: a user folder shared by invitation, a project folder's
//! members given their own permission; `clone`: a copy of a folder as a new one.
//! Storage work that walks directories or runs system tools goes to a blocking thread.

mod clone;
mod download;
mod files;
mod folders;
mod invitations;
mod json;
mod raw_io;
mod sftp;
mod sharing;
mod transfers;
mod trash;
mod upload;

pub use clone::clone;
pub use download::download;
pub use files::{delete_files, files, mkdir, move_file, rename_file};
pub use folders::{create, delete, delete_by_path, hosts, id_of, info, list, rename};
pub use invitations::{
    accept as accept_invitation, delete as delete_invitation, invite, list as invitations,
    list_sent as sent_invitations, update as update_invitation,
};
pub use json::folder_view;
pub use sftp::sftp;
pub use sharing::{leave, share, shared, unshare, update_shared};
pub use transfers::{request_download, request_upload};
pub use trash::{force_delete, purge, restore};
pub use upload::{tus_head, tus_patch};

use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use bai_core::Problem;
use bai_store::VFolderRow;
use uuid::Uuid;

/// Folder names: 1–64 letters, digits, '.', '-', '_'. A leading '.' makes an automount folder
/// (mounted at /home/work/NAME in every session of its owner, like `.ssh`); dot-names that
/// would shadow the session's own configuration are reserved (`reserved_name`).
pub fn check_folder_name(n: &str) -> Result<(), Problem> {
    let ok = (1..=64).contains(&n.len())
        && n != "."
        && n != ".."
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if !ok {
        return Err(Problem::invalid(format!(
            "folder name {n:?} is invalid: use 1 to 64 letters, digits, '.', '-' or '_'"
        )));
    }
    if let Some(why) = bai_core::vpath::reserved_name(n) {
        return Err(Problem::invalid(format!(
            "folder name {n:?} is reserved: {why}; choose another name"
        )));
    }
    Ok(())
}

pub(super) use crate::api::typed_body;

pub(super) fn not_found(r: &str) -> Problem {
    Problem::not_found("vfolder", format!("no data folder {r:?} is visible to you"))
}

/// A folder the caller may see and use (not in the trash): see [`visible_folder`]. A folder
/// in the trash is refused with 409 `vfolder-in-trash` until it is restored.
pub(super) fn own_folder(m: &Manager, caller: &Caller, id: &str) -> ApiResult<VFolderRow> {
    let v = visible_folder(m, caller, id)?;
    if v.status == bai_store::CLONING {
        return Err(Problem::conflict(
            "vfolder-cloning",
            "The folder is being cloned.",
            format!(
                "data folder {:?} is still being filled by a clone; wait for its task to finish",
                v.name
            ),
        )
        .into());
    }
    if v.is_trashed() {
        return Err(Problem::conflict(
            "vfolder-in-trash",
            "The folder is in the trash.",
            format!(
                "data folder {:?} is in the trash: restore it first (or purge it for good)",
                v.name
            ),
        )
        .into());
    }
    Ok(v)
}

/// A folder the caller may see (id in hex or hyphenated), trashed or not, else 404: their own
/// user folders, their projects' folders, and (for superadmins) every project folder.
pub(super) fn visible_folder(m: &Manager, caller: &Caller, id: &str) -> ApiResult<VFolderRow> {
    let uuid = Uuid::parse_str(id).map_err(|_| not_found(id))?;
    match m.store.vfolder(uuid)? {
        Some(v)
            if (caller.is_admin && v.project.is_some())
                || m.store.can_see_vfolder(&caller.user_id, &v)? =>
        {
            Ok(v)
        }
        _ => Err(not_found(id).into()),
    }
}

/// A folder whose files the caller may change: their own user folder, or one they may see
/// with a permission other than `ro` (the permission it is shared with them with, or a
/// project folder's); administrators may change project folders' files.
pub(super) fn writable_folder(m: &Manager, caller: &Caller, id: &str) -> ApiResult<VFolderRow> {
    let v = own_folder(m, caller, id)?;
    // Its owner changes a user folder's files whatever its permission (which is what its
    // sessions mount it with); administrators change project folders'.
    let owner = v.project.is_none() && v.user_id == caller.user_id;
    if owner || (caller.is_admin && v.project.is_some()) {
        return Ok(v);
    }
    let access = m.store.folder_access(&caller.user_id, &v)?;
    if access.is_none_or(|p| p.is_read_only()) {
        let whose = if v.project.is_some() {
            "project folder"
        } else {
            "data folder"
        };
        return Err(
            Problem::forbidden(format!("{whose} {:?} is read-only for you", v.name)).into(),
        );
    }
    Ok(v)
}

/// A folder the caller may rename, delete or share: their own user folder, or
/// (administrators) a project folder; not in the trash.
pub(super) fn managed_folder(m: &Manager, caller: &Caller, id: &str) -> ApiResult<VFolderRow> {
    let v = own_folder(m, caller, id)?;
    may_manage(caller, v)
}

/// A folder in the trash the caller may restore or purge.
pub(super) fn trashed_folder(m: &Manager, caller: &Caller, id: &str) -> ApiResult<VFolderRow> {
    let v = may_manage(caller, visible_folder(m, caller, id)?)?;
    if !v.is_trashed() {
        return Err(Problem::conflict(
            "vfolder-not-in-trash",
            "The folder is not in the trash.",
            format!(
                "data folder {:?} is not in the trash: delete it first to move it there",
                v.name
            ),
        )
        .into());
    }
    Ok(v)
}

/// Project folders are managed by administrators, user folders by their owner alone (not by
/// the users they are shared with).
fn may_manage(caller: &Caller, v: VFolderRow) -> ApiResult<VFolderRow> {
    if v.project.is_some() && !caller.is_admin {
        return Err(Problem::forbidden(format!(
            "project folder {:?} is managed by administrators; members may use its files",
            v.name
        ))
        .into());
    }
    if v.project.is_none() && v.user_id != caller.user_id {
        return Err(Problem::forbidden(format!(
            "data folder {:?} is shared with you; only its owner may manage it",
            v.name
        ))
        .into());
    }
    Ok(v)
}

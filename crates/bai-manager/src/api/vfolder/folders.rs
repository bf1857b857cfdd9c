//! Folder CRUD: create, list, look up by name, show, rename and delete; and the storage
//! hosts folders may be created on.

use super::json::{folder_json_async, folder_view, hosts_json};
use super::{check_folder_name, managed_folder, not_found, own_folder, typed_body};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use bai_api::body::Fields;
use bai_api::folders::{CreateFolder, FolderId, Permission, RenameFolder, Size, UsageMode};
use bai_core::Problem;
use bai_store::VFolderRow;
use std::sync::Arc;
use uuid::Uuid;

/// `GET /folders/_/id` with `{"name"}` → `{"id"}`.
pub async fn id_of(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Query(q): Query<std::collections::HashMap<String, String>>,
    body: Bytes,
) -> ApiResult<Json<bai_api::folders::FolderRef>> {
    let b = Fields::read(&body)?;
    let name = b
        .text("name")
        .or_else(|| q.get("name").cloned())
        .ok_or_else(|| Problem::invalid("name is required"))?;
    let v = m
        .store
        .visible_vfolder_by_name(&caller.user_id, &name, caller.is_admin)?
        .ok_or_else(|| not_found(&name))?;
    Ok(Json(bai_api::folders::FolderRef {
        id: v.id.simple().to_string(),
        name: v.name,
    }))
}

/// A user's own folder under the user resource policy: at most `max_vfolder_count` of them
/// (0: no limit), each at most `max_quota_scope_size` bytes (-1: no limit; a folder asked
/// without a quota gets that one). Returns the folder's quota.
pub(super) fn within_user_policy(
    m: &Manager,
    caller: &Caller,
    quota: Option<u64>,
) -> Result<Option<u64>, Problem> {
    let p = m.store.user_policy_of(&caller.user_id)?;
    if p.max_vfolder_count > 0 {
        let owned = m
            .store
            .vfolders(Some(&caller.user_id))?
            .iter()
            .filter(|v| v.project.is_none())
            .count() as i64;
        if owned >= p.max_vfolder_count {
            return Err(Problem::invalid(format!(
                "you own {owned} data folders and the user resource policy {:?} allows {}; \
                 delete one first",
                p.name, p.max_vfolder_count
            )));
        }
    }
    if p.max_quota_scope_size < 0 {
        return Ok(quota);
    }
    let limit = p.max_quota_scope_size as u64;
    match quota {
        Some(q) if q > limit => Err(Problem::invalid(format!(
            "a quota of {} is more than the user resource policy {:?} allows a folder ({})",
            bai_core::resources::format_bytes(q),
            p.name,
            bai_core::resources::format_bytes(limit)
        ))),
        Some(q) => Ok(Some(q)),
        None if limit < 16 << 20 => Err(Problem::invalid(format!(
            "the user resource policy {:?} limits a folder to {}, below the 16 MiB a folder needs",
            p.name,
            bai_core::resources::format_bytes(limit)
        ))),
        None => Ok(Some(limit)),
    }
}

/// `POST /folders`.
pub async fn create(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<bai_api::folders::Folder>)> {
    let req: CreateFolder = typed_body(&body)?;
    let name = req.name.as_str();
    check_folder_name(name)?;
    let host = match req.host.as_deref() {
        None | Some("") => m.storage.default_host().to_string(),
        Some(h) if m.storage.host(h).is_some() => h.to_string(),
        Some(h) => {
            return Err(Problem::invalid(format!(
                "storage host {h:?} does not exist; configured hosts: {}",
                m.storage.names().join(", ")
            ))
            .into());
        }
    };
    let project = req.group.clone();
    if let Some(p) = &project {
        if !caller.is_admin {
            return Err(Problem::forbidden(format!(
                "only administrators create project folders; ask one to create it in project {p:?}"
            ))
            .into());
        }
        if !m.store.project_exists(p)? {
            return Err(Problem::invalid(format!("project {p:?} does not exist")).into());
        }
        if name.starts_with('.') {
            return Err(Problem::invalid(format!(
                "folder name {name:?} is for a user's automount folder; a project folder's name cannot start with '.'"
            ))
            .into());
        }
    }
    if req.unmanaged_path.is_some() {
        return Err(Problem::invalid("unmanaged folders are not supported").into());
    }
    let quota = match &req.quota {
        None => None,
        Some(size) => {
            let v = match size {
                Size::Bytes(n) => n.to_string(),
                Size::Text(t) => t.clone(),
            };
            let q = bai_core::resources::parse_mem("quota", &v)
                .map_err(|e| Problem::invalid(e.to_string()))?;
            if q < 16 << 20 {
                return Err(Problem::invalid("a folder quota must be at least 16 MiB").into());
            }
            Some(q)
        }
    };
    let quota = match &project {
        Some(_) => quota,
        None => within_user_policy(&m, &caller, quota)?,
    };
    let permission = match req.permission.unwrap_or_default() {
        p @ (Permission::ReadWrite | Permission::ReadOnly) => p,
        other => {
            return Err(Problem::invalid(format!(
                "permission {:?} cannot be asked for: use rw or ro",
                other.as_str()
            ))
            .into());
        }
    };
    let v = VFolderRow {
        id: Uuid::new_v4(),
        name: name.to_string(),
        host,
        user_id: caller.user_id.clone(),
        project: project.clone(),
        permission,
        usage_mode: match req.usage_mode.unwrap_or(UsageMode::General) {
            UsageMode::General => "general",
            UsageMode::Model => "model",
            UsageMode::Data => "data",
        }
        .to_string(),
        status: "ready".into(),
        quota_bytes: quota,
        created_at: bai_store::now_str(),
    };
    if !m.store.insert_vfolder(&v)? {
        let owner = match &project {
            Some(p) => format!("project {p:?} already has"),
            None => "you already have".into(),
        };
        return Err(Problem::conflict(
            "vfolder-exists",
            "The folder exists.",
            format!(
                "{owner} a data folder named {name:?}{}",
                in_trash(&m, &caller, name)
            ),
        )
        .into());
    }
    // A quota folder runs mkfs.ext4 and mount: not on a runtime worker.
    if let Err(e) = m.storage.create_async(&v).await {
        let _ = m.storage.remove_async(&v).await;
        let _ = m.store.delete_vfolder(v.id);
        return Err(e.into());
    }
    Ok((
        StatusCode::CREATED,
        Json(folder_json_async(&m, &v, &caller.user_id).await?),
    ))
}

/// `GET /folders`: the caller's folders.
pub async fn list(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
) -> ApiResult<Json<Vec<bai_api::folders::Folder>>> {
    let folders = m.store.visible_vfolders(&caller.user_id, caller.is_admin)?;
    // Usage walks every folder's tree: on a blocking thread, not the runtime's.
    let items = tokio::task::spawn_blocking(move || {
        folders
            .iter()
            .map(|v| folder_view(&m, v, &caller.user_id))
            .collect::<Vec<_>>()
    })
    .await
    .map_err(|e| Problem::internal(format!("listing folders failed: {e}")))?;
    Ok(Json(items))
}

/// `GET /folders/_/hosts`: `{"default", "allowed"}` (what the official client reads) and
/// `volume_info` per host: backend, capabilities, and the filesystem's total and used bytes.
pub async fn hosts(State(m): State<Arc<Manager>>) -> ApiResult<Json<bai_api::folders::Hosts>> {
    let storage = m.storage.clone();
    let out = tokio::task::spawn_blocking(move || hosts_json(&storage))
        .await
        .map_err(|e| Problem::internal(format!("cannot read the storage hosts: {e}")))?;
    Ok(Json(out))
}

pub async fn info(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<bai_api::folders::Folder>> {
    let v = own_folder(&m, &caller, &id)?;
    m.storage.folder_dir(&v)?;
    Ok(Json(folder_json_async(&m, &v, &caller.user_id).await?))
}

pub async fn rename(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let v = managed_folder(&m, &caller, &id)?;
    let RenameFolder { new_name: new } = Fields::read(&body)?.typed_with_texts(&["new_name"])?;
    check_folder_name(&new)?;
    if !m.store.rename_vfolder(v.id, &new)? {
        return Err(Problem::conflict(
            "vfolder-exists",
            "The folder exists.",
            format!("you already have a data folder named {new:?}"),
        )
        .into());
    }
    Ok(StatusCode::CREATED)
}

/// `DELETE /folders` with `{"id"}` (also `DELETE /folders/{id}`): moves the folder to its
/// owner's trash (`delete-pending`), whole; `POST /folders/restore-from-trash-bin` brings it
/// back, `POST /folders/purge` deletes it for good.
pub async fn delete(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let FolderId { id } = Fields::read(&body)?.typed_with_texts(&["id"])?;
    trash_folder(&m, &caller, &id)
}

pub async fn delete_by_path(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    trash_folder(&m, &caller, &id)
}

/// " (in the trash: …)" when the caller's folder of that name is in the trash.
pub(super) fn in_trash(m: &Manager, caller: &Caller, name: &str) -> &'static str {
    match m
        .store
        .visible_vfolder_by_name(&caller.user_id, name, caller.is_admin)
    {
        Ok(Some(v)) if v.is_trashed() => {
            " (in the trash: restore it, or purge it to reuse the name)"
        }
        _ => "",
    }
}

/// Refused while a session that has not ended mounts the folder.
pub(super) fn refuse_if_mounted(m: &Manager, v: &VFolderRow) -> ApiResult<()> {
    if m.store.sessions_mounting(v.id)? > 0 {
        return Err(Problem::conflict(
            "vfolder-in-use",
            "The folder is mounted.",
            format!(
                "data folder {:?} is mounted by a live session; remove the session first",
                v.name
            ),
        )
        .into());
    }
    Ok(())
}

fn trash_folder(m: &Manager, caller: &Caller, id: &str) -> ApiResult<StatusCode> {
    let v = managed_folder(m, caller, id)?;
    refuse_if_mounted(m, &v)?;
    m.store.set_vfolder_trashed(v.id, true)?;
    Ok(StatusCode::NO_CONTENT)
}

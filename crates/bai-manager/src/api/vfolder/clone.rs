//! `POST /folders/{id}/clone`: a new folder of the caller's holding a copy of a folder they may
//! read. The new folder exists at once with status `cloning` (not mounted or changed); a
//! background task copies the files and makes it `ready`, or removes it if the copy fails.

use super::folders::{in_trash, within_user_policy};
use super::json::folder_json_async;
use super::{check_folder_name, own_folder, typed_body};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use bai_api::folders::CloneFolder;
use bai_core::{FolderPermission, Problem};
use bai_store::{CLONING, VFolderRow};
use std::sync::Arc;
use uuid::Uuid;

pub async fn clone(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<bai_api::folders::Cloned>)> {
    let req: CloneFolder = typed_body(&body)?;
    let src = own_folder(&m, &caller, &id)?;
    check_folder_name(&req.target_name)?;
    let host = match req.target_host.as_deref().filter(|h| !h.is_empty()) {
        None => src.host.clone(),
        Some(h) if m.storage.host(h).is_some() => h.to_string(),
        Some(h) => {
            return Err(Problem::invalid(format!(
                "storage host {h:?} does not exist; configured hosts: {}",
                m.storage.names().join(", ")
            ))
            .into());
        }
    };
    let permission = match req.permission {
        None => FolderPermission::ReadWrite,
        Some(p @ (FolderPermission::ReadWrite | FolderPermission::ReadOnly)) => p,
        Some(p) => {
            return Err(Problem::invalid(format!(
                "permission {p} is not one a folder is created with: use rw or ro"
            ))
            .into());
        }
    };
    let quota = within_user_policy(&m, &caller, None)?;
    let dst = VFolderRow {
        id: Uuid::new_v4(),
        name: req.target_name.clone(),
        host,
        user_id: caller.user_id.clone(),
        project: None,
        permission,
        usage_mode: match req.usage_mode {
            Some(u) => serde_json::to_value(u)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_else(|| src.usage_mode.clone()),
            None => src.usage_mode.clone(),
        },
        status: CLONING.into(),
        quota_bytes: quota,
        created_at: bai_store::now_str(),
    };
    if !m.store.insert_vfolder(&dst)? {
        return Err(Problem::conflict(
            "vfolder-exists",
            "The folder exists.",
            format!(
                "you already have a data folder named {:?}{}",
                dst.name,
                in_trash(&m, &caller, &dst.name)
            ),
        )
        .into());
    }
    if let Err(e) = m.storage.create_async(&dst).await {
        let _ = m.storage.remove_async(&dst).await;
        let _ = m.store.delete_vfolder(dst.id);
        return Err(e.into());
    }
    let task = m.bgtasks.start(&caller.access_key);
    let reply = bai_api::folders::Cloned {
        folder: folder_json_async(&m, &dst, &caller.user_id).await?,
        bgtask_id: task.id.to_string(),
    };
    let (mc, srcc, dstc) = (m.clone(), src.clone(), dst.clone());
    tokio::spawn(async move {
        let t = task.clone();
        let copied = mc
            .storage
            .blocking(move |s| {
                s.copy_folder(&srcc, &dstc, &mut |done, total| {
                    t.update(done, total, "copying")
                })
            })
            .await;
        match copied {
            Ok(n) => match mc.store.set_vfolder_status(dst.id, CLONING, "ready") {
                Ok(_) => task.done(format!("{n} files copied into {}", dst.id.simple())),
                Err(e) => task.failed(format!("the clone could not be made ready: {e}")),
            },
            Err(e) => {
                tracing::warn!(vfolder = %dst.id, error = %e.msg, "a folder clone failed");
                let _ = mc.storage.remove_async(&dst).await;
                let _ = mc.store.delete_vfolder(dst.id);
                task.failed(format!("the copy failed: {}", e.msg));
            }
        }
    });
    Ok((StatusCode::CREATED, Json(reply)))
}

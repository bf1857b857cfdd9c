//! The trash of data folders. Deleting a folder moves it here whole (status
//! `delete-pending`): it keeps its name and files, is listed with that status, and cannot be
//! mounted or changed. From here it is restored (`POST /folders/restore-from-trash-bin`) or
//! purged for good (`POST /folders/purge`, also Backend.AI's older
//! `POST /folders/delete-from-trash-bin`); `DELETE /folders/{id}/force` purges a folder at
//! once, trash or not. Only who may delete a folder may restore or purge it.

use super::folders::refuse_if_mounted;
use super::{managed_folder, trashed_folder};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use bai_api::body::Fields;
use bai_api::folders::FolderId;
use bai_store::VFolderRow;
use std::sync::Arc;

/// `POST /folders/restore-from-trash-bin` with `{"id"}`.
pub async fn restore(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let FolderId { id } = Fields::read(&body)?.typed_with_texts(&["id"])?;
    let v = trashed_folder(&m, &caller, &id)?;
    m.store.set_vfolder_trashed(v.id, false)?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /folders/purge` (and `/folders/delete-from-trash-bin`) with `{"id"}`: a folder in
/// the trash, deleted with its files.
pub async fn purge(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let FolderId { id } = Fields::read(&body)?.typed_with_texts(&["id"])?;
    let v = trashed_folder(&m, &caller, &id)?;
    remove(&m, &v).await
}

/// `DELETE /folders/{id}/force`: deleted with its files now, without the trash.
pub async fn force_delete(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let v = match trashed_folder(&m, &caller, &id) {
        Ok(v) => v,
        Err(_) => managed_folder(&m, &caller, &id)?,
    };
    remove(&m, &v).await
}

async fn remove(m: &Manager, v: &VFolderRow) -> ApiResult<StatusCode> {
    refuse_if_mounted(m, v)?;
    m.storage.remove_async(v).await?;
    m.store.delete_vfolder(v.id)?;
    Ok(StatusCode::NO_CONTENT)
}

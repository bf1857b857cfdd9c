//! File operations inside a folder: list, mkdir, rename, move and delete. They touch the
//! filesystem (deletion walks trees), so each runs on a blocking thread.

use super::{own_folder, writable_folder};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use bai_api::body::Fields;
use bai_api::folders::{
    DeleteFiles, Done, Listing, Mkdir, MkdirRefused, MoveFile, Paths, RenameFile,
};
use bai_core::Problem;
use serde::Deserialize;
use std::sync::Arc;

#[derive(Debug, Deserialize)]
pub struct PathQuery {
    #[serde(default)]
    path: String,
}

pub async fn files(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    Query(q): Query<PathQuery>,
) -> ApiResult<Json<Listing>> {
    let v = own_folder(&m, &caller, &id)?;
    let listing = m.storage.blocking(move |s| s.list(&v, &q.path)).await?;
    Ok(Json(listing))
}

pub async fn mkdir(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let v = writable_folder(&m, &caller, &id)?;
    let b = Fields::read(&body)?;
    if !b.given("path") {
        return Err(Problem::invalid("path is required (a string or a list)").into());
    }
    let Mkdir {
        path,
        parents,
        exist_ok,
    } = b.typed()?;
    let paths = match path {
        Paths::One(p) => vec![p],
        Paths::Many(ps) => ps,
    };
    let (parents, exist_ok) = (parents.unwrap_or(false), exist_ok.unwrap_or(false));
    let out = m
        .storage
        .blocking(move |s| s.mkdir(&v, &paths, parents, exist_ok))
        .await?;
    if !out.results.failed.is_empty() && out.results.success.is_empty() {
        let refused = MkdirRefused::new(out.results);
        return Ok((StatusCode::BAD_REQUEST, Json(refused)).into_response());
    }
    Ok((StatusCode::CREATED, Json(out)).into_response())
}

pub async fn rename_file(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Done>> {
    let v = writable_folder(&m, &caller, &id)?;
    let RenameFile {
        target_path: target,
        new_name,
    } = Fields::read(&body)?.typed_with_texts(&["target_path", "new_name"])?;
    m.storage
        .blocking(move |s| s.rename_file(&v, &target, &new_name))
        .await?;
    Ok(Json(Done {}))
}

pub async fn move_file(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Done>> {
    let v = writable_folder(&m, &caller, &id)?;
    let MoveFile { src, dst } = Fields::read(&body)?.typed_with_texts(&["src", "dst"])?;
    m.storage
        .blocking(move |s| s.move_file(&v, &src, &dst))
        .await?;
    Ok(Json(Done {}))
}

pub async fn delete_files(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Done>> {
    let v = writable_folder(&m, &caller, &id)?;
    let b = Fields::read(&body)?;
    let required = || Problem::invalid("files is required: a list of paths");
    if !b.given("files") {
        return Err(required().into());
    }
    let DeleteFiles { files, recursive } = b.typed()?;
    if files.is_empty() {
        return Err(required().into());
    }
    let recursive = recursive.unwrap_or(false);
    m.storage
        .blocking(move |s| s.delete_files(&v, &files, recursive))
        .await?;
    Ok(Json(Done {}))
}

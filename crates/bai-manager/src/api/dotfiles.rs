//! `/user-config/dotfiles`: a user's dotfiles (Backend.AI's user-config API, which the
//! official client's `dotfile` commands call). Every rule of `bai_core::dotfile` (paths inside
//! the home, octal modes, 100 files and 64 KiB per user) is checked here, in the store's
//! transaction, so concurrent calls cannot pass the limits together.

use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::{Extension, Json};
use bai_api::sessions::{DotfileAnswer, DotfileBody, DotfileDeleted, DotfileItem, DotfileStored};
use bai_core::Problem;
use bai_core::dotfile::{self, Dotfile};
use std::collections::HashMap;
use std::sync::Arc;

fn item(d: &Dotfile) -> DotfileItem {
    DotfileItem {
        path: d.path.clone(),
        permission: d.permission(),
        data: d.data.clone(),
    }
}

/// The user whose dotfiles a call reads or changes: the caller's own, or (administrators
/// only) the user of the keypair `owner_access_key` names.
fn owner(m: &Manager, caller: &Caller, owner_access_key: Option<&str>) -> ApiResult<String> {
    match owner_access_key.filter(|ak| !ak.is_empty() && *ak != caller.access_key) {
        None => Ok(caller.user_id.clone()),
        Some(_) if !caller.is_admin => Err(Problem::forbidden(
            "only administrators can read or change another user's dotfiles (owner_access_key)",
        )
        .into()),
        Some(ak) => Ok(m
            .store
            .keypair(ak)?
            .map(|kp| kp.user_id)
            .ok_or_else(|| Problem::invalid(format!("no keypair with access key {ak:?}")))?),
    }
}

fn invalid(e: dotfile::DotfileError) -> Problem {
    Problem::invalid(e.0)
}

/// `GET /user-config/dotfiles[?path=P]`: all of the user's dotfiles, or the one at `path`.
pub async fn get(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Query(q): Query<HashMap<String, String>>,
) -> ApiResult<Json<DotfileAnswer>> {
    let user = owner(&m, &caller, q.get("owner_access_key").map(String::as_str))?;
    let all = m.store.dotfiles(&user)?;
    let Some(raw) = q.get("path") else {
        return Ok(Json(DotfileAnswer::All(all.iter().map(item).collect())));
    };
    let path = dotfile::parse_path(raw).map_err(invalid)?;
    let one = all
        .iter()
        .find(|d| d.path == path)
        .ok_or_else(|| Problem::not_found("dotfile", format!("no dotfile at {path:?}")))?;
    Ok(Json(DotfileAnswer::One(item(one))))
}

/// How a store call treats an existing dotfile at the path.
#[derive(Clone, Copy, PartialEq)]
enum Put {
    /// `POST`: it must not exist.
    Create,
    /// `PATCH`: it must exist.
    Replace,
}

async fn put(
    m: &Manager,
    caller: &Caller,
    body: &Bytes,
    how: Put,
) -> ApiResult<Json<DotfileStored>> {
    let req: DotfileBody = crate::api::typed_body(body)?;
    let user = owner(m, caller, req.owner_access_key.as_deref())?;
    let new = dotfile::parse(&req.path, req.permission.as_deref(), &req.data).map_err(invalid)?;
    let path = new.path.clone();
    m.store.edit_dotfiles(&user, |all| {
        let at = all.iter().position(|d| d.path == new.path);
        match (how, at) {
            (Put::Create, Some(_)) => {
                return Err(Problem::conflict(
                    "dotfile-already-exists",
                    "Dotfile already exists.",
                    format!(
                        "a dotfile at {:?} exists: replace it (PATCH, `bai dotfile update`)",
                        new.path
                    ),
                ));
            }
            (Put::Replace, None) => {
                return Err(Problem::not_found(
                    "dotfile",
                    format!("no dotfile at {:?}", new.path),
                ));
            }
            (_, Some(i)) => all[i] = new,
            (_, None) => {
                all.push(new);
                all.sort_by(|a, b| a.path.cmp(&b.path));
            }
        }
        dotfile::check_set(all).map_err(invalid)
    })??;
    tracing::info!(user = %user, path = %path, "dotfile stored");
    Ok(Json(DotfileStored {}))
}

/// `POST /user-config/dotfiles`: stores a new dotfile.
pub async fn create(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> ApiResult<Json<DotfileStored>> {
    put(&m, &caller, &body, Put::Create).await
}

/// `PATCH /user-config/dotfiles`: replaces a stored dotfile's text and permission.
pub async fn update(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> ApiResult<Json<DotfileStored>> {
    put(&m, &caller, &body, Put::Replace).await
}

/// `DELETE /user-config/dotfiles?path=P`: deletes a dotfile.
pub async fn delete(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Query(q): Query<HashMap<String, String>>,
    body: Bytes,
) -> ApiResult<Json<DotfileDeleted>> {
    // The path and owner may come in the query (the official client) or a JSON body.
    let b = bai_api::body::Fields::read(&body)?;
    let field = |k: &str| q.get(k).cloned().or_else(|| b.text(k));
    let user = owner(&m, &caller, field("owner_access_key").as_deref())?;
    let raw = field("path").ok_or_else(|| Problem::invalid("give the dotfile's path (path=…)"))?;
    let path = dotfile::parse_path(&raw).map_err(invalid)?;
    m.store.edit_dotfiles(&user, |all| {
        let before = all.len();
        all.retain(|d| d.path != path);
        if all.len() == before {
            return Err(Problem::not_found(
                "dotfile",
                format!("no dotfile at {path:?}"),
            ));
        }
        Ok(())
    })??;
    tracing::info!(user = %user, path = %path, "dotfile deleted");
    Ok(Json(DotfileDeleted { success: true }))
}

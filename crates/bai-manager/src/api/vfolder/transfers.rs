//! Transfers: `request-upload` and `request-download` hand out unsigned URLs with a token;
//! the upload and download routes find the transfer by its token.

use super::{own_folder, writable_folder};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, header};
use axum::{Extension, Json};
use bai_api::body::Fields;
use bai_api::folders::{RequestDownload, Ticket};
use bai_core::Problem;
use bai_ground::storage::{Transfer, own, own_tree};
use serde::Deserialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn token() -> String {
    hex::encode(rand::random::<[u8; 24]>())
}

/// The API's own address as the caller reached it (https when it is served over TLS).
fn base_url(m: &Manager, headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1:8090");
    format!("{}://{host}", m.config.api_scheme())
}

fn remember(m: &Manager, t: Transfer) -> String {
    let tok = token();
    let mut map = m.transfers.lock().unwrap_or_else(|p| p.into_inner());
    let now = Instant::now();
    map.retain(|_, t| t.expires > now);
    map.insert(tok.clone(), t);
    tok
}

/// `POST /folders/{id}/request-upload` `{"path", "size"}` → `{"token", "url"}`; the file is
/// created (empty) now, so zero-byte uploads need no PATCH.
pub async fn request_upload(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Json<Ticket>> {
    let v = writable_folder(&m, &caller, &id)?;
    let b = Fields::read(&body)?;
    let rel = b.required_text("path")?;
    let size = b.unsigned("size").unwrap_or(0);
    let base = m.storage.folder_dir(&v)?;
    if let Some(q) = v.quota_bytes {
        let (_, used) = m.storage.usage_async(&v).await?;
        if used + size > q {
            return Err(Problem::new(
                413,
                "vfolder-quota-exceeded",
                "Folder quota exceeded.",
                format!(
                    "{rel} ({}) does not fit: folder {:?} uses {} of its {} quota",
                    bai_core::resources::format_bytes(size),
                    v.name,
                    bai_core::resources::format_bytes(used),
                    bai_core::resources::format_bytes(q)
                ),
            )
            .into());
        }
    }
    let path = m.storage.resolve(&v, &rel)?;
    if path == base || path.is_dir() {
        return Err(Problem::invalid(format!("{rel} is a directory: give a file path")).into());
    }
    if let Some(parent) = path.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|e| Problem::internal(format!("cannot create {}: {e}", parent.display())))?;
        own_tree(&base, parent);
    }
    tokio::fs::File::create(&path)
        .await
        .map_err(|e| Problem::internal(format!("cannot create {rel}: {e}")))?;
    own(&path);
    let tok = remember(
        &m,
        Transfer {
            vfolder: v.id,
            path,
            size,
            upload: true,
            expires: Instant::now() + Duration::from_secs(24 * 3600),
        },
    );
    Ok(Json(Ticket {
        token: tok,
        url: format!("{}/storage/upload", base_url(&m, &headers)),
    }))
}

#[derive(Debug, Deserialize)]
pub struct TokenQuery {
    pub(super) token: String,
}

pub(super) fn transfer(m: &Manager, token: &str, upload: bool) -> Result<Transfer, Problem> {
    let map = m.transfers.lock().unwrap_or_else(|p| p.into_inner());
    match map.get(token) {
        Some(t) if t.upload == upload && t.expires > Instant::now() => Ok(t.clone()),
        _ => Err(Problem::new(
            403,
            "invalid-token",
            "Invalid token.",
            "the transfer token is unknown or expired; request a new upload or download",
        )),
    }
}

/// `POST /folders/{id}/request-download` `{"path"}` → `{"token", "url"}`.
pub async fn request_download(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Json<Ticket>> {
    let v = own_folder(&m, &caller, &id)?;
    let RequestDownload { path: rel } = Fields::read(&body)?.typed_with_texts(&["path"])?;
    let path = m.storage.resolve(&v, &rel)?;
    let md = tokio::fs::metadata(&path)
        .await
        .map_err(|_| Problem::not_found("file", format!("{rel}: no such file")))?;
    if !md.is_file() {
        return Err(Problem::invalid(format!("{rel} is not a file")).into());
    }
    let tok = remember(
        &m,
        Transfer {
            vfolder: v.id,
            path,
            size: md.len(),
            upload: false,
            expires: Instant::now() + Duration::from_secs(3600),
        },
    );
    Ok(Json(Ticket {
        token: tok,
        url: format!("{}/storage/download", base_url(&m, &headers)),
    }))
}

/// An upload has `end` bytes: once that is all of it, its token is spent.
pub(super) fn upload_reached(m: &Manager, token: &str, t: &Transfer, end: u64) {
    if end >= t.size {
        m.transfers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(token);
    }
}

/// The problem a failed upload write stands for.
pub(super) fn write_problem(e: &std::io::Error) -> Problem {
    if e.raw_os_error() == Some(28) {
        Problem::new(
            507,
            "vfolder-quota-exceeded",
            "Folder quota exceeded.",
            "no space left for the upload: the folder's quota is reached or its disk is full",
        )
    } else {
        Problem::internal(format!("cannot write the upload: {e}"))
    }
}

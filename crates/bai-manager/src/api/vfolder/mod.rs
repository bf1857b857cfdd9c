//! Data folders (wire contract §5.9, §6.4): folder CRUD, name → id lookup, file operations,
//! and uploads (TUS subset) / downloads through unsigned, token-bearing URLs.
//! A user sees and touches only their own folders; anything else is 404.

use super::json_body;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use crate::storage::{Host, Storage, Transfer, own, own_tree};
use axum::Extension;
use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bai_core::Problem;
use bai_store::VFolderRow;
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};
use std::io::{Read, Seek, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

fn field<'a>(v: &'a Value, k: &str) -> Result<&'a str, Problem> {
    v.get(k)
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::invalid(format!("{k} is required")))
}

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

fn not_found(r: &str) -> Problem {
    Problem::not_found("vfolder", format!("no data folder {r:?} is visible to you"))
}

/// A folder the caller may see (id in hex or hyphenated), else 404: their own user folders,
/// their projects' folders, and (for superadmins) every project folder.
fn own_folder(m: &Manager, caller: &Caller, id: &str) -> ApiResult<VFolderRow> {
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

/// A folder whose files the caller may change: a project folder with `ro` permission is
/// read-only for its members (its administrators may still change it).
fn writable_folder(m: &Manager, caller: &Caller, id: &str) -> ApiResult<VFolderRow> {
    let v = own_folder(m, caller, id)?;
    if v.project.is_some() && v.permission == "ro" && !caller.is_admin {
        return Err(Problem::forbidden(format!(
            "project folder {:?} is read-only for project members",
            v.name
        ))
        .into());
    }
    Ok(v)
}

/// A folder the caller may rename or delete: their own user folder, or (superadmins) a
/// project folder.
fn managed_folder(m: &Manager, caller: &Caller, id: &str) -> ApiResult<VFolderRow> {
    let v = own_folder(m, caller, id)?;
    if v.project.is_some() && !caller.is_admin {
        return Err(Problem::forbidden(format!(
            "project folder {:?} is managed by administrators; members may use its files",
            v.name
        ))
        .into());
    }
    Ok(v)
}

/// A folder's JSON. A folder whose storage host is not configured lists with status
/// `unavailable` and no usage.
pub fn folder_json(m: &Manager, v: &VFolderRow, caller_id: &str) -> Value {
    let (status, (files, bytes)) = match m.storage.usage(v) {
        Ok(u) => (v.status.as_str(), u),
        Err(_) => ("unavailable", (0, 0)),
    };
    let (ownership, is_owner) = match &v.project {
        Some(_) => ("group", false),
        None => ("user", v.user_id == caller_id),
    };
    json!({
        "id": v.id.simple().to_string(),
        "name": v.name,
        "host": v.host,
        "usage_mode": v.usage_mode,
        "permission": v.permission,
        "status": status,
        "created_at": v.created_at,
        "is_owner": is_owner,
        "ownership_type": ownership,
        "type": ownership,
        "user": if v.project.is_some() { Value::Null } else { json!(v.user_id) },
        "creator": v.user_id,
        "group": v.project,
        "group_name": v.project,
        "cloneable": false,
        "max_size": v.quota_bytes.map(|q| q / (1 << 20)).unwrap_or(0),
        "quota": v.quota_bytes,
        "numFiles": files,
        "used_bytes": bytes,
    })
}

/// `GET /folders/_/id` with `{"name"}` → `{"id"}`.
pub async fn id_of(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Query(q): Query<std::collections::HashMap<String, String>>,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    let b = json_body(&body)?;
    let name = b
        .get("name")
        .and_then(Value::as_str)
        .or(q.get("name").map(String::as_str))
        .ok_or_else(|| Problem::invalid("name is required"))?;
    let v = m
        .store
        .visible_vfolder_by_name(&caller.user_id, name, caller.is_admin)?
        .ok_or_else(|| not_found(name))?;
    Ok(Json(
        json!({"id": v.id.simple().to_string(), "name": v.name}),
    ))
}

/// `POST /folders`.
pub async fn create(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let b = json_body(&body)?;
    let name = field(&b, "name")?;
    check_folder_name(name)?;
    let host = match b.get("host") {
        None | Some(Value::Null) => m.storage.default_host().to_string(),
        Some(Value::String(h)) if h.is_empty() => m.storage.default_host().to_string(),
        Some(Value::String(h)) if m.storage.host(h).is_some() => h.clone(),
        Some(Value::String(h)) => {
            return Err(Problem::invalid(format!(
                "storage host {h:?} does not exist; configured hosts: {}",
                m.storage.names().join(", ")
            ))
            .into());
        }
        Some(_) => return Err(Problem::invalid("host must be a storage host name").into()),
    };
    let project = match b.get("group") {
        None | Some(Value::Null) => None,
        Some(Value::String(p)) => Some(p.clone()),
        Some(_) => return Err(Problem::invalid("group must be a project name").into()),
    };
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
    if b.get("unmanaged_path").is_some_and(|g| !g.is_null()) {
        return Err(Problem::invalid("unmanaged folders are not supported").into());
    }
    let quota = match b.get("quota").or(b.get("max_size")) {
        None | Some(Value::Null) => None,
        Some(v) => {
            let q = bai_core::resources::parse_mem("quota", v)
                .map_err(|e| Problem::invalid(e.to_string()))?;
            if q < 16 << 20 {
                return Err(Problem::invalid("a folder quota must be at least 16 MiB").into());
            }
            Some(q)
        }
    };
    let permission = b.get("permission").and_then(Value::as_str).unwrap_or("rw");
    if !matches!(permission, "rw" | "ro") {
        return Err(Problem::invalid(format!(
            "permission {permission:?} is unknown: use rw or ro"
        ))
        .into());
    }
    let v = VFolderRow {
        id: Uuid::new_v4(),
        name: name.to_string(),
        host,
        user_id: caller.user_id.clone(),
        project: project.clone(),
        permission: permission.to_string(),
        usage_mode: b
            .get("usage_mode")
            .and_then(Value::as_str)
            .unwrap_or("general")
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
            format!("{owner} a data folder named {name:?}"),
        )
        .into());
    }
    if let Err(e) = m.storage.create(&v) {
        let _ = m.storage.remove(&v);
        let _ = m.store.delete_vfolder(v.id);
        return Err(e.into());
    }
    Ok((
        StatusCode::CREATED,
        Json(folder_json(&m, &v, &caller.user_id)),
    ))
}

/// `GET /folders`: the caller's folders.
pub async fn list(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
) -> ApiResult<Json<Value>> {
    let folders = m.store.visible_vfolders(&caller.user_id, caller.is_admin)?;
    // Usage walks every folder's tree: on a blocking thread, not the runtime's.
    let items = tokio::task::spawn_blocking(move || {
        folders
            .iter()
            .map(|v| folder_json(&m, v, &caller.user_id))
            .collect::<Vec<Value>>()
    })
    .await
    .map_err(|e| Problem::internal(format!("listing folders failed: {e}")))?;
    Ok(Json(Value::Array(items)))
}

/// `GET /folders/_/hosts`: `{"default", "allowed"}` (what the official client reads) and
/// `volume_info` per host: backend, capabilities, and the filesystem's total and used bytes.
pub async fn hosts(State(m): State<Arc<Manager>>) -> ApiResult<Json<Value>> {
    let storage = m.storage.clone();
    let out = tokio::task::spawn_blocking(move || hosts_json(&storage))
        .await
        .map_err(|e| Problem::internal(format!("cannot read the storage hosts: {e}")))?;
    Ok(Json(out))
}

fn hosts_json(storage: &Storage) -> Value {
    let info: serde_json::Map<String, Value> = storage
        .hosts()
        .iter()
        .map(|h: &Host| {
            let (total, used) = Storage::host_usage(&h.root).unwrap_or((0, 0));
            (
                h.name.clone(),
                json!({
                    "backend": h.backend(),
                    "capabilities": ["vfolder"],
                    "usage": {"total_bytes": total, "used_bytes": used},
                }),
            )
        })
        .collect();
    json!({
        "default": storage.default_host(),
        "allowed": storage.names(),
        "volume_info": info,
    })
}

pub async fn info(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let v = own_folder(&m, &caller, &id)?;
    m.storage.folder_dir(&v)?;
    Ok(Json(folder_json(&m, &v, &caller.user_id)))
}

pub async fn rename(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let v = managed_folder(&m, &caller, &id)?;
    let b = json_body(&body)?;
    let new = field(&b, "new_name")?;
    check_folder_name(new)?;
    if !m.store.rename_vfolder(v.id, new)? {
        return Err(Problem::conflict(
            "vfolder-exists",
            "The folder exists.",
            format!("you already have a data folder named {new:?}"),
        )
        .into());
    }
    Ok(StatusCode::CREATED)
}

/// `DELETE /folders` with `{"id"}` (also `DELETE /folders/{id}`).
pub async fn delete(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let b = json_body(&body)?;
    let id = field(&b, "id")?.to_string();
    delete_folder(&m, &caller, &id)
}

pub async fn delete_by_path(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    delete_folder(&m, &caller, &id)
}

fn delete_folder(m: &Manager, caller: &Caller, id: &str) -> ApiResult<StatusCode> {
    let v = managed_folder(m, caller, id)?;
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
    m.storage.remove(&v)?;
    m.store.delete_vfolder(v.id)?;
    Ok(StatusCode::NO_CONTENT)
}

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
) -> ApiResult<Json<Value>> {
    let v = own_folder(&m, &caller, &id)?;
    Ok(Json(m.storage.list(&v, &q.path)?))
}

pub async fn mkdir(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let v = writable_folder(&m, &caller, &id)?;
    let b = json_body(&body)?;
    let paths: Vec<String> = match b.get("path") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => return Err(Problem::invalid("path is required (a string or a list)").into()),
    };
    let parents = b.get("parents").and_then(Value::as_bool).unwrap_or(false);
    let exist_ok = b.get("exist_ok").and_then(Value::as_bool).unwrap_or(false);
    let out = m.storage.mkdir(&v, &paths, parents, exist_ok)?;
    let failed = out["results"]["failed"]
        .as_array()
        .is_some_and(|f| !f.is_empty());
    let status = if failed
        && out["results"]["success"]
            .as_array()
            .is_some_and(|s| s.is_empty())
    {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::CREATED
    };
    Ok((status, Json(out)))
}

pub async fn rename_file(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    let v = writable_folder(&m, &caller, &id)?;
    let b = json_body(&body)?;
    m.storage
        .rename_file(&v, field(&b, "target_path")?, field(&b, "new_name")?)?;
    Ok(Json(json!({})))
}

pub async fn move_file(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    let v = writable_folder(&m, &caller, &id)?;
    let b = json_body(&body)?;
    m.storage
        .move_file(&v, field(&b, "src")?, field(&b, "dst")?)?;
    Ok(Json(json!({})))
}

pub async fn delete_files(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    let v = writable_folder(&m, &caller, &id)?;
    let b = json_body(&body)?;
    let files: Vec<String> = b
        .get("files")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if files.is_empty() {
        return Err(Problem::invalid("files is required: a list of paths").into());
    }
    let recursive = b.get("recursive").and_then(Value::as_bool).unwrap_or(false);
    m.storage.delete_files(&v, &files, recursive)?;
    Ok(Json(json!({})))
}

fn token() -> String {
    hex::encode(rand::random::<[u8; 24]>())
}

fn base_url(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1:8090");
    format!("http://{host}")
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
) -> ApiResult<Json<Value>> {
    let v = writable_folder(&m, &caller, &id)?;
    let b = json_body(&body)?;
    let rel = field(&b, "path")?;
    let size = b.get("size").and_then(Value::as_u64).unwrap_or(0);
    let base = m.storage.folder_dir(&v)?;
    if let Some(q) = v.quota_bytes {
        let (_, used) = m.storage.usage(&v)?;
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
    let path = m.storage.resolve(&v, rel)?;
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
    Ok(Json(
        json!({"token": tok, "url": format!("{}/storage/upload", base_url(&headers))}),
    ))
}

#[derive(Debug, Deserialize)]
pub struct TokenQuery {
    token: String,
}

fn transfer(m: &Manager, token: &str, upload: bool) -> Result<Transfer, Problem> {
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

/// TUS `PATCH /storage/upload?token=…` (unsigned): appends the body at `Upload-Offset`.
/// bai's own client may ask for `Upgrade: bai-file` with the length in `x-bai-length` and no
/// body: after `101` it sends that many bytes on the bare connection, which are spliced into
/// the file, and reads the usual answer (204 with `Upload-Offset`, or a problem) back.
pub async fn tus_patch(
    State(m): State<Arc<Manager>>,
    Query(q): Query<TokenQuery>,
    mut req: axum::extract::Request,
) -> ApiResult<Response> {
    let headers = req.headers().clone();
    let t = transfer(&m, &q.token, true)?;
    let offset: u64 = headers
        .get("upload-offset")
        .and_then(|h| h.to_str().ok())
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| Problem::invalid("Upload-Offset header is required"))?;
    let len = tokio::fs::metadata(&t.path)
        .await
        .map_err(|e| Problem::internal(format!("cannot open the upload: {e}")))?
        .len();
    if offset != len {
        return Err(Problem::conflict(
            "offset-mismatch",
            "Upload offset mismatch.",
            format!("Upload-Offset {offset} does not match the {len} bytes received so far"),
        )
        .into());
    }
    if super::raw::wants(&headers, bai_core::RAW_FILE_UPGRADE) {
        let n: u64 = headers
            .get(bai_core::RAW_LENGTH_HEADER)
            .and_then(|h| h.to_str().ok())
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| {
                Problem::invalid(format!(
                    "{} header is required with Upgrade: {}",
                    bai_core::RAW_LENGTH_HEADER,
                    bai_core::RAW_FILE_UPGRADE
                ))
            })?;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&t.path)
            .map_err(|e| Problem::internal(format!("cannot open the upload: {e}")))?;
        let on = hyper::upgrade::on(&mut req);
        tokio::spawn(receive_raw(m.clone(), q.token, t, on, file, offset, n));
        return Ok(super::raw::switching(bai_core::RAW_FILE_UPGRADE, &[])?);
    }
    let body = req.into_body();
    // The body is written by one blocking thread fed through a short queue: receiving and
    // writing overlap, and each chunk is one plain write(2) with no extra copy.
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(64);
    let path = t.path.clone();
    let writer = tokio::task::spawn_blocking(move || append_from(&path, offset, rx));
    let mut stream = body.into_data_stream();
    let mut interrupted = None;
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(c) => {
                if tx.send(c).await.is_err() {
                    break; // the writer failed; its error is reported below
                }
            }
            Err(e) => {
                interrupted = Some(e);
                break;
            }
        }
    }
    drop(tx);
    let written = writer
        .await
        .map_err(|e| Problem::internal(format!("upload writer failed: {e}")))?
        .map_err(|e| write_problem(&e))?;
    if let Some(e) = interrupted {
        return Err(Problem::invalid(format!(
            "upload interrupted after {written} bytes: {e}; resume at that offset"
        ))
        .into());
    }
    tracing::info!(bytes = written - offset, mode = "http", "upload received");
    upload_reached(&m, &q.token, &t, written);
    Ok((
        StatusCode::NO_CONTENT,
        [
            ("Upload-Offset", written.to_string()),
            ("Tus-Resumable", "1.0.0".to_string()),
        ],
    )
        .into_response())
}

/// An upload has `end` bytes: once that is all of it, its token is spent.
fn upload_reached(m: &Manager, token: &str, t: &Transfer, end: u64) {
    if end >= t.size {
        m.transfers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(token);
    }
}

/// The problem a failed upload write stands for.
fn write_problem(e: &std::io::Error) -> Problem {
    if e.raw_os_error() == Some(28) {
        Problem::new(
            507,
            "vfolder-quota-exceeded",
            "Folder quota exceeded.",
            "the data folder is full (its quota is reached)",
        )
    } else {
        Problem::internal(format!("cannot write the upload: {e}"))
    }
}

/// How long a raw transfer waits for its peer before giving up.
const RAW_IDLE: Duration = Duration::from_secs(120);

/// The blocking socket of a switched connection, for a transfer thread.
fn blocking_socket(stream: tokio::net::TcpStream) -> std::io::Result<std::net::TcpStream> {
    bai_relay::file::into_blocking(stream, RAW_IDLE)
}

/// The answer to a raw upload, written on the connection after its bytes (an HTTP response
/// head, with the problem as its body on failure).
fn raw_answer(result: Result<u64, Problem>) -> Vec<u8> {
    match result {
        Ok(offset) => format!(
            "HTTP/1.1 204 No Content\r\nUpload-Offset: {offset}\r\nTus-Resumable: 1.0.0\r\n\r\n"
        )
        .into_bytes(),
        Err(p) => {
            let body = serde_json::to_vec(&p).unwrap_or_default();
            let mut out = format!(
                "HTTP/1.1 {} Error\r\nContent-Type: application/problem+json\r\nContent-Length: {}\r\n\r\n",
                p.status,
                body.len()
            )
            .into_bytes();
            out.extend_from_slice(&body);
            out
        }
    }
}

/// Receives `len` bytes of a raw upload into `file` at `offset` (splice(2) from the socket
/// into the file on a blocking thread), then answers on the same connection.
async fn receive_raw(
    m: Arc<Manager>,
    token: String,
    t: Transfer,
    on: hyper::upgrade::OnUpgrade,
    file: std::fs::File,
    offset: u64,
    len: u64,
) {
    use super::raw::Switched;
    let switched = match super::raw::switched(on).await {
        Ok(s) => s,
        Err(e) => {
            tracing::info!(error = %e, "raw upload: the connection did not switch protocols");
            return;
        }
    };
    let done = |got: u64| -> Result<u64, Problem> {
        let end = offset + got;
        if got < len {
            return Err(Problem::invalid(format!(
                "upload interrupted after {end} bytes; resume at that offset"
            )));
        }
        upload_reached(&m, &token, &t, end);
        Ok(end)
    };
    match switched {
        Switched::Tcp { stream, early } => {
            let sock = match blocking_socket(stream) {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "raw upload: cannot use the connection");
                    return;
                }
            };
            let received = tokio::task::spawn_blocking(move || {
                let got =
                    bai_relay::file::recv_file_after(&sock, &file, offset, &early, len, |_| {});
                (sock, got)
            })
            .await;
            let (mut sock, got) = match received {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!(error = %e, "raw upload thread failed");
                    return;
                }
            };
            if let Ok(n) = &got {
                tracing::info!(bytes = n, mode = "raw", "upload received");
            }
            let answer = raw_answer(got.map_err(|e| write_problem(&e)).and_then(done));
            let _ = tokio::task::spawn_blocking(move || sock.write_all(&answer)).await;
        }
        Switched::Other(mut conn) => {
            use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
            let mut f = tokio::fs::File::from_std(file);
            let got = async {
                f.seek(std::io::SeekFrom::Start(offset)).await?;
                let n = tokio::io::copy(&mut (&mut conn).take(len), &mut f).await?;
                f.flush().await?;
                Ok::<u64, std::io::Error>(n)
            }
            .await;
            let answer = raw_answer(got.map_err(|e| write_problem(&e)).and_then(done));
            let _ = conn.write_all(&answer).await;
            let _ = conn.shutdown().await;
        }
    }
}

/// Sends `len` bytes of `file` on a switched connection (sendfile(2) on a blocking thread).
async fn send_raw(on: hyper::upgrade::OnUpgrade, file: std::fs::File, len: u64) {
    use super::raw::Switched;
    let result = match super::raw::switched(on).await {
        Ok(Switched::Tcp { stream, .. }) => match blocking_socket(stream) {
            Ok(sock) => tokio::task::spawn_blocking(move || {
                bai_relay::file::send_file(&sock, &file, 0, len, |_| {})
            })
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string()))),
            Err(e) => Err(e),
        },
        Ok(Switched::Other(mut conn)) => {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut f = tokio::fs::File::from_std(file).take(len);
            let r = tokio::io::copy(&mut f, &mut conn).await;
            let _ = conn.shutdown().await;
            r
        }
        Err(e) => Err(std::io::Error::other(e.to_string())),
    };
    if let Err(e) = result {
        tracing::info!(error = %e, "raw download ended early");
    }
}

/// TUS `HEAD`: how much has arrived.
pub async fn tus_head(
    State(m): State<Arc<Manager>>,
    Query(q): Query<TokenQuery>,
) -> ApiResult<Response> {
    let t = transfer(&m, &q.token, true)?;
    let len = tokio::fs::metadata(&t.path)
        .await
        .map(|md| md.len())
        .unwrap_or(0);
    Ok((
        StatusCode::OK,
        [
            ("Upload-Offset", len.to_string()),
            ("Upload-Length", t.size.to_string()),
            ("Tus-Resumable", "1.0.0".to_string()),
        ],
    )
        .into_response())
}

/// `POST /folders/{id}/request-download` `{"path"}` → `{"token", "url"}`.
pub async fn request_download(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    let v = own_folder(&m, &caller, &id)?;
    let b = json_body(&body)?;
    let rel = field(&b, "path")?;
    let path = m.storage.resolve(&v, rel)?;
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
    Ok(Json(
        json!({"token": tok, "url": format!("{}/storage/download", base_url(&headers))}),
    ))
}

/// `GET /storage/download?token=…` (unsigned): the file, streamed, with Content-Length.
/// bai's own client may ask for `Upgrade: bai-file`: after `101` (with the length in
/// `x-bai-length`) the file follows on the bare connection, sent with sendfile(2).
pub async fn download(
    State(m): State<Arc<Manager>>,
    Query(q): Query<TokenQuery>,
    mut req: axum::extract::Request,
) -> ApiResult<Response> {
    let t = transfer(&m, &q.token, false)?;
    let f =
        std::fs::File::open(&t.path).map_err(|_| Problem::not_found("file", "the file is gone"))?;
    let md = f.metadata().map_err(|e| Problem::internal(e.to_string()))?;
    let len = md.len();
    if super::raw::wants(req.headers(), bai_core::RAW_FILE_UPGRADE) {
        let on = hyper::upgrade::on(&mut req);
        tracing::info!(bytes = len, mode = "raw", "download started");
        tokio::spawn(send_raw(on, f, len));
        return Ok(super::raw::switching(
            bai_core::RAW_FILE_UPGRADE,
            &[(bai_core::RAW_LENGTH_HEADER, len.to_string())],
        )?);
    }
    tracing::info!(bytes = len, mode = "http", "download started");
    // One blocking thread reads ahead in large chunks while the socket drains the previous ones.
    let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<Bytes>>(4);
    tokio::task::spawn_blocking(move || read_into(f, tx));
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    let name = t
        .path
        .file_name()
        .map(|n| n.to_string_lossy().replace('"', ""))
        .unwrap_or_default();
    let mut resp = Response::new(Body::from_stream(stream));
    let h = resp.headers_mut();
    h.insert(header::CONTENT_LENGTH, len.into());
    h.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/octet-stream"),
    );
    if let Ok(v) = header::HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    if let Ok(modified) = md.modified() {
        let t: chrono::DateTime<chrono::Utc> = modified.into();
        if let Ok(v) =
            header::HeaderValue::from_str(&t.format("%a, %d %b %Y %H:%M:%S GMT").to_string())
        {
            h.insert(header::LAST_MODIFIED, v);
        }
    }
    let _ = t.vfolder;
    Ok(resp)
}

/// Appends what arrives on `rx` to `path` at `offset`; returns the new length.
fn append_from(
    path: &std::path::Path,
    offset: u64,
    mut rx: tokio::sync::mpsc::Receiver<Bytes>,
) -> std::io::Result<u64> {
    let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
    f.seek(std::io::SeekFrom::Start(offset))?;
    let mut written = offset;
    while let Some(chunk) = rx.blocking_recv() {
        f.write_all(&chunk)?;
        written += chunk.len() as u64;
    }
    Ok(written)
}

/// Reads `f` in 1 MiB chunks into `tx` until the end, an error, or the receiver going away.
fn read_into(f: std::fs::File, tx: tokio::sync::mpsc::Sender<std::io::Result<Bytes>>) {
    const CHUNK: u64 = 1 << 20;
    let mut f = f;
    loop {
        let mut buf = Vec::with_capacity(CHUNK as usize);
        match (&mut f).take(CHUNK).read_to_end(&mut buf) {
            Ok(0) => return,
            Ok(_) => {
                if tx.blocking_send(Ok(Bytes::from(buf))).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = tx.blocking_send(Err(e));
                return;
            }
        }
    }
}

//! Uploads (TUS subset, unsigned): `PATCH /storage/upload` appends the body (read as a
//! stream, written by a blocking thread) and `HEAD` says how much has arrived.

use super::raw_io::receive_raw;
use super::transfers::{TokenQuery, transfer, upload_reached, write_problem};
use crate::error::ApiResult;
use crate::state::Manager;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bai_core::Problem;
use futures::StreamExt;
use std::io::{Seek, Write};
use std::sync::Arc;

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
    if crate::api::raw::wants(&headers, bai_core::RAW_FILE_UPGRADE) {
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
        return crate::api::raw::switching(bai_core::RAW_FILE_UPGRADE, &[]);
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

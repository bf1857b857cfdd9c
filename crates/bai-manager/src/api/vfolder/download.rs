//! Downloads (unsigned): `GET /storage/download` streams the file, read ahead by a blocking
//! thread, or sends it on a raw connection.

use super::raw_io::send_raw;
use super::transfers::{TokenQuery, transfer};
use crate::error::ApiResult;
use crate::state::Manager;
use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::Response;
use bai_core::Problem;
use std::io::Read;
use std::sync::Arc;

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
    let md = f.metadata()?;
    let len = md.len();
    if crate::api::raw::wants(req.headers(), bai_core::RAW_FILE_UPGRADE) {
        let on = hyper::upgrade::on(&mut req);
        tracing::info!(bytes = len, mode = "raw", "download started");
        tokio::spawn(send_raw(on, f, len));
        return crate::api::raw::switching(
            bai_core::RAW_FILE_UPGRADE,
            &[(bai_core::RAW_LENGTH_HEADER, len.to_string())],
        );
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

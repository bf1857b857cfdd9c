//! Uploads: one TUS `PATCH` per file, raw with sendfile(2) when the server switches, else
//! streamed from a read-ahead thread, resumed from the server's offset when it breaks.

use super::url::{plain_http_target, transfer_url};
use super::{folder_path, reply_field};
use crate::{Client, ClientError};
use bytes::Bytes;
use reqwest::Method;
use serde_json::json;
use std::io::{Read, Seek};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How a raw upload attempt failed.
enum RawFailure {
    /// For good (the server refused, the file cannot be read).
    Fatal(ClientError),
    /// The connection broke: resume from the server's offset.
    Broken(ClientError),
}

impl Client {
    /// Uploads `local` as `remote`: one TUS `PATCH` carries the whole file, raw (`Upgrade:
    /// bai-file`, sent with sendfile(2)) when the server offers it, else streamed from a
    /// read-ahead thread; a dropped connection resumes from the server's offset (`HEAD`), up
    /// to 3 times.
    /// `progress(sent, total)` is called about ten times a second.
    pub async fn upload_file(
        &self,
        id: &str,
        local: &Path,
        remote: &str,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<(), ClientError> {
        let file_err = |err: std::io::Error| ClientError::File {
            what: "read",
            path: local.display().to_string(),
            err,
        };
        let size = tokio::fs::metadata(local).await.map_err(file_err)?.len();
        let v = self
            .send_json(
                Method::POST,
                &folder_path(id, "/request-upload"),
                Some(&json!({"path": remote, "size": size})),
            )
            .await?;
        let url = transfer_url(
            self.config.endpoint(),
            &reply_field(&v, "url")?,
            &reply_field(&v, "token")?,
        );
        let mut offset = 0u64;
        let mut retries = 0;
        // The raw path first; the standard PATCH when the server does not switch.
        let mut raw = plain_http_target(&url);
        progress(0, size);
        while offset < size {
            if let Some(target) = &raw {
                match self
                    .upload_raw(target, local, offset, size, &mut progress)
                    .await
                {
                    Ok(Some(next)) => {
                        offset = next;
                        progress(offset, size);
                    }
                    Ok(None) => raw = None,
                    Err(RawFailure::Fatal(e)) => return Err(e),
                    Err(RawFailure::Broken(e)) => {
                        if retries >= 3 {
                            return Err(e);
                        }
                        retries += 1;
                        offset = self.upload_offset(&url).await?;
                    }
                }
                continue;
            }
            let sent = Arc::new(AtomicU64::new(offset));
            let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<Bytes>>(4);
            let reader = {
                let (path, sent) = (local.to_path_buf(), sent.clone());
                tokio::task::spawn_blocking(move || read_ahead(&path, offset, tx, &sent))
            };
            let body =
                reqwest::Body::wrap_stream(futures::stream::unfold(rx, |mut rx| async move {
                    rx.recv().await.map(|item| (item, rx))
                }));
            let req = self
                .http
                .patch(&url)
                .header("Tus-Resumable", "1.0.0")
                .header("Upload-Offset", offset.to_string())
                .header("Content-Type", "application/offset+octet-stream")
                .header("Content-Length", (size - offset).to_string())
                .body(body)
                .send();
            tokio::pin!(req);
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            let result = loop {
                tokio::select! {
                    r = &mut req => break r,
                    _ = tick.tick() => progress(sent.load(Ordering::Relaxed), size),
                }
            };
            let read = reader
                .await
                .map_err(|e| ClientError::Protocol(format!("file reader failed: {e}")))?;
            let resp = match result {
                Ok(resp) => resp,
                Err(e) => {
                    read.map_err(file_err)?;
                    if retries >= 3 {
                        return Err(self.connect_error(&e));
                    }
                    retries += 1;
                    offset = self.upload_offset(&url).await?;
                    continue;
                }
            };
            let status = resp.status().as_u16();
            let next = resp
                .headers()
                .get("upload-offset")
                .and_then(|h| h.to_str().ok())
                .and_then(|s| s.parse::<u64>().ok());
            if status != 204 {
                let body = resp.bytes().await.unwrap_or_default();
                return Err(ClientError::from_reply(status, &body));
            }
            read.map_err(file_err)?;
            offset =
                next.ok_or_else(|| ClientError::Protocol("no Upload-Offset in the reply".into()))?;
            progress(offset, size);
        }
        Ok(())
    }

    /// One raw TUS `PATCH` (`Upgrade: bai-file`): after `101` the rest of the file from
    /// `offset` goes out with sendfile(2), then the server's answer is read back. `None`: the
    /// server did not switch (it took the request as an empty PATCH).
    async fn upload_raw(
        &self,
        (authority, path): &(String, String),
        local: &Path,
        offset: u64,
        size: u64,
        progress: &mut impl FnMut(u64, u64),
    ) -> Result<Option<u64>, RawFailure> {
        let broken = RawFailure::Broken;
        let len = size - offset;
        let mut conn = self.raw_connect_to(authority).await.map_err(broken)?;
        let req = format!(
            "PATCH {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: bai/{}\r\n\
             Tus-Resumable: 1.0.0\r\nUpload-Offset: {offset}\r\n\
             Content-Type: application/offset+octet-stream\r\nContent-Length: 0\r\n\
             Connection: Upgrade\r\nUpgrade: {}\r\n{}: {len}\r\n\r\n",
            env!("CARGO_PKG_VERSION"),
            bai_core::RAW_FILE_UPGRADE,
            bai_core::RAW_LENGTH_HEADER,
        );
        let (head, early) = self
            .raw_request(&mut conn, &req)
            .await
            .map_err(broken)?
            .ok_or_else(|| broken(self.closed_early()))?;
        match head.status {
            101 => {}
            204 => return Ok(None),
            _ => {
                return Err(RawFailure::Fatal(
                    self.raw_error(&mut conn, &head, early).await,
                ));
            }
        }
        let file = std::fs::File::open(local).map_err(|err| {
            RawFailure::Fatal(ClientError::File {
                what: "read",
                path: local.display().to_string(),
                err,
            })
        })?;
        let sock = self.blocking(conn).map_err(broken)?;
        let sent = Arc::new(AtomicU64::new(offset));
        let counter = sent.clone();
        let sender = tokio::task::spawn_blocking(move || {
            let r = bai_relay::file::send_file(&sock, &file, offset, len, |n| {
                counter.fetch_add(n as u64, Ordering::Relaxed);
            });
            (sock, r)
        });
        let (sock, sent_result) = self
            .with_progress(sender, &sent, size, progress)
            .await
            .map_err(RawFailure::Fatal)?;
        // The answer, also after a failed send: a server that stopped taking bytes says why.
        let mut conn = self.nonblocking(sock).map_err(broken)?;
        let answer = self.raw_head(&mut conn).await;
        let (head, early) = match (answer, sent_result) {
            (Ok(Some(a)), _) => a,
            (_, Err(e)) => return Err(broken(self.raw_err(e))),
            (Err(e), Ok(_)) => return Err(broken(e)),
            (Ok(None), Ok(_)) => return Err(broken(self.closed_early())),
        };
        if head.status != 204 {
            return Err(RawFailure::Fatal(
                self.raw_error(&mut conn, &head, early).await,
            ));
        }
        head.get("upload-offset")
            .and_then(|s| s.parse::<u64>().ok())
            .map(Some)
            .ok_or_else(|| {
                RawFailure::Fatal(ClientError::Protocol(
                    "no Upload-Offset in the reply".into(),
                ))
            })
    }

    /// TUS `HEAD`: how many bytes of an upload the server holds.
    async fn upload_offset(&self, url: &str) -> Result<u64, ClientError> {
        let resp = self
            .http
            .head(url)
            .header("Tus-Resumable", "1.0.0")
            .send()
            .await
            .map_err(|e| self.connect_error(&e))?;
        resp.headers()
            .get("upload-offset")
            .and_then(|h| h.to_str().ok())
            .and_then(|s| s.parse::<u64>().ok())
            .ok_or_else(|| ClientError::Protocol("no Upload-Offset in the reply".into()))
    }
}

/// Reads `path` from `offset` in 1 MiB chunks into `tx`, counting what was handed over in `sent`.
fn read_ahead(
    path: &Path,
    offset: u64,
    tx: tokio::sync::mpsc::Sender<std::io::Result<Bytes>>,
    sent: &AtomicU64,
) -> std::io::Result<()> {
    const READ: u64 = 1 << 20;
    let mut f = std::fs::File::open(path)?;
    f.seek(std::io::SeekFrom::Start(offset))?;
    loop {
        let mut buf = Vec::with_capacity(READ as usize);
        let n = match (&mut f).take(READ).read_to_end(&mut buf) {
            Ok(n) => n,
            Err(e) => {
                let msg = e.to_string();
                let _ = tx.blocking_send(Err(std::io::Error::other(msg)));
                return Err(e);
            }
        };
        if n == 0 {
            return Ok(());
        }
        if tx.blocking_send(Ok(Bytes::from(buf))).is_err() {
            return Ok(()); // the request ended early; the caller looks at its result
        }
        sent.fetch_add(n as u64, Ordering::Relaxed);
    }
}

//! Downloads: raw with splice(2) when the URL is plain HTTP, else streamed to a writer thread.

use super::url::{plain_http_target, transfer_url};
use super::{folder_path, reply_field};
use crate::{Client, ClientError};
use bytes::Bytes;
use futures::StreamExt;
use reqwest::Method;
use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

impl Client {
    /// Downloads `remote` into `local` (which must not exist): raw (`Upgrade: bai-file`, the
    /// bytes spliced from the socket into the file) when the URL is plain HTTP, else streamed
    /// to a writer thread; `progress(got, total)`.
    pub async fn download_file(
        &self,
        id: &str,
        remote: &str,
        local: &Path,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<(), ClientError> {
        if local.exists() {
            return Err(ClientError::Invalid(format!(
                "{} exists already; remove it or download elsewhere",
                local.display()
            )));
        }
        let v = self
            .send_json(
                Method::POST,
                &folder_path(id, "/request-download"),
                Some(&json!({ "path": remote })),
            )
            .await?;
        let url = transfer_url(
            self.config.endpoint(),
            &reply_field(&v, "url")?,
            &reply_field(&v, "token")?,
        );
        if let Some(target) = plain_http_target(&url)
            && self.download_raw(&target, local, &mut progress).await?
        {
            return Ok(());
        }
        let resp = self
            .http
            .get(&url)
            .send()
            .await
            .map_err(|e| self.connect_error(&e))?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            let body = resp.bytes().await.unwrap_or_default();
            return Err(ClientError::from_reply(status, &body));
        }
        let total = resp.content_length().unwrap_or(0);
        let file_err = |err: std::io::Error| ClientError::File {
            what: "write",
            path: local.display().to_string(),
            err,
        };
        if let Some(parent) = local.parent().filter(|p| !p.as_os_str().is_empty()) {
            tokio::fs::create_dir_all(parent).await.map_err(file_err)?;
        }
        let f = std::fs::File::create_new(local).map_err(file_err)?;
        let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(4);
        let writer = tokio::task::spawn_blocking(move || write_all_from(f, rx));
        let mut got = 0u64;
        progress(0, total);
        let mut stream = resp.bytes_stream();
        let mut failed = None;
        // Small network reads are gathered into 1 MiB writes: fewer thread hand-offs and syscalls.
        let mut pending = bytes::BytesMut::with_capacity(GATHER);
        while let Some(chunk) = stream.next().await {
            match chunk {
                Ok(c) => {
                    got += c.len() as u64;
                    pending.extend_from_slice(&c);
                    if pending.len() >= GATHER {
                        let full =
                            std::mem::replace(&mut pending, bytes::BytesMut::with_capacity(GATHER));
                        if tx.send(full.freeze()).await.is_err() {
                            break; // the writer failed; its error is reported below
                        }
                        progress(got, total);
                    }
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if !pending.is_empty() {
            let _ = tx.send(pending.freeze()).await;
        }
        progress(got, total);
        drop(tx);
        writer
            .await
            .map_err(|e| ClientError::Protocol(format!("file writer failed: {e}")))?
            .map_err(file_err)?;
        if let Some(e) = failed {
            return Err(self.connect_error(&e));
        }
        Ok(())
    }

    /// A raw download (`Upgrade: bai-file`; a server that does not switch answers the usual
    /// 200 with Content-Length, and its body is taken the same way): the bytes go from the
    /// socket into the new file with splice(2). `false`: the reply cannot be taken this way
    /// (no length), nothing was written.
    async fn download_raw(
        &self,
        (authority, path): &(String, String),
        local: &Path,
        progress: &mut impl FnMut(u64, u64),
    ) -> Result<bool, ClientError> {
        let mut conn = self.raw_connect_to(authority).await?;
        let req = format!(
            "GET {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: bai/{}\r\n\
             Connection: Upgrade\r\nUpgrade: {}\r\n\r\n",
            env!("CARGO_PKG_VERSION"),
            bai_core::RAW_FILE_UPGRADE,
        );
        let Some((head, early)) = self.raw_request(&mut conn, &req).await? else {
            return Ok(false);
        };
        let length = |name: &str| head.get(name).and_then(|v| v.parse::<u64>().ok());
        let total = match head.status {
            101 => length(bai_core::RAW_LENGTH_HEADER).ok_or_else(|| {
                ClientError::Protocol("the raw download did not say its length".into())
            })?,
            200 if head.get("transfer-encoding").is_none() => match length("content-length") {
                Some(n) => n,
                None => return Ok(false),
            },
            200 => return Ok(false),
            _ => return Err(self.raw_error(&mut conn, &head, early).await),
        };
        let file_err = |err: std::io::Error| ClientError::File {
            what: "write",
            path: local.display().to_string(),
            err,
        };
        if let Some(parent) = local.parent().filter(|p| !p.as_os_str().is_empty()) {
            tokio::fs::create_dir_all(parent).await.map_err(file_err)?;
        }
        let file = std::fs::File::create_new(local).map_err(file_err)?;
        let got = Arc::new(AtomicU64::new(0));
        let counter = got.clone();
        let sock = self.blocking(conn)?;
        let receiver = tokio::task::spawn_blocking(move || {
            bai_relay::file::recv_file_after(&sock, &file, 0, &early, total, |n| {
                counter.fetch_add(n as u64, Ordering::Relaxed);
            })
        });
        let received = self.with_progress(receiver, &got, total, progress).await?;
        let n = received.map_err(|e| {
            ClientError::Protocol(format!(
                "the download broke off after {} of {total} bytes: {e}",
                got.load(Ordering::Relaxed)
            ))
        })?;
        if n < total {
            return Err(ClientError::Protocol(format!(
                "the download ended after {n} of {total} bytes"
            )));
        }
        progress(total, total);
        Ok(true)
    }
}

/// Download writes are gathered up to this size.
const GATHER: usize = 1 << 20;

/// Writes everything that arrives on `rx` into `f`.
fn write_all_from(
    mut f: std::fs::File,
    mut rx: tokio::sync::mpsc::Receiver<Bytes>,
) -> std::io::Result<()> {
    while let Some(chunk) = rx.blocking_recv() {
        f.write_all(&chunk)?;
    }
    f.flush()
}

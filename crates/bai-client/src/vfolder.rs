//! Data folders (wire contract §5.9): folder CRUD by id (names are looked up with
//! `GET /folders/_/id`), file operations, TUS uploads and streamed downloads through the
//! unsigned URLs the manager hands out.

use crate::{Client, ClientError, encode};
use bytes::Bytes;
use futures::StreamExt;
use reqwest::Method;
use serde_json::{Value, json};
use std::io::{Read, Seek, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// `url?token=…`, with a relative `url` joined to the endpoint.
pub fn transfer_url(endpoint: &str, url: &str, token: &str) -> String {
    let base = if url.starts_with("http://") || url.starts_with("https://") {
        url.to_string()
    } else {
        format!(
            "{}/{}",
            endpoint.trim_end_matches('/'),
            url.trim_start_matches('/')
        )
    };
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}token={}", encode::query_value(token))
}

/// `(host:port, path?query)` of a plain-HTTP transfer URL, for a request made by hand.
fn plain_http_target(url: &str) -> Option<(String, String)> {
    let u = reqwest::Url::parse(url).ok()?;
    if u.scheme() != "http" {
        return None;
    }
    let port = u.port_or_known_default()?;
    // `Host` displays IPv6 addresses in brackets, as an authority needs them.
    let authority = format!("{}:{port}", u.host()?);
    let mut path = u.path().to_string();
    if let Some(q) = u.query() {
        path.push('?');
        path.push_str(q);
    }
    Some((authority, path))
}

/// How a raw upload attempt failed.
enum RawFailure {
    /// For good (the server refused, the file cannot be read).
    Fatal(ClientError),
    /// The connection broke: resume from the server's offset.
    Broken(ClientError),
}

/// How long a raw transfer waits for the server when no read timeout is configured.
const RAW_IDLE: Duration = Duration::from_secs(120);

fn folder_path(id: &str, tail: &str) -> String {
    format!("/folders/{}{tail}", encode::path_segment(id))
}

fn reply_field(v: &Value, k: &str) -> Result<String, ClientError> {
    v.get(k)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| ClientError::Protocol(format!("no {k} in {v}")))
}

impl Client {
    /// The id of the caller's folder `name`.
    pub async fn vfolder_id(&self, name: &str) -> Result<String, ClientError> {
        let v = self
            .send_json(Method::GET, "/folders/_/id", Some(&json!({ "name": name })))
            .await?;
        reply_field(&v, "id")
    }

    /// `POST /folders`: a folder on `host` (default host when None), `rw` or `ro`; a project
    /// folder when `project` is given (administrators only).
    pub async fn create_vfolder(
        &self,
        name: &str,
        host: Option<&str>,
        permission: &str,
        quota: Option<&str>,
        project: Option<&str>,
    ) -> Result<Value, ClientError> {
        let mut body = json!({
            "name": name, "host": host, "unmanaged_path": null, "group": project,
            "usage_mode": "general", "permission": permission, "cloneable": false,
        });
        if let Some(q) = quota {
            body["quota"] = q.into();
        }
        self.send_json(Method::POST, "/folders", Some(&body)).await
    }

    /// `GET /folders/_/hosts`: `{"default", "allowed", "volume_info"}`.
    pub async fn vfolder_hosts(&self) -> Result<Value, ClientError> {
        self.send_json(Method::GET, "/folders/_/hosts", None).await
    }

    /// The caller's folders (GraphQL `vfolder_list`).
    pub async fn list_vfolders(&self) -> Result<Vec<Value>, ClientError> {
        let q = "query($limit:Int!, $offset:Int!) { vfolder_list(limit:$limit, offset:$offset) \
                 { items { id host name status created_at permission ownership_type group max_size } total_count } }";
        let v = self.gql(q, json!({"limit": 1000, "offset": 0})).await?;
        Ok(v["vfolder_list"]["items"]
            .as_array()
            .cloned()
            .unwrap_or_default())
    }

    pub async fn vfolder_info(&self, id: &str) -> Result<Value, ClientError> {
        self.send_json(Method::GET, &folder_path(id, ""), None)
            .await
    }

    pub async fn rename_vfolder(&self, id: &str, new_name: &str) -> Result<(), ClientError> {
        let body = json!({ "new_name": new_name });
        self.send(Method::POST, &folder_path(id, "/rename"), Some(&body))
            .await
            .map(|_| ())
    }

    pub async fn delete_vfolder(&self, id: &str) -> Result<(), ClientError> {
        self.send(Method::DELETE, "/folders", Some(&json!({ "id": id })))
            .await
            .map(|_| ())
    }

    /// `{"items": [{name, type, size, mode, created, modified}]}` of a directory.
    pub async fn list_files(&self, id: &str, path: &str) -> Result<Value, ClientError> {
        let p = format!(
            "{}?{}",
            folder_path(id, "/files"),
            encode::query(&[("path", path)])
        );
        self.send_json(Method::GET, &p, None).await
    }

    pub async fn mkdir(
        &self,
        id: &str,
        paths: &[String],
        parents: bool,
        exist_ok: bool,
    ) -> Result<Value, ClientError> {
        let body = json!({"path": paths, "parents": parents, "exist_ok": exist_ok});
        self.send_json(Method::POST, &folder_path(id, "/mkdir"), Some(&body))
            .await
    }

    pub async fn rename_file(
        &self,
        id: &str,
        target: &str,
        new_name: &str,
    ) -> Result<(), ClientError> {
        let body = json!({"target_path": target, "new_name": new_name});
        self.send(Method::POST, &folder_path(id, "/rename-file"), Some(&body))
            .await
            .map(|_| ())
    }

    pub async fn move_file(&self, id: &str, src: &str, dst: &str) -> Result<(), ClientError> {
        let body = json!({"src": src, "dst": dst});
        self.send(Method::POST, &folder_path(id, "/move-file"), Some(&body))
            .await
            .map(|_| ())
    }

    pub async fn delete_files(
        &self,
        id: &str,
        files: &[String],
        recursive: bool,
    ) -> Result<(), ClientError> {
        let body = json!({"files": files, "recursive": recursive});
        self.send(
            Method::DELETE,
            &folder_path(id, "/delete-files"),
            Some(&body),
        )
        .await
        .map(|_| ())
    }

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
        let file_err = |e: std::io::Error| ClientError::File {
            path: local.display().to_string(),
            source: e,
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
        let file = std::fs::File::open(local).map_err(|source| {
            RawFailure::Fatal(ClientError::File {
                path: local.display().to_string(),
                source,
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
        let file_err = |source: std::io::Error| ClientError::File {
            path: local.display().to_string(),
            source,
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

    /// Waits for a transfer thread, reporting `done` of `total` about ten times a second.
    async fn with_progress<T>(
        &self,
        task: tokio::task::JoinHandle<T>,
        done: &AtomicU64,
        total: u64,
        progress: &mut impl FnMut(u64, u64),
    ) -> Result<T, ClientError> {
        tokio::pin!(task);
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        loop {
            tokio::select! {
                r = &mut task => {
                    return r.map_err(|e| ClientError::Protocol(format!("the transfer thread failed: {e}")));
                }
                _ = tick.tick() => progress(done.load(Ordering::Relaxed), total),
            }
        }
    }

    /// The connection in blocking mode for a transfer thread (every wait bounded).
    fn blocking(&self, conn: tokio::net::TcpStream) -> Result<std::net::TcpStream, ClientError> {
        let wait = self.config.read_timeout.unwrap_or(RAW_IDLE);
        bai_relay::file::into_blocking(conn, wait).map_err(|e| self.raw_err(e))
    }

    /// A connection back from a transfer thread.
    fn nonblocking(&self, sock: std::net::TcpStream) -> Result<tokio::net::TcpStream, ClientError> {
        sock.set_nonblocking(true)
            .and_then(|()| tokio::net::TcpStream::from_std(sock))
            .map_err(|e| self.raw_err(e))
    }

    fn closed_early(&self) -> ClientError {
        self.raw_err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the server closed the connection",
        ))
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
        let file_err = |e: std::io::Error| ClientError::File {
            path: local.display().to_string(),
            source: e,
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
}

/// Download writes are gathered up to this size.
const GATHER: usize = 1 << 20;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_targets() {
        assert_eq!(
            plain_http_target("http://127.0.0.1:8090/storage/upload?token=a+b"),
            Some((
                "127.0.0.1:8090".to_string(),
                "/storage/upload?token=a+b".to_string()
            ))
        );
        assert_eq!(
            plain_http_target("http://[::1]/storage/download?token=t"),
            Some((
                "[::1]:80".to_string(),
                "/storage/download?token=t".to_string()
            ))
        );
        assert_eq!(
            plain_http_target("https://h/storage/download?token=t"),
            None
        );
        assert_eq!(plain_http_target("not a url"), None);
    }

    #[test]
    fn transfer_urls_carry_the_token() {
        assert_eq!(
            transfer_url("http://h:1", "http://h:1/storage/upload", "a b"),
            "http://h:1/storage/upload?token=a+b"
        );
        assert_eq!(
            transfer_url("http://h:1/", "/storage/download", "t"),
            "http://h:1/storage/download?token=t"
        );
        assert_eq!(
            transfer_url("http://h", "http://x/u?dst=d", "t"),
            "http://x/u?dst=d&token=t"
        );
    }
}

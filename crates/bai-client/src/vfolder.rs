//! Data folders (wire contract §5.9): folder CRUD by id (names are looked up with
//! `GET /folders/_/id`), file operations, TUS uploads and streamed downloads through the
//! unsigned URLs the manager hands out.

use crate::{Client, ClientError, encode};
use futures::StreamExt;
use reqwest::Method;
use serde_json::{Value, json};
use std::path::Path;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Size of one TUS `PATCH` (the official client's default).
pub const CHUNK: usize = 16 * 1024 * 1024;

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

    /// `POST /folders`: a user folder on `host` (default host when None), `rw` or `ro`.
    pub async fn create_vfolder(
        &self,
        name: &str,
        host: Option<&str>,
        permission: &str,
        quota: Option<&str>,
    ) -> Result<Value, ClientError> {
        let mut body = json!({
            "name": name, "host": host, "unmanaged_path": null, "group": null,
            "usage_mode": "general", "permission": permission, "cloneable": false,
        });
        if let Some(q) = quota {
            body["quota"] = q.into();
        }
        self.send_json(Method::POST, "/folders", Some(&body)).await
    }

    /// The caller's folders (GraphQL `vfolder_list`).
    pub async fn list_vfolders(&self) -> Result<Vec<Value>, ClientError> {
        let q = "query($limit:Int!, $offset:Int!) { vfolder_list(limit:$limit, offset:$offset) \
                 { items { id host name status created_at permission ownership_type max_size } total_count } }";
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

    /// Uploads `local` as `remote` in 16 MiB TUS `PATCH`es; `progress(sent, total)`.
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
        let mut f = tokio::fs::File::open(local).await.map_err(file_err)?;
        let size = f.metadata().await.map_err(file_err)?.len();
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
        let mut buf = vec![0u8; CHUNK];
        progress(0, size);
        while offset < size {
            let mut n = 0;
            while n < buf.len() {
                let r = f.read(&mut buf[n..]).await.map_err(file_err)?;
                if r == 0 {
                    break;
                }
                n += r;
            }
            if n == 0 {
                break;
            }
            let resp = self
                .http
                .patch(&url)
                .header("Tus-Resumable", "1.0.0")
                .header("Upload-Offset", offset.to_string())
                .header("Content-Type", "application/offset+octet-stream")
                .body(buf[..n].to_vec())
                .send()
                .await
                .map_err(|e| self.connect_error(&e))?;
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
            offset =
                next.ok_or_else(|| ClientError::Protocol("no Upload-Offset in the reply".into()))?;
            progress(offset, size);
        }
        Ok(())
    }

    /// Downloads `remote` into `local` (which must not exist), streamed; `progress(got, total)`.
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
        let f = tokio::fs::File::create(local).await.map_err(file_err)?;
        let mut f = tokio::io::BufWriter::with_capacity(4 << 20, f);
        let mut got = 0u64;
        progress(0, total);
        let mut stream = resp.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| self.connect_error(&e))?;
            f.write_all(&chunk).await.map_err(file_err)?;
            got += chunk.len() as u64;
            progress(got, total);
        }
        f.flush().await.map_err(file_err)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

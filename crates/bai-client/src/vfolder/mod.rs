//! Data folders (wire contract §5.9): folder CRUD by id (names are looked up with
//! `GET /folders/_/id`), file operations, TUS uploads and streamed downloads through the
//! unsigned URLs the manager hands out.
//!
//! This module holds the folder and file operations; the transfers are in `upload` and
//! `download`, with the transfer threads' plumbing in `threads` and the URLs in `url`.

mod download;
mod sharing;
mod threads;
mod upload;
mod url;

pub use url::transfer_url;

use crate::{Client, ClientError, encode};
use bai_api::folders;
use reqwest::Method;
use serde_json::{Value, json};

pub(super) fn folder_path(id: &str, tail: &str) -> String {
    format!("/folders/{}{tail}", encode::path_segment(id))
}

pub(super) fn reply_field(v: &Value, k: &str) -> Result<String, ClientError> {
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

    /// `POST /folders`: a folder (on the default host when `host` is None; a project's
    /// folder when `group` names one, administrators only).
    pub async fn create_vfolder(
        &self,
        folder: &folders::CreateFolder,
    ) -> Result<folders::Folder, ClientError> {
        let b = body(folder)?;
        typed(self.send_json(Method::POST, "/folders", Some(&b)).await?)
    }

    /// `GET /folders/_/hosts`: the default host, the allowed ones and their volumes.
    pub async fn vfolder_hosts(&self) -> Result<folders::Hosts, ClientError> {
        typed(
            self.send_json(Method::GET, "/folders/_/hosts", None)
                .await?,
        )
    }

    /// The caller's folders (GraphQL `vfolder_list`).
    pub async fn list_vfolders(&self) -> Result<Vec<Value>, ClientError> {
        let q = "query($limit:Int!, $offset:Int!) { vfolder_list(limit:$limit, offset:$offset) \
                 { items { id host name status created_at permission ownership_type group max_size is_owner } total_count } }";
        let v = self.gql(q, json!({"limit": 1000, "offset": 0})).await?;
        Ok(v["vfolder_list"]["items"]
            .as_array()
            .cloned()
            .unwrap_or_default())
    }

    /// `GET /folders/{id}`: the folder with its usage.
    pub async fn vfolder_info(&self, id: &str) -> Result<folders::Folder, ClientError> {
        typed(
            self.send_json(Method::GET, &folder_path(id, ""), None)
                .await?,
        )
    }

    pub async fn rename_vfolder(&self, id: &str, new_name: &str) -> Result<(), ClientError> {
        let body = body(&folders::RenameFolder {
            new_name: new_name.to_string(),
        })?;
        self.send(Method::POST, &folder_path(id, "/rename"), Some(&body))
            .await
            .map(|_| ())
    }

    /// `POST /folders/{id}/sftp`: SFTP to the folder through a system session (its key in
    /// the answer, shown once).
    pub async fn vfolder_sftp(&self, id: &str) -> Result<folders::SftpAccess, ClientError> {
        typed(
            self.send_json(Method::POST, &folder_path(id, "/sftp"), None)
                .await?,
        )
    }

    /// `DELETE /folders`: the folder moves to the trash (restore or purge it from there).
    pub async fn delete_vfolder(&self, id: &str) -> Result<(), ClientError> {
        let body = body(&folders::FolderId { id: id.to_string() })?;
        self.send(Method::DELETE, "/folders", Some(&body))
            .await
            .map(|_| ())
    }

    /// `POST /folders/restore-from-trash-bin`: a folder in the trash back to use.
    pub async fn restore_vfolder(&self, id: &str) -> Result<(), ClientError> {
        let body = body(&folders::FolderId { id: id.to_string() })?;
        self.send(Method::POST, "/folders/restore-from-trash-bin", Some(&body))
            .await
            .map(|_| ())
    }

    /// `POST /folders/purge`: a folder in the trash deleted with its files.
    pub async fn purge_vfolder(&self, id: &str) -> Result<(), ClientError> {
        let body = body(&folders::FolderId { id: id.to_string() })?;
        self.send(Method::POST, "/folders/purge", Some(&body))
            .await
            .map(|_| ())
    }

    /// The entries of a directory of a folder.
    pub async fn list_files(&self, id: &str, path: &str) -> Result<folders::Listing, ClientError> {
        let p = format!(
            "{}?{}",
            folder_path(id, "/files"),
            encode::query(&[("path", path)])
        );
        typed(self.send_json(Method::GET, &p, None).await?)
    }

    pub async fn mkdir(
        &self,
        id: &str,
        paths: &[String],
        parents: bool,
        exist_ok: bool,
    ) -> Result<folders::MkdirAnswer, ClientError> {
        let b = body(&folders::Mkdir {
            path: folders::Paths::Many(paths.to_vec()),
            parents: Some(parents),
            exist_ok: Some(exist_ok),
        })?;
        typed(
            self.send_json(Method::POST, &folder_path(id, "/mkdir"), Some(&b))
                .await?,
        )
    }

    pub async fn rename_file(
        &self,
        id: &str,
        target: &str,
        new_name: &str,
    ) -> Result<(), ClientError> {
        let body = body(&folders::RenameFile {
            target_path: target.to_string(),
            new_name: new_name.to_string(),
        })?;
        self.send(Method::POST, &folder_path(id, "/rename-file"), Some(&body))
            .await
            .map(|_| ())
    }

    pub async fn move_file(&self, id: &str, src: &str, dst: &str) -> Result<(), ClientError> {
        let body = body(&folders::MoveFile {
            src: src.to_string(),
            dst: dst.to_string(),
        })?;
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
        let body = body(&folders::DeleteFiles {
            files: files.to_vec(),
            recursive: Some(recursive),
        })?;
        self.send(
            Method::DELETE,
            &folder_path(id, "/delete-files"),
            Some(&body),
        )
        .await
        .map(|_| ())
    }
}

use crate::request::body_of as body;

/// A folder answer read as its wire-contract type.
fn typed<T: serde::de::DeserializeOwned>(answer: Value) -> Result<T, ClientError> {
    crate::request::typed("folder", answer)
}

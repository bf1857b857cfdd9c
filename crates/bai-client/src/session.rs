//! Session calls.

use crate::{Client, ClientError, encode_path_segment, encode_query_value};
use reqwest::Method;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// What `POST /session` is asked for (wire contract §5.2).
#[derive(Debug, Clone, Default)]
pub struct CreateSession {
    /// None: the server picks a random readable name.
    pub name: Option<String>,
    pub image: String,
    pub session_type: String,
    pub resources: Map<String, Value>,
    pub resource_opts: Map<String, Value>,
    pub environ: Map<String, Value>,
    pub enqueue_only: bool,
    pub max_wait_secs: u64,
    pub reuse_if_exists: bool,
    pub startup_command: Option<String>,
    pub starts_at: Option<String>,
    pub batch_timeout: Option<String>,
    pub tag: Option<String>,
    pub bootstrap_script: Option<String>,
    pub scaling_group: Option<String>,
    pub owner_access_key: Option<String>,
}

#[derive(Debug, Clone)]
pub struct CreateReply {
    pub session_id: String,
    pub session_name: String,
    /// RUNNING, PENDING, TIMEOUT, TERMINATED, ERROR, CANCELLED, …
    pub status: String,
    pub created: bool,
}

impl Client {
    pub async fn create_session(&self, req: &CreateSession) -> Result<CreateReply, ClientError> {
        let body = json!({
            "name": req.name,
            "image": req.image,
            "type": if req.session_type.is_empty() { "interactive" } else { &req.session_type },
            "tag": req.tag,
            "config": {
                "mounts": self.config.vfolder_mounts, "environ": req.environ, "resources": req.resources,
                "resource_opts": req.resource_opts, "scalingGroup": req.scaling_group,
            },
            "domain": self.config.domain,
            "group": self.config.group,
            "clusterSize": 1,
            "clusterMode": "single-node",
            "enqueueOnly": req.enqueue_only,
            "maxWaitSeconds": req.max_wait_secs,
            "reuseIfExists": req.reuse_if_exists,
            "startupCommand": req.startup_command,
            "starts_at": req.starts_at,
            "batch_timeout": req.batch_timeout,
            "bootstrap_script": req.bootstrap_script,
            "owner_access_key": req.owner_access_key,
            "architecture": std::env::consts::ARCH,
        });
        let v = self
            .send_json(Method::POST, "/session", Some(&body))
            .await?;
        let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        Ok(CreateReply {
            session_id: field("sessionId")
                .ok_or_else(|| ClientError::Protocol("no sessionId in the create reply".into()))?,
            session_name: field("sessionName")
                .or_else(|| req.name.clone())
                .unwrap_or_default(),
            status: field("status").unwrap_or_else(|| "RUNNING".into()),
            created: v.get("created").and_then(Value::as_bool).unwrap_or(true),
        })
    }

    fn session_path(reference: &str, tail: &str) -> String {
        format!("/session/{}{tail}", encode_path_segment(reference))
    }

    /// `DELETE /session/{ref}`; the reply tells `terminated` or `cancelled`.
    pub async fn destroy(&self, reference: &str, forced: bool) -> Result<Value, ClientError> {
        let q = if forced { "?forced=true" } else { "" };
        self.send_json(Method::DELETE, &Self::session_path(reference, q), None)
            .await
    }

    pub async fn logs(&self, reference: &str) -> Result<String, ClientError> {
        let v = self
            .send_json(Method::GET, &Self::session_path(reference, "/logs"), None)
            .await?;
        Ok(v["result"]["logs"].as_str().unwrap_or("").to_string())
    }

    pub async fn rename(&self, reference: &str, new_name: &str) -> Result<(), ClientError> {
        let path = Self::session_path(
            reference,
            &format!("/rename?name={}", encode_query_value(new_name)),
        );
        self.send(Method::POST, &path, None).await.map(|_| ())
    }

    pub async fn info(&self, reference: &str) -> Result<Value, ClientError> {
        self.send_json(Method::GET, &Self::session_path(reference, ""), None)
            .await
    }

    pub async fn status_history(&self, reference: &str) -> Result<Value, ClientError> {
        let v = self
            .send_json(
                Method::GET,
                &Self::session_path(reference, "/status-history"),
                None,
            )
            .await?;
        Ok(v["result"].clone())
    }

    pub async fn scheduling_history(&self, reference: &str) -> Result<Value, ClientError> {
        let v = self
            .send_json(
                Method::GET,
                &Self::session_path(reference, "/scheduling-history"),
                None,
            )
            .await?;
        Ok(v["result"].clone())
    }

    /// Uploads files into the session's /home/work; names are relative to `basedir`.
    pub async fn upload(
        &self,
        reference: &str,
        files: &[PathBuf],
        basedir: &Path,
    ) -> Result<(), ClientError> {
        let mut form = reqwest::multipart::Form::new();
        for f in files {
            let data = tokio::fs::read(f)
                .await
                .map_err(|e| ClientError::Config(format!("cannot read {}: {e}", f.display())))?;
            let abs = std::fs::canonicalize(f).unwrap_or_else(|_| f.clone());
            let base = std::fs::canonicalize(basedir).unwrap_or_else(|_| basedir.to_path_buf());
            let rel = abs
                .strip_prefix(&base)
                .map(Path::to_path_buf)
                .unwrap_or_else(|_| {
                    PathBuf::from(f.file_name().map(|n| n.to_os_string()).unwrap_or_default())
                });
            let part = reqwest::multipart::Part::bytes(data)
                .file_name(rel.to_string_lossy().into_owned())
                .mime_str("application/octet-stream")
                .map_err(|e| ClientError::Protocol(e.to_string()))?;
            form = form.part("src", part);
        }
        self.send_multipart(&Self::session_path(reference, "/upload"), form)
            .await
    }

    /// `POST /admin/gql`; GraphQL errors become [`ClientError::Api`].
    pub async fn gql(&self, query: &str, variables: Value) -> Result<Value, ClientError> {
        let v = self
            .send_json(
                Method::POST,
                "/admin/gql",
                Some(&json!({"query": query, "variables": variables})),
            )
            .await?;
        if let Some(errs) = v.get("errors").and_then(Value::as_array)
            && !errs.is_empty()
        {
            let msg = errs
                .iter()
                .filter_map(|e| e.get("message").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("; ");
            return Err(ClientError::Api {
                status: 400,
                kind: "graphql-error".into(),
                title: "GraphQL error".into(),
                msg,
                data: None,
            });
        }
        Ok(v.get("data").cloned().unwrap_or(Value::Null))
    }

    /// The caller's keypair (`is_admin` tells whether admin commands are allowed).
    pub async fn keypair_info(&self) -> Result<Value, ClientError> {
        let d = self
            .gql(
                "query { keypair { user_id access_key is_active is_admin } }",
                json!({}),
            )
            .await?;
        Ok(d["keypair"].clone())
    }

    /// One page of sessions, most recently changed first.
    pub async fn list_sessions(
        &self,
        statuses: &str,
        access_key: Option<&str>,
        limit: i64,
        offset: i64,
        fields: &str,
    ) -> Result<(Vec<Value>, i64), ClientError> {
        let q = format!(
            "query($limit:Int!, $offset:Int!, $status: String, $access_key: String) {{ compute_session_list(limit:$limit, offset:$offset, status:$status, access_key:$access_key) {{ items {{ {fields} }} total_count }} }}"
        );
        let d = self.gql(&q, json!({"limit": limit, "offset": offset, "status": statuses, "access_key": access_key})).await?;
        let list = &d["compute_session_list"];
        let items = list["items"].as_array().cloned().unwrap_or_default();
        Ok((items, list["total_count"].as_i64().unwrap_or(0)))
    }
}

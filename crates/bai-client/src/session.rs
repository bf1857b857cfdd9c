//! REST calls on one session: `/session/{ref}/…` (wire contract §5.2–5.8).

use crate::{Client, ClientError, encode};
use bai_api::sessions::{
    Destroyed, FileListing, HistoryRecord, Logs, SchedulingHistory, SessionInfo, SessionStatus,
    Stats, StatusHistory,
};
use reqwest::Method;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// `/session/{ref}{tail}` with the reference encoded as one path segment.
pub(crate) fn session_path(reference: &str, tail: &str) -> Result<String, ClientError> {
    if reference.is_empty() || reference == "." || reference == ".." {
        return Err(ClientError::Invalid(format!(
            "{reference:?} is not a session name or id"
        )));
    }
    Ok(format!(
        "/session/{}{tail}",
        encode::path_segment(reference)
    ))
}

/// The upload name of `file`: its path relative to `basedir`, with `/` separators; just
/// its file name when it lies outside `basedir`.
pub fn upload_name(file: &Path, basedir: &Path) -> Result<String, ClientError> {
    fn io(p: &Path) -> impl FnOnce(std::io::Error) -> ClientError + '_ {
        move |err| ClientError::File {
            what: "read",
            path: p.display().to_string(),
            err,
        }
    }
    let abs = std::fs::canonicalize(file).map_err(io(file))?;
    let base = std::fs::canonicalize(basedir).map_err(io(basedir))?;
    let rel = match abs.strip_prefix(&base) {
        Ok(r) => r.to_path_buf(),
        Err(_) => PathBuf::from(abs.file_name().unwrap_or_default()),
    };
    let parts: Vec<String> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if parts.is_empty() {
        return Err(ClientError::Invalid(format!(
            "{} is not a file to upload",
            file.display()
        )));
    }
    Ok(parts.join("/"))
}

impl Client {
    /// `DELETE /session/{ref}[?forced=true]`; the reply's `stats.status` says whether the
    /// session was `terminated` or (still queued) `cancelled`.
    pub async fn destroy(&self, reference: &str, forced: bool) -> Result<Destroyed, ClientError> {
        let q = if forced { "?forced=true" } else { "" };
        self.call_as(Method::DELETE, &session_path(reference, q)?, "termination")
            .await
    }

    /// `GET /session/{ref}/logs` → `result.logs`.
    pub async fn logs(&self, reference: &str) -> Result<String, ClientError> {
        self.kernel_logs(reference, None).await
    }

    /// `GET /session/{ref}/logs?kernel_id=K`: one kernel's logs (its id, or `main1`, `sub1`…).
    pub async fn kernel_logs(
        &self,
        reference: &str,
        kernel: Option<&str>,
    ) -> Result<String, ClientError> {
        let tail = match kernel {
            Some(k) => format!("/logs?{}", encode::query(&[("kernel_id", k)])),
            None => "/logs".to_string(),
        };
        let logs: Logs = self
            .call_as(Method::GET, &session_path(reference, &tail)?, "logs")
            .await?;
        Ok(logs.result.logs)
    }

    /// `POST /session/{ref}/rename?name=NEW`.
    pub async fn rename(&self, reference: &str, new_name: &str) -> Result<(), ClientError> {
        let tail = format!("/rename?{}", encode::query(&[("name", new_name)]));
        self.send(Method::POST, &session_path(reference, &tail)?, None)
            .await
            .map(|_| ())
    }

    /// `GET /session/{ref}`: the session's fields as the manager reports them.
    pub async fn info_rest(&self, reference: &str) -> Result<SessionInfo, ClientError> {
        self.call_as(Method::GET, &session_path(reference, "")?, "session")
            .await
    }

    /// `GET /session/{ref}/files?path=`: the entries of a directory of the session's main
    /// kernel (relative paths are under /home/work), as `(abspath, entries)`.
    pub async fn session_files(
        &self,
        reference: &str,
        path: &str,
    ) -> Result<(String, Vec<Value>), ClientError> {
        let p = format!(
            "{}?{}",
            session_path(reference, "/files")?,
            crate::encode::query(&[("path", path)])
        );
        let listing: FileListing = self.call_as(Method::GET, &p, "file listing").await?;
        let entries: Vec<Value> = serde_json::from_str(&listing.files).map_err(|e| {
            ClientError::Protocol(format!("the listing's files are not a JSON list: {e}"))
        })?;
        Ok((listing.abspath, entries))
    }

    /// `GET /session/{ref}/stats`: recent resource use (`samples`, `counters`) and the idle
    /// checkers' reports, as the wire contract's type.
    pub async fn stats(&self, reference: &str) -> Result<Stats, ClientError> {
        self.call_as(Method::GET, &session_path(reference, "/stats")?, "stats")
            .await
    }

    /// `GET /session/{ref}/status-history` → `result`: status → when it was first entered.
    pub async fn status_history(
        &self,
        reference: &str,
    ) -> Result<BTreeMap<SessionStatus, String>, ClientError> {
        let h: StatusHistory = self
            .call_as(
                Method::GET,
                &session_path(reference, "/status-history")?,
                "status history",
            )
            .await?;
        Ok(h.result)
    }

    /// `GET /session/{ref}/scheduling-history` → `result` (a list of records; bai only).
    pub async fn scheduling_history(
        &self,
        reference: &str,
    ) -> Result<Vec<HistoryRecord>, ClientError> {
        self.scheduling_history_filtered(reference, &[]).await
    }

    /// [`Client::scheduling_history`] with the filter bar's fields (`phase`, `result`,
    /// `from_status`, `to_status`, `error_code`, `message`, `id`).
    pub async fn scheduling_history_filtered(
        &self,
        reference: &str,
        filter: &[(&str, &str)],
    ) -> Result<Vec<HistoryRecord>, ClientError> {
        let mut path = session_path(reference, "/scheduling-history")?;
        if !filter.is_empty() {
            path.push('?');
            path.push_str(&crate::encode::query(filter));
        }
        let h: SchedulingHistory = self
            .call_as(Method::GET, &path, "scheduling history")
            .await?;
        Ok(h.result)
    }

    /// `POST /session/{ref}/upload`: one multipart part named `src` per file, its filename
    /// the path relative to `basedir` ([`upload_name`]); files land under /home/work.
    pub async fn upload(
        &self,
        reference: &str,
        files: &[PathBuf],
        basedir: &Path,
    ) -> Result<(), ClientError> {
        let path = session_path(reference, "/upload")?;
        let mut form = reqwest::multipart::Form::new();
        for f in files {
            let name = upload_name(f, basedir)?;
            let data = tokio::fs::read(f).await.map_err(|err| ClientError::File {
                what: "read",
                path: f.display().to_string(),
                err,
            })?;
            let part = reqwest::multipart::Part::bytes(data)
                .file_name(name)
                .mime_str("application/octet-stream")
                .map_err(|e| ClientError::Protocol(e.to_string()))?;
            form = form.part("src", part);
        }
        self.send_multipart(&path, form).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_one_segment() {
        assert_eq!(
            session_path("my sess/x", "/logs").unwrap(),
            "/session/my%20sess%2Fx/logs"
        );
        assert!(session_path("..", "").is_err());
        assert!(session_path("", "").is_err());
    }

    #[test]
    fn upload_names_are_relative_to_basedir() {
        let dir = std::env::temp_dir().join(format!("bai-client-up-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/a.py"), "x").unwrap();
        assert_eq!(
            upload_name(&dir.join("sub/a.py"), &dir).unwrap(),
            "sub/a.py"
        );
        assert_eq!(
            upload_name(&dir.join("sub/a.py"), &dir.join("sub")).unwrap(),
            "a.py"
        );
        let e = upload_name(
            &dir.join("sub/a.py"),
            &std::env::temp_dir().join("nonexistent-x"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("cannot read"), "{e}");
        assert!(upload_name(&dir.join("missing"), &dir).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

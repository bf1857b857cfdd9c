//! Talking to a kernel's krunner: code execution and file upload.

use super::Inner;
use crate::paths::confined_join;
use bai_core::agent::{AgentError, ExecEvent, ExecRequest};
use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use uuid::Uuid;

/// The krunner request line for an execution (`{"op":"exec","mode":…}`).
pub fn request_line(req: &ExecRequest) -> Result<String, AgentError> {
    let mut v = serde_json::to_value(req).map_err(|e| AgentError::BadRequest(e.to_string()))?;
    if let Value::Object(m) = &mut v {
        m.insert("op".into(), Value::String("exec".into()));
    }
    Ok(format!("{v}\n"))
}

pub async fn execute(
    inner: &Inner,
    kernel_id: Uuid,
    req: ExecRequest,
) -> Result<BoxStream<'static, ExecEvent>, AgentError> {
    let socket = inner.dirs(kernel_id).socket;
    if !socket.exists() {
        return Err(AgentError::KernelNotFound(kernel_id));
    }
    let mut stream = tokio::net::UnixStream::connect(&socket)
        .await
        .map_err(|e| AgentError::Runtime(format!("cannot reach the kernel runner: {e}")))?;
    stream
        .write_all(request_line(&req)?.as_bytes())
        .await
        .map_err(|e| AgentError::Runtime(format!("cannot talk to the kernel runner: {e}")))?;
    let lines = BufReader::new(stream).lines();
    let s = futures::stream::unfold((lines, false), |(mut lines, done)| async move {
        if done {
            return None;
        }
        loop {
            match lines.next_line().await {
                Ok(Some(l)) => match serde_json::from_str::<ExecEvent>(&l) {
                    Ok(ev) => {
                        let fin = matches!(ev, ExecEvent::Finished { .. });
                        return Some((ev, (lines, fin)));
                    }
                    Err(_) => continue,
                },
                _ => {
                    let ev = ExecEvent::Stderr {
                        data: "the kernel went away during the execution\n".into(),
                    };
                    return Some((ev, (lines, true)));
                }
            }
        }
    });
    // Guarantee a Finished at the end even when the kernel vanished.
    let mut finished = false;
    let s = s
        .map(move |ev| {
            if matches!(ev, ExecEvent::Finished { .. }) {
                finished = true;
            }
            (ev, finished)
        })
        .flat_map(|(ev, fin)| {
            let tail = match (&ev, fin) {
                (ExecEvent::Stderr { data }, false) if data.starts_with("the kernel went away") => {
                    vec![ev, ExecEvent::Finished { exit_code: 137 }]
                }
                _ => vec![ev],
            };
            futures::stream::iter(tail)
        });
    Ok(s.boxed())
}

pub async fn upload(
    inner: &Inner,
    kernel_id: Uuid,
    files: Vec<(String, bytes::Bytes)>,
) -> Result<(), AgentError> {
    let work = inner.dirs(kernel_id).work;
    if !work.exists() {
        return Err(AgentError::KernelNotFound(kernel_id));
    }
    for (rel, data) in files {
        let path = confined_join(&work, &rel).map_err(AgentError::BadRequest)?;
        let mut dir = path.parent().map(|p| p.to_path_buf());
        // Create and chown each missing parent directory.
        let mut to_make = Vec::new();
        while let Some(d) = dir {
            if d == work || d.exists() {
                break;
            }
            to_make.push(d.clone());
            dir = d.parent().map(|p| p.to_path_buf());
        }
        for d in to_make.iter().rev() {
            tokio::fs::create_dir(d)
                .await
                .map_err(|e| AgentError::Runtime(format!("cannot create {}: {e}", d.display())))?;
            let _ = std::os::unix::fs::chown(
                d,
                Some(super::create::WORK_UID),
                Some(super::create::WORK_UID),
            );
        }
        // Refuse to write through symlinks planted inside the scratch dir (the container
        // user controls it; we write as root on the host).
        let real_work = tokio::fs::canonicalize(&work)
            .await
            .map_err(|e| AgentError::Runtime(e.to_string()))?;
        if let Some(parent) = path.parent() {
            let real_parent = tokio::fs::canonicalize(parent)
                .await
                .map_err(|e| AgentError::Runtime(e.to_string()))?;
            if !real_parent.starts_with(&real_work) {
                return Err(AgentError::BadRequest(format!(
                    "{rel:?} leads outside /home/work"
                )));
            }
        }
        if let Ok(meta) = tokio::fs::symlink_metadata(&path).await
            && meta.file_type().is_symlink()
        {
            return Err(AgentError::BadRequest(format!(
                "{rel:?} is a symbolic link"
            )));
        }
        tokio::fs::write(&path, &data)
            .await
            .map_err(|e| AgentError::Runtime(format!("cannot write {rel:?}: {e}")))?;
        let _ = std::os::unix::fs::chown(
            &path,
            Some(super::create::WORK_UID),
            Some(super::create::WORK_UID),
        );
    }
    Ok(())
}

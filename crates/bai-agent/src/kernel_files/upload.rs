//! Uploading files into a kernel's /home/work, on either backend: the agent writes the host
//! side of the kernel's scratch home (a bind mount on Docker, a hostPath on Kubernetes).
//!
//! Paths are validated (relative, no `..`, no NUL) even though the manager validates
//! too. The scratch directory belongs to the kernel's user, who could plant symbolic links
//! in it; the agent writes as root, so it refuses to follow any link out of the directory.

use crate::error::runtime;
use crate::paths::confined_join;
use bai_core::agent::AgentError;
use std::path::{Path, PathBuf};
use uuid::Uuid;

/// Creates the missing parent directories of `path` below `work` (canonical), owned by the
/// work user.
async fn make_parents(work: &Path, path: &Path) -> Result<(), AgentError> {
    let mut missing: Vec<PathBuf> = Vec::new();
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == work {
            break;
        }
        if tokio::fs::symlink_metadata(d).await.is_ok() {
            // The deepest existing folder must really be inside: it may be a planted link.
            let real = tokio::fs::canonicalize(d)
                .await
                .map_err(|e| runtime(format_args!("cannot resolve {}", d.display()), e))?;
            if !real.starts_with(work) {
                return Err(AgentError::BadRequest(format!(
                    "{} leads outside /home/work",
                    d.strip_prefix(work).unwrap_or(d).display()
                )));
            }
            break;
        }
        missing.push(d.to_path_buf());
        dir = d.parent();
    }
    for d in missing.iter().rev() {
        match tokio::fs::create_dir(d).await {
            Ok(()) => super::hand_to_work_user(d)?,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(runtime(format_args!("cannot create {}", d.display()), e)),
        }
    }
    Ok(())
}

/// Refuses a target whose directory resolves outside `real_work` or that is itself a link.
async fn check_target(real_work: &Path, path: &Path, rel: &str) -> Result<(), AgentError> {
    if let Some(parent) = path.parent() {
        let real_parent = tokio::fs::canonicalize(parent)
            .await
            .map_err(|e| runtime(format_args!("cannot resolve the folder of {rel:?}"), e))?;
        if !real_parent.starts_with(real_work) {
            return Err(AgentError::BadRequest(format!(
                "{rel:?} leads outside /home/work"
            )));
        }
    }
    if let Ok(meta) = tokio::fs::symlink_metadata(path).await {
        if meta.file_type().is_symlink() {
            return Err(AgentError::BadRequest(format!(
                "{rel:?} is a symbolic link"
            )));
        }
        if meta.is_dir() {
            return Err(AgentError::BadRequest(format!("{rel:?} is a folder")));
        }
    }
    Ok(())
}

/// Writes `files` (paths relative to /home/work) under `work`, the host side of kernel
/// `kernel_id`'s scratch home, every path checked before anything is written.
pub async fn into_work(
    work: &Path,
    kernel_id: Uuid,
    files: Vec<(String, bytes::Bytes)>,
) -> Result<(), AgentError> {
    let real_work = match tokio::fs::canonicalize(work).await {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(AgentError::KernelNotFound(kernel_id));
        }
        Err(e) => return Err(runtime(format_args!("cannot use {}", work.display()), e)),
    };
    // Validate every path before writing anything.
    let targets = files
        .into_iter()
        .map(|(rel, data)| {
            confined_join(&real_work, &rel)
                .map(|p| (rel, p, data))
                .map_err(AgentError::BadRequest)
        })
        .collect::<Result<Vec<_>, _>>()?;
    for (rel, path, data) in targets {
        make_parents(&real_work, &path).await?;
        check_target(&real_work, &path, &rel).await?;
        tokio::fs::write(&path, &data)
            .await
            .map_err(|e| runtime(format_args!("cannot write {rel:?}"), e))?;
        super::hand_to_work_user(&path)?;
        tracing::debug!(kernel = %kernel_id, file = %rel, bytes = data.len(), "uploaded");
    }
    Ok(())
}

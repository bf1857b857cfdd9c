//! Code execution, apps, listings and downloads on the Docker backend: the kernel's runner reached over
//! its socket ([`crate::runner`], shared with the Kubernetes backend).

use super::Inner;
use crate::krunner_proto::request_line;
use crate::runner;
use bai_core::agent::{AgentError, ExecEvent, ExecRequest, FileEntry};
use futures::stream::BoxStream;
use std::path::PathBuf;
use uuid::Uuid;

/// The kernel's runner socket, when the kernel is this agent's.
fn socket(inner: &Inner, kernel_id: Uuid) -> Result<PathBuf, AgentError> {
    let dirs = inner.dirs(kernel_id);
    if !dirs.root.exists() {
        return Err(AgentError::KernelNotFound(kernel_id));
    }
    Ok(dirs.socket)
}

pub async fn execute(
    inner: &Inner,
    kernel_id: Uuid,
    req: ExecRequest,
) -> Result<BoxStream<'static, ExecEvent>, AgentError> {
    runner::request(&socket(inner, kernel_id)?, kernel_id, request_line(&req)?).await
}

/// Asks krunner to send SIGTERM to the kernel's other processes (a preemption's grace).
pub async fn terminate(inner: &Inner, kernel_id: Uuid) -> Result<(), AgentError> {
    runner::terminate(&socket(inner, kernel_id)?, kernel_id).await
}

/// Asks krunner to start an app and waits until it is ready (or refused).
pub async fn start_app(inner: &Inner, kernel_id: Uuid, name: &str) -> Result<(), AgentError> {
    runner::start_app(&socket(inner, kernel_id)?, kernel_id, name).await
}

/// Asks krunner for one directory's entries.
pub async fn list_files(
    inner: &Inner,
    kernel_id: Uuid,
    path: &str,
) -> Result<Vec<FileEntry>, AgentError> {
    runner::list_files(&socket(inner, kernel_id)?, kernel_id, path).await
}

/// Asks krunner for each path (relative to /home/work) as a tar archive, read as the kernel's
/// user: files in mounted folders are included and no link leads to the host.
pub async fn download(
    inner: &Inner,
    kernel_id: Uuid,
    paths: Vec<String>,
) -> Result<Vec<(String, bytes::Bytes)>, AgentError> {
    runner::download_all(&socket(inner, kernel_id)?, kernel_id, paths).await
}

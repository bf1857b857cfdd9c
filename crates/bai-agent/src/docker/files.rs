//! Uploading files into a kernel's /home/work on the Docker backend: written into its home
//! directory on this node ([`crate::kernel_files::upload`], shared with the Kubernetes
//! backend's hostPath homes). Downloads are read by the kernel's runner
//! ([`super::exec::download`]).

use super::Inner;
use bai_core::agent::AgentError;
use uuid::Uuid;

pub async fn upload(
    inner: &Inner,
    kernel_id: Uuid,
    files: Vec<(String, bytes::Bytes)>,
) -> Result<(), AgentError> {
    crate::kernel_files::upload::into_work(&inner.dirs(kernel_id).work, kernel_id, files).await
}

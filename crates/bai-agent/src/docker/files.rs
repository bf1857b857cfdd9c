//! Downloading files from a kernel's /home/work on the Docker backend (uploads are
//! [`crate::upload`], shared with the Kubernetes backend).

use super::Inner;
use crate::error::runtime;
use bai_core::agent::AgentError;
use uuid::Uuid;

pub async fn upload(
    inner: &Inner,
    kernel_id: Uuid,
    files: Vec<(String, bytes::Bytes)>,
) -> Result<(), AgentError> {
    crate::kernel_files::upload::into_work(&inner.dirs(kernel_id).work, kernel_id, files).await
}

/// Most bytes one download may hold (archives are built in memory); bigger files travel
/// through data folders or SFTP.
const DOWNLOAD_LIMIT: usize = 256 << 20;

/// Each path (relative to /home/work) as one tar archive, read by the engine inside the
/// container, so files in mounted folders are included and links cannot lead to the host.
pub async fn download(
    inner: &Inner,
    kernel_id: Uuid,
    paths: Vec<String>,
) -> Result<Vec<(String, bytes::Bytes)>, AgentError> {
    use futures::StreamExt;
    let name = Inner::container_name(kernel_id);
    let mut out = Vec::new();
    let mut total = 0usize;
    for rel in paths {
        let opts = bollard::query_parameters::DownloadFromContainerOptions {
            path: format!("/home/work/{rel}"),
        };
        let mut stream = inner.docker.download_from_container(&name, Some(opts));
        let mut buf: Vec<u8> = Vec::new();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| {
                if crate::error::is_not_found(&e) {
                    AgentError::BadRequest(format!("{rel}: no such file in the session"))
                } else {
                    runtime(format_args!("cannot read {rel} from {name}"), e)
                }
            })?;
            total += chunk.len();
            if total > DOWNLOAD_LIMIT {
                return Err(AgentError::BadRequest(format!(
                    "the files are larger than {} MiB; copy them into a data folder or use SFTP",
                    DOWNLOAD_LIMIT >> 20
                )));
            }
            buf.extend_from_slice(&chunk);
        }
        out.push((rel, bytes::Bytes::from(buf)));
    }
    Ok(out)
}

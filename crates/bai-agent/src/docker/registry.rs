//! Images travel through the cluster's registry: an agent that lacks an image pulls
//! `<registry>/<reference>` and keeps it under `<reference>` (the name every agent and the
//! catalogue use); pushing tags `<registry>/<reference>` for as long as the push takes.

use super::Inner;
use super::commit::{image_info, remove, tag};
use crate::error::runtime;
use bai_core::agent::{AgentError, ImageInfo};
use bollard::query_parameters::{CreateImageOptions, PushImageOptions};
use futures::StreamExt;
use std::time::Duration;

/// A pull or push of a large image can take long; the engine client's default is 2 minutes.
const TRANSFER_TIMEOUT: Duration = Duration::from_secs(3600);

fn registry(inner: &Inner) -> Result<&str, AgentError> {
    inner.config.registry.as_deref().ok_or_else(|| {
        AgentError::BadRequest("this agent has no image registry (baid --registry)".into())
    })
}

fn split(reference: &str) -> (&str, &str) {
    let slash = reference.rfind('/').map(|i| i + 1).unwrap_or(0);
    match reference[slash..].rfind(':') {
        Some(i) => (&reference[..slash + i], &reference[slash + i + 1..]),
        None => (reference, "latest"),
    }
}

pub async fn pull(inner: &Inner, reference: &str) -> Result<ImageInfo, AgentError> {
    let reg = registry(inner)?;
    let (repo, t) = split(reference);
    let remote = format!("{reg}/{repo}");
    let docker = inner.docker.clone().with_timeout(TRANSFER_TIMEOUT);
    let opts = CreateImageOptions {
        from_image: Some(remote.clone()),
        tag: Some(t.to_string()),
        ..Default::default()
    };
    let mut stream = docker.create_image(Some(opts), None, None);
    let mut last = std::time::Instant::now();
    while let Some(item) = stream.next().await {
        let info = item.map_err(|e| {
            if crate::error::is_not_found(&e) {
                AgentError::ImageNotFound(reference.to_string())
            } else {
                runtime(format!("cannot pull {remote}:{t}"), e)
            }
        })?;
        if let Some(err) = info.error_detail.and_then(|d| d.message) {
            return Err(runtime(format!("cannot pull {remote}:{t}"), err));
        }
        if last.elapsed() > Duration::from_secs(2) {
            last = std::time::Instant::now();
            tracing::info!(image = %reference, status = info.status.as_deref().unwrap_or(""), "pulling");
        }
    }
    let pulled = format!("{remote}:{t}");
    tag(inner, &pulled, reference).await?;
    remove(inner, &pulled).await?;
    tracing::info!(image = %reference, registry = %reg, "pulled");
    image_info(inner, reference).await
}

pub async fn push(inner: &Inner, reference: &str) -> Result<(), AgentError> {
    let reg = registry(inner)?;
    let (repo, t) = split(reference);
    let remote = format!("{reg}/{repo}:{t}");
    tag(inner, reference, &remote).await?;
    let docker = inner.docker.clone().with_timeout(TRANSFER_TIMEOUT);
    let opts = PushImageOptions {
        tag: Some(t.to_string()),
        ..Default::default()
    };
    let mut stream = docker.push_image(&format!("{reg}/{repo}"), Some(opts), None);
    let mut result = Ok(());
    while let Some(item) = stream.next().await {
        match item {
            Ok(info) => {
                if let Some(err) = info.error_detail.and_then(|d| d.message) {
                    result = Err(runtime(format!("cannot push {remote}"), err));
                    break;
                }
            }
            Err(e) => {
                result = Err(runtime(format!("cannot push {remote}"), e));
                break;
            }
        }
    }
    remove(inner, &remote).await?;
    result
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn references_keep_their_path() {
        assert_eq!(split("bai/python:3.11"), ("bai/python", "3.11"));
        assert_eq!(split("bai/python"), ("bai/python", "latest"));
    }
}

//! Images travel through the cluster's registry: an agent that lacks an image pulls
//! `<registry>/<reference>` and keeps it under `<reference>` (the name every agent and the
//! catalogue use); pushing tags `<registry>/<reference>` for as long as the push takes.

use super::Engine;
use super::commit::{image_info, remove, tag};
use crate::error::runtime;
use bai_core::agent::{AgentError, ImageInfo};
use bollard::query_parameters::{CreateImageOptions, PushImageOptions};
use futures::StreamExt;
use std::time::Duration;

/// A pull or push of a large image can take long; the engine client's default is 2 minutes.
const TRANSFER_TIMEOUT: Duration = Duration::from_secs(3600);

fn registry(engine: &Engine) -> Result<&str, AgentError> {
    engine.registry.as_deref().ok_or_else(|| {
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

pub async fn pull(engine: &Engine, reference: &str) -> Result<ImageInfo, AgentError> {
    let reg = registry(engine)?;
    let (repo, t) = split(reference);
    let remote = format!("{reg}/{repo}");
    let docker = engine.docker.clone().with_timeout(TRANSFER_TIMEOUT);
    let opts = CreateImageOptions {
        from_image: Some(remote.clone()),
        tag: Some(t.to_string()),
        ..Default::default()
    };
    let mut stream = docker.create_image(Some(opts), None, None);
    let mut last = std::time::Instant::now();
    // Bytes per layer: (downloaded, size), as the engine reports them.
    let mut layers: std::collections::HashMap<String, (u64, u64)> = Default::default();
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
        if let Some(id) = info.id.clone() {
            let d = info.progress_detail.as_ref();
            let at = |v: Option<i64>| v.and_then(|v| u64::try_from(v).ok());
            let e = layers.entry(id).or_insert((0, 0));
            match info.status.as_deref() {
                Some("Downloading") => {
                    if let Some(t) = at(d.and_then(|d| d.total)) {
                        e.1 = t;
                    }
                    e.0 = at(d.and_then(|d| d.current)).unwrap_or(e.0);
                }
                Some("Download complete" | "Pull complete" | "Already exists") => e.0 = e.1,
                _ => {}
            }
        }
        if last.elapsed() >= Duration::from_secs(1) {
            last = std::time::Instant::now();
            progress(engine, reference, &layers);
        }
    }
    progress(engine, reference, &layers);
    let pulled = format!("{remote}:{t}");
    tag(engine, &pulled, reference).await?;
    remove(engine, &pulled).await?;
    tracing::info!(image = %reference, registry = %reg, "pulled");
    image_info(engine, reference).await
}

fn progress(
    engine: &Engine,
    reference: &str,
    layers: &std::collections::HashMap<String, (u64, u64)>,
) {
    let (current, total) = layers
        .values()
        .fold((0, 0), |(c, t), (lc, lt)| (c + lc, t + lt));
    tracing::info!(image = %reference, current, total, "pulling");
    engine.report(bai_core::agent::AgentEvent::ImagePull {
        image: reference.to_string(),
        current,
        total,
    });
}

pub async fn push(engine: &Engine, reference: &str) -> Result<(), AgentError> {
    let reg = registry(engine)?;
    let (repo, t) = split(reference);
    let remote = format!("{reg}/{repo}:{t}");
    tag(engine, reference, &remote).await?;
    let docker = engine.docker.clone().with_timeout(TRANSFER_TIMEOUT);
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
    remove(engine, &remote).await?;
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

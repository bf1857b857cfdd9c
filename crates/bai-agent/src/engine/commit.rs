//! Committing a kernel's container as an image: the container's writable layer on top of its
//! base image, with the base image's own config (never the container's: its environment holds
//! the kernel's id and keys, its labels the agent's bookkeeping; the engine's commit merges
//! them in, so the image is given its configuration again afterwards: [`super::reconfig`]).
//! Mounts (`/home/work`, data folders, krunner) are not part of a container's layer, so they
//! never reach the image.

use super::{Engine, reconfig};
use crate::error::{is_not_found, runtime};
use crate::owned;
use bai_core::agent::{AgentError, CommitRequest, ImageInfo};
use bollard::models::ContainerConfig;
use bollard::query_parameters::{CommitContainerOptions, RemoveImageOptions};
use futures::StreamExt;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Component, Path};
use std::time::Duration;

/// A commit of a large layer can take long; the engine's default client timeout is 2 minutes.
const COMMIT_TIMEOUT: Duration = Duration::from_secs(3600);

/// Commits `container` (the kernel `req.kernel_id`'s, by name or id) as `req.reference`.
pub async fn commit(
    engine: &Engine,
    container: &str,
    req: CommitRequest,
) -> Result<ImageInfo, AgentError> {
    let (repo, tag) = split_reference(&req.reference)?;
    let container = container.to_string();
    let docker = engine.docker.clone().with_timeout(COMMIT_TIMEOUT);
    // The container must be this agent's kernel.
    docker
        .inspect_container(&container, None)
        .await
        .map_err(|e| {
            if is_not_found(&e) {
                AgentError::KernelNotFound(req.kernel_id)
            } else {
                runtime("cannot inspect the kernel's container", e)
            }
        })?;
    let base = docker.inspect_image(&req.base_image).await.map_err(|e| {
        if is_not_found(&e) {
            AgentError::ImageNotFound(req.base_image.clone())
        } else {
            runtime("cannot inspect the base image", e)
        }
    })?;
    // The base image's own configuration, none of the agent's variables or labels (an image
    // committed by an older build may carry its kernel's), with the customized image's labels.
    let mut bc = base.config.unwrap_or_default();
    bc.env = bc.env.map(owned::strip_env);
    let mut labels = owned::strip_labels(bc.labels.take().unwrap_or_default());
    labels.extend(req.labels.clone());
    bc.labels = Some(labels);
    let config = ContainerConfig {
        user: bc.user.clone(),
        exposed_ports: bc.exposed_ports.clone(),
        env: bc.env.clone(),
        cmd: bc.cmd.clone(),
        working_dir: bc.working_dir.clone(),
        entrypoint: bc.entrypoint.clone(),
        labels: bc.labels.clone(),
        stop_signal: bc.stop_signal.clone(),
        shell: bc.shell.clone(),
        ..Default::default()
    };
    let opts = CommitContainerOptions {
        container: Some(container),
        repo: Some(repo.to_string()),
        tag: Some(tag.to_string()),
        comment: Some(format!("bai: committed from kernel {}", req.kernel_id)),
        pause: true,
        ..Default::default()
    };
    docker
        .commit_container(opts, config)
        .await
        .map_err(|e| runtime("cannot commit the kernel's container", e))?;
    // The engine merged the container's runtime configuration into the image: it is made
    // again with the configuration above alone.
    if let Err(e) = reconfig::replace(engine, &req.reference, &bc).await {
        remove(engine, &req.reference).await?;
        return Err(e);
    }
    let info = image_info(engine, &req.reference).await?;
    if let Some(rel) = &req.tarball {
        let saved = save_tarball(engine, &req.reference, rel).await;
        // The tarball is the result: the image itself does not stay.
        remove(engine, &req.reference).await?;
        saved?;
    }
    Ok(info)
}

/// The image as the agent reports images (its first tag, id, labels, size).
pub async fn image_info(engine: &Engine, reference: &str) -> Result<ImageInfo, AgentError> {
    let img = engine.docker.inspect_image(reference).await.map_err(|e| {
        if is_not_found(&e) {
            AgentError::ImageNotFound(reference.to_string())
        } else {
            runtime("cannot inspect the image", e)
        }
    })?;
    Ok(ImageInfo {
        name: reference.to_string(),
        digest: img.id.unwrap_or_default(),
        labels: img
            .config
            .and_then(|c| c.labels)
            .unwrap_or_default()
            .into_iter()
            .collect::<BTreeMap<_, _>>(),
        size_bytes: img.size.and_then(|s| u64::try_from(s).ok()).unwrap_or(0),
    })
}

/// Removes an image (its tag; the layers go when nothing else uses them).
pub async fn remove(engine: &Engine, reference: &str) -> Result<(), AgentError> {
    let opts = RemoveImageOptions {
        force: false,
        noprune: false,
        ..Default::default()
    };
    match engine
        .docker
        .remove_image(reference, Some(opts), None)
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if is_not_found(&e) => Ok(()),
        Err(e) => Err(runtime(format!("cannot remove image {reference}"), e)),
    }
}

/// Gives `source` the reference `target` too.
pub async fn tag(engine: &Engine, source: &str, target: &str) -> Result<(), AgentError> {
    let (repo, tag) = split_reference(target)?;
    let opts = bollard::query_parameters::TagImageOptions {
        repo: Some(repo.to_string()),
        tag: Some(tag.to_string()),
    };
    engine
        .docker
        .tag_image(source, Some(opts))
        .await
        .map_err(|e| {
            if is_not_found(&e) {
                AgentError::ImageNotFound(source.to_string())
            } else {
                runtime(format!("cannot tag {source} as {target}"), e)
            }
        })
}

fn split_reference(reference: &str) -> Result<(&str, &str), AgentError> {
    let slash = reference.rfind('/').map(|i| i + 1).unwrap_or(0);
    match reference[slash..].rfind(':') {
        Some(i) if i > 0 && slash + i + 1 < reference.len() => {
            Ok((&reference[..slash + i], &reference[slash + i + 1..]))
        }
        _ => Err(AgentError::BadRequest(format!(
            "image reference {reference:?} needs a repository and a tag"
        ))),
    }
}

/// `docker save` of the image, gzip'ed, at `commit_dir/rel` (a relative path without `..`).
async fn save_tarball(engine: &Engine, reference: &str, rel: &str) -> Result<(), AgentError> {
    let relp = Path::new(rel);
    if relp
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(AgentError::BadRequest(format!(
            "tarball path {rel:?} must be relative, without `..`"
        )));
    }
    let path = engine.data_dir.join("commit").join(relp);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| runtime("cannot make the commit directory", e))?;
    }
    let partial = path.with_extension("partial");
    let file = std::fs::File::create(&partial)
        .map_err(|e| runtime("cannot create the commit tarball", e))?;
    // The engine's stream is read here; compressing and writing happen on a blocking thread.
    let (tx, mut rx) = tokio::sync::mpsc::channel::<bytes::Bytes>(16);
    let writer = tokio::task::spawn_blocking(move || -> std::io::Result<()> {
        let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
        while let Some(chunk) = rx.blocking_recv() {
            gz.write_all(&chunk)?;
        }
        gz.try_finish()?;
        gz.get_ref().sync_all()
    });
    let docker = engine.docker.clone().with_timeout(COMMIT_TIMEOUT);
    let mut stream = docker.export_image(reference);
    let mut read: Result<(), AgentError> = Ok(());
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(c) => {
                if tx.send(c).await.is_err() {
                    break;
                }
            }
            Err(e) => {
                read = Err(runtime("cannot read the saved image", e));
                break;
            }
        }
    }
    drop(tx);
    let wrote = match writer.await {
        Ok(r) => r.map_err(|e| runtime("cannot write the commit tarball", e)),
        Err(e) => Err(runtime("the tarball writer stopped", e)),
    };
    match read.and(wrote) {
        Ok(()) => std::fs::rename(&partial, &path)
            .map_err(|e| runtime("cannot move the commit tarball into place", e)),
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::split_reference;

    #[test]
    fn references_split_at_the_tags_colon_not_a_registry_port() {
        assert_eq!(
            split_reference("bai/python:3.11-customized_ab").ok(),
            Some(("bai/python", "3.11-customized_ab"))
        );
        assert_eq!(
            split_reference("127.0.0.1:5000/bai/python:3.11").ok(),
            Some(("127.0.0.1:5000/bai/python", "3.11"))
        );
        assert!(split_reference("127.0.0.1:5000/bai/python").is_err());
        assert!(split_reference("python:").is_err());
    }
}

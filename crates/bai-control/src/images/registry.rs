//! What the cluster's image registry holds, read with the registry's HTTP API
//! (`/v2/_catalog`, `/v2/<name>/tags/list`) when the manager starts, every 15 seconds, and
//! after bai pushed to it. Its kernel images are in the catalogue and may be launched on any
//! agent that has a registry: one that lacks the image pulls it (status PULLING).

use super::ctx::Images;
use axum::body::Body;
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

const REFRESH: Duration = Duration::from_secs(15);

async fn get_json(addr: &str, path: &str) -> Result<serde_json::Value, String> {
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| format!("cannot reach the registry at {addr}: {e}"))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("registry {addr}: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let req = axum::http::Request::get(path)
        .header(axum::http::header::HOST, addr)
        .body(Body::empty())
        .map_err(|e| e.to_string())?;
    let resp = sender
        .send_request(req)
        .await
        .map_err(|e| format!("registry {addr}{path}: {e}"))?;
    let status = resp.status();
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("registry {addr}{path}: {e}"))?
        .to_bytes();
    if !status.is_success() {
        return Err(format!("registry {addr}{path} answered {status}"));
    }
    serde_json::from_slice(&body).map_err(|e| format!("registry {addr}{path}: {e}"))
}

/// Every `name:tag` the registry at `addr` holds.
pub async fn read(addr: &str) -> Result<BTreeSet<String>, String> {
    let cat = get_json(addr, "/v2/_catalog?n=1000").await?;
    let mut out = BTreeSet::new();
    for repo in cat["repositories"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str())
    {
        let tags = get_json(addr, &format!("/v2/{repo}/tags/list")).await?;
        for t in tags["tags"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str())
        {
            out.insert(format!("{repo}:{t}"));
        }
    }
    Ok(out)
}

/// Reads the registry again now (no registry: nothing).
pub async fn refresh(images: &Images) {
    let Some(addr) = images.config.registry.clone() else {
        return;
    };
    match read(&addr).await {
        Ok(refs) => {
            let names: Vec<&str> = refs
                .iter()
                .map(String::as_str)
                .filter(|r| !super::reference::is_customized(r))
                .collect();
            if let Err(e) = crate::images::aliases::register_names(&images.store, names) {
                tracing::warn!(error = %e, "cannot register the registry's image aliases");
            }
            images.registry.set(refs);
        }
        Err(e) => tracing::warn!(registry = %addr, error = %e, "cannot read the image registry"),
    }
}

/// Pushes the kernel images of the manager's own agents that the registry lacks (images
/// made from sessions stay private to their agent), in the background, so other nodes can
/// pull them.
pub fn publish_local(images: &Arc<Images>) {
    if images.config.registry.is_none() {
        return;
    }
    let images = images.clone();
    tokio::spawn(async move {
        for a in images
            .agents
            .all()
            .into_iter()
            .filter(|a| a.remote.is_none())
        {
            let info = a.info();
            if info.registry.is_none() {
                continue;
            }
            for img in info.images {
                if img.labels.contains_key(super::LABEL_OWNER) || images.registry.holds(&img.name) {
                    continue;
                }
                tracing::info!(image = %img.name, "pushing a kernel image to the registry");
                match a.rpc.push_image(img.name.clone()).await {
                    Ok(()) => tracing::info!(image = %img.name, "pushed to the registry"),
                    Err(e) => {
                        tracing::warn!(image = %img.name, error = %e, "cannot push to the registry")
                    }
                }
            }
        }
        refresh(&images).await;
    });
}

/// Keeps the view current while the manager runs.
pub fn spawn_refresher(images: &Arc<Images>) {
    if images.config.registry.is_none() {
        return;
    }
    let images = images.clone();
    tokio::spawn(async move {
        // The manager's start has just read it.
        loop {
            tokio::time::sleep(REFRESH).await;
            refresh(&images).await;
        }
    });
}

//! What this agent has: its kernels (containers by label, directories on disk) and the
//! kernel images of the engine.

use super::{Inner, LABEL_AGENT, LABEL_KERNEL, egress, netpool, pool};
use crate::error::runtime;
use bai_core::agent::{AgentError, ImageInfo};
use bollard::models::{ContainerSummary, ContainerSummaryStateEnum};
use bollard::query_parameters::ListContainersOptions;
use std::collections::HashMap;
use uuid::Uuid;

/// Kernel ids of this agent's containers, in any state.
pub async fn kernels(inner: &Inner) -> Result<Vec<Uuid>, AgentError> {
    Ok(containers(inner)
        .await?
        .into_iter()
        .map(|c| c.kernel)
        .collect())
}

/// One of this agent's kernel containers as the engine lists it.
pub struct Listed {
    pub kernel: Uuid,
    pub labels: HashMap<String, String>,
    /// Created and never started: a creation cut off before its start.
    pub never_started: bool,
}

/// A kernel's network and egress label, from its container's labels: a cluster session's
/// own network, else the shared one of its policy.
pub fn kernel_network(labels: &HashMap<String, String>) -> (String, Option<String>) {
    let label = labels.get(egress::LABEL_EGRESS).cloned();
    let network = match crate::owned::label(labels, netpool::LABEL_NETWORK) {
        Some(n) => n.to_string(),
        None => {
            let spec = label
                .as_deref()
                .and_then(|l| serde_json::from_str::<bai_core::egress::EgressSpec>(l).ok())
                .unwrap_or_default();
            egress::shared_network(&spec.policy)
        }
    };
    (network, label)
}

/// A container's kernel: its label's, but for a pool kernel the one in its name (a claim
/// renames it `bai-k-<kernel>`; labels cannot change). An unclaimed pool kernel is none.
fn kernel_of(labels: &HashMap<String, String>, names: &[String]) -> Option<Uuid> {
    if crate::owned::label(labels, pool::LABEL_POOL).is_some() {
        return names.iter().find_map(|n| {
            let id = n.trim_start_matches('/').strip_prefix("bai-k-")?;
            Uuid::parse_str(id).ok()
        });
    }
    labels
        .get(LABEL_KERNEL)
        .and_then(|k| Uuid::parse_str(k).ok())
}

/// The ids of this agent's unclaimed pool kernels, in any state.
pub async fn pool_containers(inner: &Inner) -> Result<Vec<Uuid>, AgentError> {
    Ok(summaries(inner)
        .await?
        .into_iter()
        .filter_map(|c| {
            let name = c.names?.into_iter().find_map(|n| {
                let id = n.trim_start_matches('/').strip_prefix(pool::NAME_PREFIX)?;
                Uuid::parse_str(id).ok()
            });
            name.filter(|_| {
                c.labels
                    .is_some_and(|l| crate::owned::label(&l, pool::LABEL_POOL).is_some())
            })
        })
        .collect())
}

/// This agent's containers, in any state.
pub async fn containers(inner: &Inner) -> Result<Vec<Listed>, AgentError> {
    Ok(summaries(inner)
        .await?
        .into_iter()
        .filter_map(|c| {
            let labels = c.labels?;
            let kernel = kernel_of(&labels, c.names.as_deref().unwrap_or_default())?;
            Some(Listed {
                kernel,
                labels,
                never_started: c.state == Some(ContainerSummaryStateEnum::CREATED),
            })
        })
        .collect())
}

async fn summaries(inner: &Inner) -> Result<Vec<ContainerSummary>, AgentError> {
    let mut filters = HashMap::new();
    filters.insert(
        "label".to_string(),
        vec![format!("{LABEL_AGENT}={}", inner.config.agent_id)],
    );
    let opts = ListContainersOptions {
        all: true,
        filters: Some(filters),
        ..Default::default()
    };
    inner
        .docker
        .list_containers(Some(opts))
        .await
        .map_err(|e| runtime("cannot list containers", e))
}

/// Kernel ids that have a directory under `data_dir/kernels`.
pub async fn kernel_dirs(inner: &Inner) -> Vec<Uuid> {
    let dir = inner.config.data_dir.join("kernels");
    let mut out = Vec::new();
    let Ok(mut rd) = tokio::fs::read_dir(&dir).await else {
        return out;
    };
    while let Ok(Some(entry)) = rd.next_entry().await {
        if let Some(id) = entry
            .file_name()
            .to_str()
            .and_then(|n| Uuid::parse_str(n).ok())
        {
            out.push(id);
        }
    }
    out
}

/// How often the agent reads its engine's image list for changes made outside bai.
pub const IMAGE_SCAN: std::time::Duration = std::time::Duration::from_secs(30);

/// What tells two image lists apart (name and id of each).
fn image_keys(list: &[ImageInfo]) -> Vec<(String, String)> {
    let mut k: Vec<_> = list
        .iter()
        .map(|i| (i.name.clone(), i.digest.clone()))
        .collect();
    k.sort();
    k
}

/// Reads the engine's images every [`IMAGE_SCAN`] and reports a changed list as
/// `AgentEvent::ImagesChanged`, for as long as the agent lives. `seen` is the list it starts
/// from.
pub fn watch_images(inner: &std::sync::Arc<Inner>, seen: &[ImageInfo]) {
    let weak = std::sync::Arc::downgrade(inner);
    let mut last = image_keys(seen);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(IMAGE_SCAN).await;
            let Some(inner) = weak.upgrade() else { return };
            let Ok(now) = crate::engine::list::images(&inner.engine).await else {
                continue;
            };
            let keys = image_keys(&now);
            if keys != last {
                tracing::info!(images = now.len(), "the engine's kernel images changed");
                let _ = inner
                    .events
                    .send(bai_core::agent::AgentEvent::ImagesChanged { images: now });
                last = keys;
            }
        }
    });
}

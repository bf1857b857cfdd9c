//! What this agent offers now, read from the API server, and kept current while the agent
//! runs: the node is watched (cordoned, NotReady, gone, its images) and so are the pods
//! on it that are not this agent's kernels (another tenant's pods, or another bai agent's,
//! take room; their ends give it back).
//! A change is reported as [`AgentEvent::OfferChanged`] (and a changed image list as
//! [`AgentEvent::ImagesChanged`]), so the manager's scheduler never places by an offer
//! the node no longer has. A cordoned, NotReady or gone node keeps its size (a session
//! that fits it waits for it, and is not refused as too large) but offers nothing: its
//! offer is withheld, with the reason.
//!
//! Each change re-reads the whole offer (one `get` of the node, one `list` of its pods),
//! so no event can be applied twice or missed; a watch that breaks is opened again from
//! a fresh read.

use super::error::{KubeError, is_forbidden};
use super::gpus::GpuSharing;
use super::{Inner, capacity, client, labels};
use bai_core::agent::{AgentEvent, ImageInfo};
use bai_core::resources::ResourceSlots;
use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::Api;
use kube::api::{ListParams, WatchEvent, WatchParams};
use std::sync::Arc;
use std::time::Duration;

/// Pause before reading again after the API server failed us.
const RETRY: Duration = Duration::from_secs(2);
/// A watch is renewed this often (the server ends it anyway).
const WATCH_SECS: u32 = 290;
/// Events that come within this of each other are taken in one read.
const SETTLE: Duration = Duration::from_millis(300);
/// When the agent may not watch (its role lacks `watch`), it reads this often instead.
const POLL: Duration = Duration::from_secs(10);

/// The node's offer at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct Offer {
    /// What is left for this agent's kernels: the node's allocatable less others' pods.
    pub capacity: ResourceSlots,
    /// The node's whole allocatable (others' pods may hold part of it for now).
    pub size: ResourceSlots,
    pub images: Vec<ImageInfo>,
    /// The node's architecture as Kubernetes names it (None: the node is gone).
    pub arch: Option<String>,
    /// Why nothing is offered (the node is cordoned, NotReady or gone).
    pub withheld: Option<String>,
    /// The node is NotReady or gone: its kernels cannot be reached (a cordoned node's can).
    pub unreachable: bool,
    /// How the node time-slices its GPUs, if it does.
    pub sharing: Option<super::gpus::GpuSharing>,
    /// Its time-sliced GPUs, as devices of `cuda.shares` (the step a request is checked
    /// against).
    pub devices: Vec<bai_core::accel::DeviceInfo>,
    gone: bool,
    /// Where watches start from: the node's and the pod list's resource versions.
    versions: (String, String),
}

/// The pods on `node` that are not kernels of `agent`, across namespaces.
fn others_on(node: &str, agent: &str) -> ListParams {
    ListParams::default()
        .fields(&format!("spec.nodeName={node}"))
        .labels(&labels::not_agents_selector(agent))
}

/// Reads the offer of the agent's node now.
pub async fn read(inner: &Inner) -> Result<Offer, KubeError> {
    let node = client::node(&inner.client, &inner.node).await?;
    let all: Api<Pod> = Api::all(inner.client.clone());
    let pods = all
        .list(&others_on(&inner.node, &inner.config.agent_id))
        .await
        .map_err(KubeError::api("cannot list the node's pods"))?;
    let pods_version = pods.metadata.resource_version.clone().unwrap_or_default();
    let mut offer = of(
        &inner.node,
        &inner.config.agent_id,
        node.as_ref(),
        &pods.items,
        pods_version,
    );
    if !offer.gone {
        offer.images = super::images::offered(inner, std::mem::take(&mut offer.images)).await;
        inner.set_gpu_sharing(offer.sharing.clone());
    }
    Ok(offer)
}

/// The offer of `node` (None: it is gone) to `agent` with these pods on it. Pure.
fn of(name: &str, agent: &str, node: Option<&Node>, pods: &[Pod], pods_version: String) -> Offer {
    let version = node
        .and_then(|n| n.metadata.resource_version.clone())
        .unwrap_or_default();
    let sharing = node.and_then(super::gpus::gpu_sharing);
    let withheld = match node {
        None => Some(format!("node {name} is gone")),
        Some(n) => capacity::unusable(n),
    };
    let (capacity, size, images) = match node {
        Some(n) => (
            capacity::offered(n, pods, agent),
            capacity::offered(n, &[], agent),
            capacity::images(n),
        ),
        None => (
            ResourceSlots::default(),
            ResourceSlots::default(),
            Vec::new(),
        ),
    };
    Offer {
        capacity,
        size,
        images,
        arch: node
            .and_then(|n| n.status.as_ref())
            .and_then(|s| s.node_info.as_ref())
            .map(|i| i.architecture.clone()),
        withheld,
        unreachable: node.is_none_or(|n| !capacity::is_ready(n)),
        devices: node
            .zip(sharing.as_ref())
            .map(|(n, s)| super::gpus::devices(n, s))
            .unwrap_or_default(),
        sharing,
        gone: node.is_none(),
        versions: (version, pods_version),
    }
}

/// What to report when the offer went from `before` to `now`. A node that went keeps the
/// size it had and its images, for when it comes back.
fn changes(before: &Offer, now: &Offer) -> Vec<AgentEvent> {
    let mut out = Vec::new();
    let (capacity, size) = if now.gone {
        (&before.capacity, &before.size)
    } else {
        (&now.capacity, &now.size)
    };
    // A node that went keeps how it shared its GPUs too.
    let sharing = if now.gone {
        &before.sharing
    } else {
        &now.sharing
    };
    let most = |s: &Option<GpuSharing>| s.as_ref().map(GpuSharing::kernel_most).unwrap_or_default();
    let (kernel_most, most_before) = (most(sharing), most(&before.sharing));
    if *capacity != before.capacity
        || *size != before.size
        || now.withheld != before.withheld
        || now.unreachable != before.unreachable
        || kernel_most != most_before
    {
        out.push(AgentEvent::OfferChanged {
            capacity: capacity.clone(),
            size: Some(size.clone()),
            withheld: now.withheld.clone(),
            kernels_unreachable: now.unreachable,
            kernel_most,
        });
    }
    if before.images != now.images && !now.gone {
        out.push(AgentEvent::ImagesChanged {
            images: now.images.clone(),
        });
    }
    out
}

/// Starts keeping the offer current from `first` (what the agent read when it started);
/// it runs until the handle is aborted.
pub fn spawn(inner: &Arc<Inner>, first: Offer) -> tokio::task::AbortHandle {
    let inner = inner.clone();
    tokio::spawn(async move {
        let mut last = first;
        let mut may_watch = true;
        loop {
            if may_watch {
                match next_change(&inner, &last.versions).await {
                    Ok(()) => {}
                    Err(e) if is_forbidden(&e) => {
                        tracing::warn!(error = %e, every = ?POLL,
                            "this agent may not watch the node and its pods; reading them at intervals instead");
                        may_watch = false;
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, "the watch on the node broke; reading again");
                        tokio::time::sleep(RETRY).await;
                    }
                }
            } else {
                tokio::time::sleep(POLL).await;
            }
            tokio::time::sleep(SETTLE).await;
            let now = match read(&inner).await {
                Ok(o) => o,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the node's offer; keeping the last one");
                    tokio::time::sleep(RETRY).await;
                    continue;
                }
            };
            report(&inner, &last, &now);
            last = now;
        }
    })
    .abort_handle()
}

fn report(inner: &Inner, before: &Offer, now: &Offer) {
    for ev in changes(before, now) {
        if let AgentEvent::OfferChanged {
            capacity, withheld, ..
        } = &ev
        {
            tracing::info!(node = %inner.node, cpu_milli = capacity.cpu_milli,
                mem = capacity.mem, withheld = withheld.as_deref().unwrap_or(""),
                "the node's offer changed");
        }
        inner.events.send(ev);
    }
}

/// Waits until the node or one of the others' pods on it changes after `versions` (or a
/// watch ends: the caller reads again either way).
async fn next_change(inner: &Inner, versions: &(String, String)) -> Result<(), kube::Error> {
    let nodes: Api<Node> = Api::all(inner.client.clone());
    let pods: Api<Pod> = Api::all(inner.client.clone());
    let wp = WatchParams::default()
        .fields(&format!("metadata.name={}", inner.node))
        .timeout(WATCH_SECS);
    let node_events = nodes.watch(&wp, &versions.0).await?.boxed();
    let others = others_on(&inner.node, &inner.config.agent_id);
    let mut wp = WatchParams::default().timeout(WATCH_SECS);
    wp.field_selector = others.field_selector;
    wp.label_selector = others.label_selector;
    let pod_events = pods.watch(&wp, &versions.1).await?.boxed();
    // Any event but a bookmark may change the offer. The read that follows compares
    // offers, so a false alarm (a heartbeat in the node's status) costs one read and
    // reports nothing.
    let node_events = node_events.map(|e| e.map(|e| !matches!(e, WatchEvent::Bookmark(_))));
    let pod_events = pod_events.map(|e| e.map(|e| !matches!(e, WatchEvent::Bookmark(_))));
    let mut merged = futures::stream::select(node_events, pod_events);
    while let Some(ev) = merged.next().await {
        if ev? {
            return Ok(());
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "offer_tests.rs"]
mod tests;

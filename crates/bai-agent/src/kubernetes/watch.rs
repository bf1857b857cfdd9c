//! One watch over this agent's pods (by label) keeps what each kernel's pod says now; ends
//! seen there (the runner exited, OOMKilled, the kubelet rejected the pod, someone deleted
//! it) are reported as [`AgentEvent::KernelExited`] and cleaned up. The watch is listed
//! anew whenever it breaks, so an end missed meanwhile is seen in the new list. Every pod
//! of the agent's (a pool pod's too) also tells whether its image names the kernel's user
//! ([`super::accounts`]).

use super::observe::{Ended, Observed, observe};
use super::{Inner, labels, lifecycle};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, WatchEvent, WatchParams};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// Pause before listing again after the API server failed us.
const RETRY: Duration = Duration::from_secs(1);
/// A watch is renewed this often (the server ends it anyway).
const WATCH_SECS: u32 = 290;

/// Starts the watch; it runs until the handle is aborted.
pub fn spawn(inner: &Arc<Inner>) -> tokio::task::AbortHandle {
    let inner = inner.clone();
    let task = tokio::spawn(async move {
        loop {
            if let Err(e) = round(&inner).await {
                tracing::warn!(error = %e, "the watch on the kernels' pods broke; listing again");
                tokio::time::sleep(RETRY).await;
            }
        }
    });
    task.abort_handle()
}

/// Lists, then watches from the list's version until the stream ends.
async fn round(inner: &Arc<Inner>) -> Result<(), kube::Error> {
    let selector = labels::agent_selector(&inner.config.agent_id);
    let list = inner
        .pods
        .list(&ListParams::default().labels(&selector))
        .await?;
    let mut present = HashSet::new();
    for pod in &list.items {
        inner.accounts.learn(pod);
        if let Some(k) = labels::kernel_of(pod.metadata.labels.as_ref()) {
            present.insert(k);
            seen(inner, k, pod);
        }
    }
    // Kernels whose pods went while nobody watched.
    for k in inner.known_kernels() {
        if !present.contains(&k) {
            deleted(inner, k);
        }
    }
    inner.mark_listed();
    let version = list.metadata.resource_version.unwrap_or_default();
    let wp = WatchParams::default().labels(&selector).timeout(WATCH_SECS);
    let mut stream = inner.pods.watch(&wp, &version).await?.boxed();
    while let Some(ev) = stream.next().await {
        match ev? {
            WatchEvent::Added(p) | WatchEvent::Modified(p) => {
                // Before the kernel's state: what waits for the pod's report has learnt it.
                inner.accounts.learn(&p);
                if let Some(k) = labels::kernel_of(p.metadata.labels.as_ref()) {
                    seen(inner, k, &p);
                }
            }
            WatchEvent::Deleted(p) => {
                if let Some(k) = labels::kernel_of(p.metadata.labels.as_ref()) {
                    deleted(inner, k);
                }
            }
            WatchEvent::Bookmark(_) => {}
            // 410 Gone (the version is too old) and the like: list anew.
            WatchEvent::Error(s) => {
                tracing::debug!(code = s.code, reason = %s.reason, "the pod watch ended");
                return Ok(());
            }
        }
    }
    Ok(())
}

fn seen(inner: &Arc<Inner>, kernel: Uuid, pod: &Pod) {
    if let Some(name) = pod.metadata.name.as_deref() {
        inner.name_pod(kernel, name);
    }
    let observed = observe(pod);
    if let Observed::Ended(ended) = &observed {
        lifecycle::report_end(inner, kernel, ended.clone());
    }
    inner.set_state(kernel, observed);
}

fn deleted(inner: &Arc<Inner>, kernel: Uuid) {
    let ended = Ended {
        exit_code: None,
        oom_killed: false,
        reason: "the kernel's pod was deleted outside bai".into(),
    };
    if !inner.is_known(kernel) {
        return; // gone before: reported, or its creation failed and was cleaned up
    }
    lifecycle::report_end(inner, kernel, ended.clone());
    inner.set_state(kernel, Observed::Ended(ended));
}

//! Claiming a pool pod for a create: take a ready one of the kernel's shape (under the
//! pools' lock), then make it the session's. Everything that may fail is done before the
//! pod is relabelled, and undone on failure so the create goes cold; once relabelled the
//! pod is the kernel's, and a failure after fails the create as a cold one's would (its
//! clean-up removes the pod by its name).

use super::{LABEL_POOL, Ready, fits, make};
use crate::kernel_files::home;
use crate::kubernetes::labels::{ANNOTATION_SESSION_NAME, KernelLabels};
use crate::kubernetes::{Inner, KubeError, egress, pod, ready, secret};
use crate::runner::{self, RunnerAt};
use bai_core::agent::{AgentError, KernelCreated, KernelSpec};
use kube::api::{Patch, PatchParams};
use std::sync::Arc;

/// Takes a ready pool pod for `spec` and makes it the session's kernel. `None`: the create
/// goes the cold way (no pool of its shape, none ready, or the claim failed before the pod
/// was the kernel's; that pool pod is gone then).
pub async fn claim(
    inner: &Arc<Inner>,
    spec: &KernelSpec,
) -> Option<Result<KernelCreated, AgentError>> {
    let folders = inner.pool_folders.get().copied().unwrap_or(false);
    let shape = fits(spec, folders)?;
    let taken = {
        let mut pools = inner.pools();
        if !pools.targets.iter().any(|t| t.shape == shape) {
            return None;
        }
        let taken = pools.take(&shape);
        pools.asked(&shape, taken.is_some());
        taken
    };
    // Whatever happens now, the pool makes another.
    inner.pool_wake.notify_one();
    let r = taken?;
    let kernel = spec.kernel_id;
    match prepare(inner, spec, &r).await {
        Ok(uid) => {
            let bound = bind(inner, spec, &r, uid).await;
            let mut pools = inner.pools();
            match &bound {
                Ok(_) => {
                    pools.counters.hits += 1;
                    tracing::info!(kernel = %kernel, pool_pod = %r.id, image = %spec.image,
                        "kernel ready (from the pool)");
                }
                Err(_) => pools.counters.bind_failures += 1,
            }
            Some(bound)
        }
        Err(e) => {
            tracing::warn!(kernel = %kernel, pool_pod = %r.id, error = %e,
                "a pool pod could not be claimed; starting the kernel cold");
            undo(inner, spec, &r).await;
            let mut pools = inner.pools();
            pools.counters.bind_failures += 1;
            pools.counters.misses += 1;
            None
        }
    }
}

/// Renames the pool pod's directory to the kernel's, writes the owner's dotfiles, mounts its
/// data folders under the home on the node (the pod's home receives them) and makes
/// the kernel's NetworkPolicy (where enforced), owned by the pod (its uid, kept since it was
/// made), or, where the agent enforces policies itself, loads the session's rules in place
/// of the pool's. Returns that uid.
async fn prepare(inner: &Inner, spec: &KernelSpec, r: &Ready) -> Result<String, AgentError> {
    let kernel = spec.kernel_id;
    // A test build's claim can be made to fail here (`BAI_FAULT_POINT=agent:pool-bind`).
    if bai_fault::fails("agent:pool-bind") {
        return Err(AgentError::Runtime("fault point agent:pool-bind".into()));
    }
    if let Some(at) = &r.net {
        // Detached: the pod's Secret (of its name) and its runner's token are the kernel's
        // now; the dotfiles go through the runner, written as the kernel's user.
        inner.name_pod(kernel, &make::pod_name(r.id));
        if let RunnerAt::Network { token, .. } = at {
            inner.set_token(kernel, token.clone());
        }
        for d in &spec.dotfiles {
            let path = secret::dotfile_path(d)?;
            runner::put(
                at.clone(),
                kernel,
                "home",
                &path,
                d.data.as_bytes(),
                d.mode & 0o777,
                false,
            )
            .await?;
        }
        if egress::before_pod(inner, spec).await? {
            egress::own(inner, kernel, &r.uid).await?;
        }
        return Ok(r.uid.clone());
    }
    let from = make::dirs(inner, r.id);
    let to = inner.dirs(kernel);
    to.check_socket_path().map_err(AgentError::Runtime)?;
    tokio::fs::rename(&from.root, &to.root)
        .await
        .map_err(|e| AgentError::Runtime(format!("cannot rename {}: {e}", from.root.display())))?;
    inner.name_pod(kernel, &make::pod_name(r.id));
    home::fill(&to.work, &spec.dotfiles)?;
    crate::pool_folders::bind(&inner.config.data_dir, &to.work, &spec.mounts)?;
    if egress::before_pod(inner, spec).await? {
        egress::own(inner, kernel, &r.uid).await?;
    }
    egress::node::claimed(inner, spec).await?;
    Ok(r.uid.clone())
}

/// Relabels the pod as the kernel's (the watch follows it from now on), gives the runner
/// the session's environment and waits for it as for a cold kernel's.
async fn bind(
    inner: &Arc<Inner>,
    spec: &KernelSpec,
    r: &Ready,
    uid: String,
) -> Result<KernelCreated, AgentError> {
    let kernel = spec.kernel_id;
    let mut labels = KernelLabels {
        agent: &inner.config.agent_id,
        kernel,
        session: spec.session_id,
    }
    .to_map();
    labels.insert(LABEL_POOL.to_string(), r.id.to_string());
    let patch = serde_json::json!({"metadata": {
        "labels": labels,
        "annotations": {ANNOTATION_SESSION_NAME: spec.session_name},
    }});
    inner
        .pods
        .patch(
            &make::pod_name(r.id),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .map_err(KubeError::api(format_args!(
            "cannot give pool pod {} to kernel {kernel}",
            r.id
        )))?;
    let env: Vec<String> = pod::environment(spec)
        .into_iter()
        .map(|e| format!("{}={}", e.name, e.value.unwrap_or_default()))
        .collect();
    match &r.net {
        Some(at) => runner::bind(at.clone(), &env).await?,
        None => runner::bind(&inner.dirs(kernel).socket, &env).await?,
    }
    ready::wait_ready(inner, kernel, false).await?;
    Ok(KernelCreated {
        kernel_id: kernel,
        container_id: uid,
        cpuset: None,
        devices: Default::default(),
        address: None,
    })
}

/// After a claim that failed before the relabelling: the pool pod, its directory (under
/// either name) and any policy made go; the kernel's pod is `bai-k-<id>` again.
async fn undo(inner: &Inner, spec: &KernelSpec, r: &Ready) {
    let kernel = spec.kernel_id;
    make::remove(inner, r.id).await;
    egress::remove(inner, kernel).await;
    inner.unname_pod(kernel);
    inner.forget(kernel);
    if r.net.is_some() {
        return; // nothing of it on this machine
    }
    let root = inner.dirs(kernel).root;
    if let Err(e) = crate::pool_folders::release(&root) {
        tracing::error!(kernel = %kernel, error = %e, "a failed claim's directory is kept");
        return;
    }
    if let Err(e) = tokio::fs::remove_dir_all(&root).await
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(kernel = %kernel, error = %e, "cannot remove a failed claim's directory");
    }
}

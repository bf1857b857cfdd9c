//! Claiming a pool kernel for a create: take one of the kernel's shape (atomically, under
//! the pools' lock), then bind what belongs to the session. A claimed kernel is the
//! session's alone and never goes back to the pool.

use super::wait::{self, Found};
use super::{Ready, make};
use crate::docker::{Inner, egress, place, ready, watch};
use crate::kernel_files::home;
use bai_core::agent::{AgentError, KernelCreated, KernelSpec};
use bai_core::egress::EgressSpec;
use bai_core::pool::PoolShape;
use bollard::query_parameters::RenameContainerOptions;
use std::collections::HashMap;
use std::sync::Arc;

/// The shape a create's kernel would take from a pool, if it can take one at all: the one
/// kernel of its session, on the shared bridge of the default policy, with its data folders
/// where a claim can mount them ([`bindable`]) and no accelerator (what a running
/// container cannot be given afterwards). The nodes its policy closes are the bridge's
/// rules, bound at the claim as a cold create binds them.
pub fn fits(spec: &KernelSpec) -> Option<PoolShape> {
    let alone = spec
        .cluster
        .as_ref()
        .is_none_or(|c| c.size <= 1 && c.network.is_none() && c.keys.is_none());
    let plain = bindable(&spec.mounts)
        && spec.slots.accel.values().all(|v| *v == 0)
        && spec.egress.policy == EgressSpec::default().policy;
    (alone && plain).then(|| PoolShape {
        image: spec.image.clone(),
        cpu_milli: spec.slots.cpu_milli,
        mem: spec.slots.mem,
        shmem: spec.shmem,
    })
}

/// Whether a claim can mount every folder: a bindable host path, mounted under the home
/// (`crate::pool_folders`) or at a place `inject.rs` can reach.
fn bindable(mounts: &[bai_core::agent::Mount]) -> bool {
    mounts.iter().all(|m| {
        crate::pool_folders::host_bindable(m)
            && (crate::pool_folders::in_home(&m.kernel_path)
                || super::inject::elsewhere(&m.kernel_path).is_some())
    })
}

/// Takes a ready pool kernel for `spec` and makes it the session's. `None`: the create goes
/// the cold way (no pool of its shape, none ready, or the binding failed; then the pool
/// kernel is gone).
pub async fn claim(inner: &Arc<Inner>, spec: &KernelSpec) -> Option<KernelCreated> {
    let Some(shape) = fits(spec) else {
        tracing::debug!(kernel = %spec.kernel_id, "the kernel cannot come from a pool");
        return None;
    };
    let taken = {
        let mut pools = inner.pools();
        if !pools.targets.iter().any(|t| t.shape == shape) {
            tracing::debug!(kernel = %spec.kernel_id, shape = %shape, "no pool of the kernel's shape");
            return None;
        }
        super::fill::asked(&mut pools, &shape);
        let found = wait::take(&mut pools, &shape, wait::may_wait(spec, &shape));
        match found {
            Found::Nothing => miss(&mut pools, &shape),
            // The pool was empty all the same: a burst of starts grows it by one.
            Found::Coming(_) => pools.demand.grow(&shape),
            Found::Ready(_) => {}
        }
        found
    };
    // Whatever happens now, the pool makes another.
    inner.pool_wake.notify_one();
    let (r, waited) = match taken {
        Found::Ready(r) => (*r, false),
        Found::Nothing => return None,
        Found::Coming(rx) => {
            tracing::info!(kernel = %spec.kernel_id, shape = %shape, "no pool kernel ready; waiting for the one being made");
            let Some(r) = wait::Coming::new(inner, rx).arrive().await else {
                tracing::info!(kernel = %spec.kernel_id, "the pool kernel waited for was not made; starting the kernel cold");
                inner.pools().counters.misses += 1;
                return None;
            };
            (r, true)
        }
    };
    match bind(inner, spec, &r).await {
        Ok(made) => {
            inner.pools().counters.hits += 1;
            tracing::info!(kernel = %spec.kernel_id, pool_kernel = %r.id, image = %spec.image, waited, "kernel ready (from the pool)");
            Some(made)
        }
        Err(e) => {
            tracing::warn!(kernel = %spec.kernel_id, pool_kernel = %r.id, error = %e, "a pool kernel could not be bound; starting the kernel cold");
            undo(inner, spec, &r).await;
            let mut pools = inner.pools();
            pools.counters.bind_failures += 1;
            pools.counters.misses += 1;
            None
        }
    }
}

/// A create of `shape` starts cold: counted, and a burst of them grows the pool by one.
fn miss(pools: &mut super::Pools, shape: &PoolShape) {
    pools.counters.misses += 1;
    pools.demand.grow(shape);
}

/// Renames the container and the directory to the kernel's, moves what it holds, writes the
/// owner's dotfiles, gives the runner the session's environment and waits for it.
async fn bind(
    inner: &Arc<Inner>,
    spec: &KernelSpec,
    r: &Ready,
) -> Result<KernelCreated, AgentError> {
    let kernel_id = spec.kernel_id;
    // A test build's bind can be made to fail here (`BAI_FAULT_POINT=agent:pool-bind`).
    if bai_fault::fails("agent:pool-bind") {
        return Err(AgentError::Runtime("fault point agent:pool-bind".into()));
    }
    let from = make::dirs(inner, r.id);
    let to = inner.dirs(kernel_id);
    tokio::fs::rename(&from.root, &to.root)
        .await
        .map_err(|e| AgentError::Runtime(format!("cannot rename {}: {e}", from.root.display())))?;
    inner
        .docker
        .rename_container(
            &make::container_name(r.id),
            RenameContainerOptions {
                name: Inner::container_name(kernel_id),
            },
        )
        .await
        .map_err(|e| AgentError::Runtime(format!("cannot rename the pool kernel: {e}")))?;
    inner.move_holds(r.id, kernel_id);
    let shared = egress::shared_network(&spec.egress.policy);
    egress::bind(inner, &shared, &spec.egress).await?;
    keep_egress(&to.root, &spec.egress)?;
    home::fill(&to.work, &spec.dotfiles)?;
    crate::pool_folders::bind(&inner.config.data_dir, &to.work, &spec.mounts)?;
    let outside = super::inject::outside(&spec.mounts)?;
    if !outside.is_empty() {
        let pid = crate::docker::inspect::pid(inner, kernel_id).await?;
        super::inject::inject(&inner.config.data_dir, pid, outside)?;
    }
    let env = place::environment(spec, &r.placement);
    crate::runner::bind(&to.socket, &env).await?;
    ready::wait(inner, kernel_id)
        .await
        .map_err(AgentError::NotReady)?;
    watch::spawn(inner, kernel_id);
    Ok(KernelCreated {
        kernel_id,
        container_id: r.container_id.clone(),
        cpuset: r
            .placement
            .cores
            .as_deref()
            .map(crate::cores::format_cpulist),
        devices: r.placement.devices.clone(),
        address: None,
    })
}

/// Beside the claimed kernel's directories (not in the container): the session's egress spec.
/// The container's label is the pool's, without the session's nodes, and labels cannot change.
const EGRESS_FILE: &str = "egress.json";

fn keep_egress(root: &std::path::Path, spec: &EgressSpec) -> Result<(), AgentError> {
    let text = serde_json::to_string(spec)
        .map_err(|e| AgentError::Runtime(format!("egress spec: {e}")))?;
    std::fs::write(root.join(EGRESS_FILE), text)
        .map_err(|e| AgentError::Runtime(format!("cannot keep the kernel's egress spec: {e}")))
}

/// At the agent's start, a kernel's labels as its session had them: a claimed pool kernel's
/// egress label (what its rules are restored from) is the one its claim kept under `root`.
pub fn session_labels(root: &std::path::Path, labels: &mut HashMap<String, String>) {
    if crate::owned::label(labels, super::LABEL_POOL).is_some()
        && let Ok(kept) = std::fs::read_to_string(root.join(EGRESS_FILE))
    {
        labels.insert(egress::LABEL_EGRESS.to_string(), kept);
    }
}

/// After a failed binding: the container (under either name) and both directories go, and
/// what it held is free again.
async fn undo(inner: &Arc<Inner>, spec: &KernelSpec, r: &Ready) {
    make::remove(inner, r.id).await;
    if let Err(e) = crate::docker::destroy::remove(inner, spec.kernel_id).await {
        tracing::warn!(kernel = %spec.kernel_id, error = %e, "cleanup after a failed binding failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claimed_kernel_is_restored_under_its_sessions_egress_not_the_pools() {
        let dir = tempfile::tempdir().unwrap();
        let pool_label = serde_json::to_string(&EgressSpec::default()).unwrap();
        let session = EgressSpec {
            nodes: vec!["192.0.2.7".into()],
            ..Default::default()
        };
        let labels = HashMap::from([
            (super::super::LABEL_POOL.to_string(), "python".to_string()),
            (egress::LABEL_EGRESS.to_string(), pool_label.clone()),
        ]);
        // Unclaimed, or claimed before the spec was kept: the label stands.
        let mut l = labels.clone();
        session_labels(dir.path(), &mut l);
        assert_eq!(l[egress::LABEL_EGRESS], pool_label);
        keep_egress(dir.path(), &session).unwrap();
        let mut l = labels.clone();
        session_labels(dir.path(), &mut l);
        let restored: EgressSpec = serde_json::from_str(&l[egress::LABEL_EGRESS]).unwrap();
        assert_eq!(restored.nodes, session.nodes);
        // A kernel made cold keeps its own label, whatever lies in its directory.
        let mut cold = HashMap::from([(egress::LABEL_EGRESS.to_string(), pool_label.clone())]);
        session_labels(dir.path(), &mut cold);
        assert_eq!(cold[egress::LABEL_EGRESS], pool_label);
    }
}

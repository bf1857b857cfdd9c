//! Making a pool kernel (a container started for a shape, its runner waiting to be bound)
//! and removing one.

use super::{LABEL_POOL, NAME_PREFIX, Ready, busy};
use crate::docker::body::container_body;
use crate::docker::{Inner, egress, place, ready};
use crate::error::runtime;
use crate::kernel_files::make_work_dir;
use crate::paths::KernelDirs;
use bai_core::agent::AgentError;
use bai_core::cluster::ClusterInfo;
use bai_core::pool::PoolShape;
use bollard::models::ContainerUpdateBody;
use bollard::query_parameters::{CreateContainerOptions, StartContainerOptions};
use uuid::Uuid;

/// The variable that starts krunner in its pool mode.
const POOL_VAR: &str = "BAI_POOL";

/// The kernels' directory, `data_dir/kernels`: a shared mount once pools are made.
fn kernels(inner: &Inner) -> std::path::PathBuf {
    inner.config.data_dir.join("kernels")
}

/// A pool kernel's directory: `data_dir/kernels/.pool/<id>` (on the kernels' mount, so the
/// claim's rename to `data_dir/kernels/<kernel>` stays on it).
pub fn dirs(inner: &Inner, id: Uuid) -> KernelDirs {
    KernelDirs::under(&kernels(inner).join(".pool"), id)
}

pub fn container_name(id: Uuid) -> String {
    format!("{NAME_PREFIX}{id}")
}

/// Makes and starts one pool kernel of `shape` and waits for its runner.
pub async fn make(inner: &Inner, shape: &PoolShape) -> Result<Ready, AgentError> {
    let id = Uuid::new_v4();
    let spec = crate::pool_kernel::spec(shape, id);
    let image = place::image_config(inner, &shape.image).await?;
    let placement = place::place(inner, &spec, &image)?;
    let made = async {
        let shared = egress::shared_network(&spec.egress.policy);
        egress::bind(inner, &shared, &spec.egress).await?;
        let dirs = dirs(inner, id);
        dirs.check_socket_path().map_err(AgentError::Runtime)?;
        crate::pool_folders::ensure_shared(&kernels(inner))?;
        make_work_dir(&dirs.root)?;
        make_work_dir(&dirs.work)?;
        make_work_dir(&dirs.run)?;
        let cluster = ClusterInfo::single(id);
        let mut body = container_body(inner, &spec, &dirs, &placement, &cluster, vec![], &shared)?;
        if let Some(env) = body.env.as_mut() {
            // Over the create's own clearing of an image's stale value.
            env.retain(|kv| kv.split_once('=').is_none_or(|(k, _)| k != POOL_VAR));
            env.push(format!("{POOL_VAR}=1"));
        }
        // The home receives the folders mounted under it at the claim.
        let home = format!("{}:/home/work:rw", dirs.work.display());
        if let Some(binds) = body.host_config.as_mut().and_then(|h| h.binds.as_mut()) {
            for b in binds.iter_mut().filter(|b| **b == home) {
                b.push_str(",rslave");
            }
        }
        if let Some(labels) = body.labels.as_mut() {
            labels.insert(LABEL_POOL.to_string(), shape.key());
        }
        // Made at the lowest CPU weight: a create that comes meanwhile goes first.
        if let Some(h) = body.host_config.as_mut() {
            h.cpu_shares = Some(busy::LOW_CPU_SHARES);
        }
        let name = container_name(id);
        let opts = CreateContainerOptions {
            name: Some(name.clone()),
            ..Default::default()
        };
        let created = inner
            .docker
            .create_container(Some(opts), body)
            .await
            .map_err(|e| runtime(format_args!("cannot create {name}"), e))?;
        if let Err(e) = crate::docker::users::ensure(inner, &name, &image.id).await {
            tracing::warn!(container = %name, error = %e, "the kernel's user stays without a name");
        }
        inner
            .docker
            .start_container(&name, None::<StartContainerOptions>)
            .await
            .map_err(|e| runtime(format_args!("cannot start {name}"), e))?;
        // A create waits for it already: it is that create's kernel, at a cold one's weight.
        if super::wait::waiters(&inner.pools(), shape) > 0 {
            restore_weight(inner, &name).await?;
        }
        ready::wait_at(inner, &dirs.socket, &name)
            .await
            .map_err(AgentError::NotReady)?;
        held(inner, shape).await;
        // Ready: the weight of a cold kernel, which the session it becomes has.
        restore_weight(inner, &name).await?;
        Ok::<_, AgentError>(created.id)
    }
    .await;
    match made {
        Ok(container_id) => Ok(Ready {
            id,
            shape: shape.clone(),
            container_id,
            placement,
        }),
        Err(e) => {
            remove(inner, id).await;
            Err(e)
        }
    }
}

/// Gives the pool kernel `name` a cold kernel's CPU weight.
async fn restore_weight(inner: &Inner, name: &str) -> Result<(), AgentError> {
    let shares = ContainerUpdateBody {
        cpu_shares: Some(busy::default_cpu_shares(inner.cgroup_v2)),
        ..Default::default()
    };
    inner
        .docker
        .update_container(name, shares)
        .await
        .map_err(|e| runtime(format_args!("cannot give {name} its CPU weight"), e))
}

/// A test build's refill can be held once ready (`BAI_FAULT_FAIL=agent:pool-refill-held`)
/// until a create waits for its shape or the shape is no longer wanted: a test's start then
/// comes while a refill is in flight, whatever the machine's speed.
async fn held(inner: &Inner, shape: &PoolShape) {
    if !bai_fault::fails("agent:pool-refill-held") {
        return;
    }
    loop {
        {
            let pools = inner.pools();
            if super::wait::waiters(&pools, shape) > 0
                || !pools.targets.iter().any(|t| t.shape == *shape)
            {
                return;
            }
        }
        let _ = tokio::time::timeout(
            std::time::Duration::from_secs(1),
            inner.pool_wake.notified(),
        )
        .await;
    }
}

/// Removes an unclaimed pool kernel: its container, its directory, what it held.
pub async fn remove(inner: &Inner, id: Uuid) {
    if let Err(e) = crate::docker::destroy::remove_container(inner, &container_name(id)).await {
        tracing::warn!(pool_kernel = %id, error = %e, "cannot remove a pool kernel");
    }
    inner.release(id);
    let root = dirs(inner, id).root;
    if let Err(e) = crate::pool_folders::release(&root) {
        tracing::error!(pool_kernel = %id, error = %e, "a pool kernel's directory is kept");
        return;
    }
    if let Err(e) = tokio::fs::remove_dir_all(&root).await
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(dir = %root.display(), error = %e, "cannot remove a pool kernel's directory");
    }
}

/// Removes pool kernels already taken out of the pools and counted in
/// [`super::Pools::removing`] (under the pools' lock, where they were taken out), one at a
/// time, each uncounted once it is gone.
pub async fn remove_taken(inner: &Inner, ids: impl IntoIterator<Item = Uuid>) {
    for id in ids {
        remove(inner, id).await;
        let mut pools = inner.pools();
        pools.removing = pools.removing.saturating_sub(1);
    }
}

/// At the agent's start: pool kernels of an earlier run are nobody's; they go (the pools
/// are made again). Claimed ones were renamed and are kernels like any other.
pub async fn remove_leftovers(inner: &Inner) -> Result<(), AgentError> {
    for c in crate::docker::list::pool_containers(inner).await? {
        tracing::info!(pool_kernel = %c, "removing a pool kernel of an earlier run");
        remove(inner, c).await;
    }
    let dir = kernels(inner).join(".pool");
    crate::pool_folders::release(&dir)?;
    if let Err(e) = tokio::fs::remove_dir_all(&dir).await
        && e.kind() != std::io::ErrorKind::NotFound
    {
        return Err(runtime(format_args!("cannot remove {}", dir.display()), e));
    }
    Ok(())
}

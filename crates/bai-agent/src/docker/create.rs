//! Creating a kernel: scratch directories, a container with real limits, start, wait
//! until krunner answers, then watch it.

use super::body::container_body;
use super::{Inner, adopt, cluster, destroy, egress, inspect, netpool, place, pool, ready, watch};
use crate::cores::format_cpulist;
use crate::error::{is_not_found, runtime};
use crate::kernel_files::{home, make_work_dir};
use bai_core::agent::{AgentError, KernelCreated, KernelSpec};
use bollard::query_parameters::{CreateContainerOptions, StartContainerOptions};
use std::sync::Arc;

/// Log bytes quoted in a NotReady error.
const NOT_READY_LOG_TAIL: usize = 8 * 1024;

pub async fn create(inner: &Arc<Inner>, spec: KernelSpec) -> Result<KernelCreated, AgentError> {
    let kernel_id = spec.kernel_id;
    if spec.image.trim().is_empty() {
        return Err(AgentError::BadRequest("no image given".into()));
    }
    let dirs = inner.dirs(kernel_id);
    dirs.check_socket_path().map_err(AgentError::Runtime)?;
    // The pools' refill waits while this is in flight.
    let _in_flight = inner.creates.enter();
    if let Some(made) = adopt::earlier(inner, kernel_id).await? {
        return Ok(made);
    }
    if let Some(made) = pool::claim::claim(inner, &spec).await {
        return Ok(made);
    }
    let made = cold(inner, spec).await;
    // Pool kernels count as free to the manager: they give the room back now.
    pool::room::shrink_to_fit(inner).await;
    made
}

/// A kernel made for its session: its container made, started and waited for.
async fn cold(inner: &Arc<Inner>, spec: KernelSpec) -> Result<KernelCreated, AgentError> {
    let kernel_id = spec.kernel_id;
    let dirs = inner.dirs(kernel_id);
    let image = place::image_config(inner, &spec.image).await?;
    let placement = match place::place(inner, &spec, &image) {
        // Cores held by pool kernels are the session's first.
        Err(AgentError::InsufficientResources(_)) if pool::room::evict(inner).await > 0 => {
            place::place(inner, &spec, &image)?
        }
        other => other?,
    };
    let mut cluster = spec.cluster_info();
    // The session's network on this node (taken or made once for all its kernels here).
    if let Some(net) = cluster.network.take() {
        match netpool::ensure(inner, &spec, &net).await {
            Ok(actual) => cluster.network = Some(actual),
            Err(e) => {
                inner.release(kernel_id);
                return Err(e);
            }
        }
    }
    // The bridge the kernel joins, under its policy before anything runs on it.
    let shared = egress::shared_network(&spec.egress.policy);
    let bound = async {
        if cluster.network.is_none() && shared != super::isolation::NETWORK {
            super::isolation::ensure_named(&inner.docker, &shared).await?;
        }
        let net = cluster.network.as_deref().unwrap_or(&shared);
        egress::bind(inner, net, &spec.egress).await
    }
    .await;
    let made = bound
        .and_then(|()| make_work_dir(&dirs.root))
        .and_then(|()| make_work_dir(&dirs.work))
        .and_then(|()| home::fill(&dirs.work, &spec.dotfiles))
        .and_then(|()| make_work_dir(&dirs.run))
        .and_then(|()| cluster::ssh_binds(&dirs.run, &cluster))
        .and_then(|binds| {
            container_body(inner, &spec, &dirs, &placement, &cluster, binds, &shared)
        });
    let body = match made {
        Ok(b) => b,
        Err(e) => {
            inner.release(kernel_id);
            let _ = tokio::fs::remove_dir_all(&dirs.root).await;
            if let Some(net) = &cluster.network {
                netpool::release(inner, net, Some(spec.session_id)).await;
            }
            return Err(e);
        }
    };
    let name = Inner::container_name(kernel_id);
    let opts = CreateContainerOptions {
        name: Some(name.clone()),
        ..Default::default()
    };
    let mut attempt = inner
        .docker
        .create_container(Some(opts.clone()), body.clone())
        .await;
    // Someone removed the shared kernel network while the agent ran: make it again (a new
    // bridge, put under the policy again).
    if cluster.network.is_none()
        && matches!(&attempt, Err(e) if is_not_found(e) && e.to_string().contains(&shared))
    {
        egress::forget_iface(inner, &shared).await;
        let again = match super::isolation::ensure_named(&inner.docker, &shared).await {
            Ok(()) => egress::bind(inner, &shared, &spec.egress).await,
            Err(e) => Err(e),
        };
        match again {
            Ok(()) => attempt = inner.docker.create_container(Some(opts), body).await,
            Err(e) => tracing::warn!(error = %e, "cannot make the kernel network again"),
        }
    }
    let created = match attempt {
        Ok(c) => c,
        Err(e) => {
            inner.release(kernel_id);
            let _ = tokio::fs::remove_dir_all(&dirs.root).await;
            if let Some(net) = &cluster.network {
                netpool::release(inner, net, Some(spec.session_id)).await;
            }
            return Err(if is_not_found(&e) {
                AgentError::ImageNotFound(spec.image.clone())
            } else {
                runtime(format_args!("cannot create container {name}"), e)
            });
        }
    };
    tracing::debug!(kernel = %kernel_id, container = %created.id, "container created");
    // The kernel's user named in the image's account files, where they lack it.
    if let Err(e) = super::users::ensure(inner, &name, &image.id).await {
        tracing::warn!(kernel = %kernel_id, error = %e, "the kernel's user stays without a name");
    }
    // The container and its scratch directory exist, nothing runs yet (test builds only).
    bai_fault::point("agent:container-created");
    let mut started = inner
        .docker
        .start_container(&name, None::<StartContainerOptions>)
        .await;
    // Two copies of the shared kernel network (made at once by two agents): keep one, again.
    if cluster.network.is_none()
        && matches!(&started, Err(e) if super::isolation::is_ambiguous(e))
        && super::isolation::ensure_named(&inner.docker, &shared)
            .await
            .is_ok()
    {
        started = inner
            .docker
            .start_container(&name, None::<StartContainerOptions>)
            .await;
    }
    if let Err(e) = started {
        let _ = destroy::remove(inner, kernel_id).await;
        return Err(runtime(format_args!("cannot start container {name}"), e));
    }
    if let Err(why) = ready::wait(inner, kernel_id).await {
        let logs = inspect::logs(inner, kernel_id, NOT_READY_LOG_TAIL)
            .await
            .unwrap_or_default();
        if let Err(e) = destroy::remove(inner, kernel_id).await {
            tracing::warn!(kernel = %kernel_id, error = %e, "cleanup after a failed start failed");
        }
        tracing::warn!(kernel = %kernel_id, %why, "kernel did not become ready");
        let logs = logs.trim();
        return Err(AgentError::NotReady(if logs.is_empty() {
            why
        } else {
            format!("{why}; container log:\n{logs}")
        }));
    }
    // Ready, and nobody has been told (test builds only).
    bai_fault::point("agent:kernel-ready");
    watch::spawn(inner, kernel_id);
    tracing::info!(kernel = %kernel_id, image = %spec.image, "kernel ready");
    Ok(KernelCreated {
        kernel_id,
        container_id: created.id,
        cpuset: placement.cores.as_deref().map(format_cpulist),
        devices: placement.devices,
        address: None,
    })
}

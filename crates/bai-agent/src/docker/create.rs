//! Creating a kernel: scratch directories, a container with real limits, start, wait
//! until krunner answers, then watch it.

use super::place::{Placement, environment};
use super::{
    Inner, LABEL_AGENT, LABEL_CPUSET, LABEL_DEVICES, LABEL_KERNEL, LABEL_SESSION, WORK_UID, adopt,
    cluster, destroy, egress, home, inspect, netpool, place, pool, ready, watch,
};
use crate::cores::format_cpulist;
use crate::error::{is_not_found, runtime};
use crate::paths::KernelDirs;
use bai_core::agent::{AgentError, KernelCreated, KernelSpec};
use bai_core::cluster::ClusterInfo;
use bollard::models::{ContainerCreateBody, DeviceMapping, HostConfig};
use bollard::query_parameters::{CreateContainerOptions, StartContainerOptions};
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;

/// Log bytes quoted in a NotReady error.
const NOT_READY_LOG_TAIL: usize = 8 * 1024;
/// Most processes (threads included) in one kernel.
const PIDS_LIMIT: i64 = 4096;

/// Creates `p` (and missing parents) owned by the work user.
pub(super) fn make_work_dir(p: &Path) -> Result<(), AgentError> {
    std::fs::create_dir_all(p)
        .map_err(|e| runtime(format_args!("cannot create {}", p.display()), e))?;
    let meta = std::fs::metadata(p)
        .map_err(|e| runtime(format_args!("cannot stat {}", p.display()), e))?;
    if meta.uid() != WORK_UID || meta.gid() != WORK_UID {
        std::os::unix::fs::chown(p, Some(WORK_UID), Some(WORK_UID)).map_err(|e| {
            runtime(
                format_args!(
                    "cannot hand {} to uid {WORK_UID} (is the agent root?)",
                    p.display()
                ),
                e,
            )
        })?;
    }
    Ok(())
}

pub(super) fn container_body(
    inner: &Inner,
    spec: &KernelSpec,
    dirs: &KernelDirs,
    placement: &Placement,
    cluster: &ClusterInfo,
    cluster_binds: Vec<String>,
    shared: &str,
) -> Result<ContainerCreateBody, AgentError> {
    let mut binds = vec![
        format!(
            "{}:/opt/bai/bin/krunner:ro",
            inner.config.krunner_path.display()
        ),
        format!("{}:/home/work:rw", dirs.work.display()),
        format!("{}:/opt/bai/run:rw", dirs.run.display()),
    ];
    // Data folders (paths validated by the manager: absolute, no ':').
    for m in &spec.mounts {
        if m.host_path.contains(':') || m.kernel_path.contains(':') {
            return Err(AgentError::BadRequest(format!(
                "mount path of {} contains ':'",
                m.name
            )));
        }
        let mode = if m.read_only { "ro" } else { "rw" };
        binds.push(format!("{}:{}:{mode}", m.host_path, m.kernel_path));
    }
    binds.extend(placement.accel.binds.iter().cloned());
    binds.extend(cluster_binds);
    let network = cluster::networking(cluster);
    let mut labels = HashMap::from([
        (LABEL_AGENT.to_string(), inner.config.agent_id.clone()),
        (LABEL_KERNEL.to_string(), spec.kernel_id.to_string()),
        (LABEL_SESSION.to_string(), spec.session_id.to_string()),
    ]);
    if let Some((name, _)) = &network {
        labels.insert(netpool::LABEL_NETWORK.to_string(), name.clone());
    }
    let egress = serde_json::to_string(&spec.egress)
        .map_err(|e| AgentError::BadRequest(format!("egress spec: {e}")))?;
    labels.insert(egress::LABEL_EGRESS.to_string(), egress);
    let cpuset = placement.cores.as_deref().map(format_cpulist);
    if let Some(c) = &cpuset {
        labels.insert(LABEL_CPUSET.to_string(), c.clone());
    }
    if !placement.devices.is_empty() {
        labels.insert(
            LABEL_DEVICES.to_string(),
            crate::accel::format_alloc(&placement.devices),
        );
    }
    // The accelerator's device nodes, at the same path inside; the device cgroup allows
    // only these.
    let devices = (!placement.accel.devices.is_empty()).then(|| {
        placement
            .accel
            .devices
            .iter()
            .map(|d| {
                let (host, inside) = d.split_once(':').unwrap_or((d, d));
                DeviceMapping {
                    path_on_host: Some(host.to_string()),
                    path_in_container: Some(inside.to_string()),
                    cgroup_permissions: Some("rwm".into()),
                }
            })
            .collect()
    });
    let bytes = |what: &str, v: u64| {
        i64::try_from(v).map_err(|_| AgentError::BadRequest(format!("{what} {v} is too large")))
    };
    let mem = bytes("memory", spec.slots.mem)?;
    let nano_cpus = bytes("cpu", spec.slots.cpu_milli)?.saturating_mul(1_000_000);
    Ok(ContainerCreateBody {
        image: Some(spec.image.clone()),
        entrypoint: Some(vec!["/opt/bai/bin/krunner".into()]),
        cmd: Some(vec![]),
        env: Some(environment(spec, placement)),
        labels: Some(labels),
        user: Some(format!("{WORK_UID}:{WORK_UID}")),
        working_dir: Some("/home/work".into()),
        hostname: Some(cluster.place.hostname.clone()),
        host_config: Some(HostConfig {
            binds: Some(binds),
            extra_hosts: cluster::extra_hosts(cluster),
            memory: Some(mem),
            // Same as memory: no swap, so the limit is real and OOM kills are reported.
            memory_swap: Some(mem),
            nano_cpus: Some(nano_cpus),
            cpuset_cpus: cpuset,
            devices,
            ipc_mode: placement.accel.ipc_host.then(|| "host".to_string()),
            shm_size: Some(bytes("shared memory", spec.shmem)?),
            pids_limit: Some(PIDS_LIMIT),
            // The engine's init (tini) is PID 1: it reaps zombies and forwards SIGTERM.
            init: Some(true),
            cap_drop: Some(vec!["ALL".into()]),
            security_opt: Some(vec!["no-new-privileges".into()]),
            // A cluster session's own bridge, else the shared one of its egress policy
            // (without inter-container traffic).
            network_mode: Some(
                network
                    .as_ref()
                    .map(|(name, _)| name.clone())
                    .unwrap_or_else(|| shared.to_string()),
            ),
            ..Default::default()
        }),
        networking_config: network.map(|(_, n)| n),
        ..Default::default()
    })
}

pub async fn create(inner: &Arc<Inner>, spec: KernelSpec) -> Result<KernelCreated, AgentError> {
    let kernel_id = spec.kernel_id;
    if spec.image.trim().is_empty() {
        return Err(AgentError::BadRequest("no image given".into()));
    }
    let dirs = inner.dirs(kernel_id);
    dirs.check_socket_path().map_err(AgentError::Runtime)?;
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
    })
}

//! A kernel container's body: its directories on the host, and what the engine is asked to
//! make (image, runner, binds, limits, devices, labels, network). Made the same way for a
//! kernel made for its session (`create`) and for a pool kernel (`pool::make`).

use super::place::{Placement, environment};
use super::{
    Inner, LABEL_AGENT, LABEL_CPUSET, LABEL_DEVICES, LABEL_KERNEL, LABEL_SESSION, cluster, egress,
    netpool,
};
use crate::cores::format_cpulist;
use crate::kernel_files::{WORK_UID, etc};
use crate::paths::KernelDirs;
use bai_core::agent::{AgentError, KernelSpec};
use bai_core::cluster::ClusterInfo;
use bollard::models::{ContainerCreateBody, DeviceMapping, HostConfig};
use std::collections::HashMap;

/// Most processes (threads included) in one kernel.
const PIDS_LIMIT: i64 = 4096;

pub fn container_body(
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
    binds.extend(etc::binds(&inner.config.data_dir));
    binds.extend(crate::sshd_kit::binds(&inner.config.krunner_path));
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
    placement.carried.clear_labels(&mut labels);
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

//! Creating a kernel: scratch directories, a container with real limits, start, wait
//! until krunner answers, then watch it.

use super::{
    Inner, LABEL_AGENT, LABEL_KERNEL, LABEL_SESSION, WORK_UID, destroy, inspect, ready, watch,
};
use crate::error::{is_not_found, runtime};
use bai_core::agent::{AgentError, KernelCreated, KernelSpec};
use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{CreateContainerOptions, StartContainerOptions};
use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;

/// Log bytes quoted in a NotReady error.
const NOT_READY_LOG_TAIL: usize = 8 * 1024;
/// Most processes (threads included) in one kernel.
const PIDS_LIMIT: i64 = 4096;

/// Creates `p` (and missing parents) owned by the work user.
fn make_work_dir(p: &Path) -> Result<(), AgentError> {
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

/// The container's environment: the user's, plus what bai sets. Thread counts follow the
/// CPU slot unless the user chose them; `BAI_*` cannot be overridden.
pub fn environment(spec: &KernelSpec) -> Vec<String> {
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    let threads = spec.slots.cpu_milli.div_ceil(1000).max(1).to_string();
    env.insert("OMP_NUM_THREADS".into(), threads.clone());
    env.insert("OPENBLAS_NUM_THREADS".into(), threads);
    env.insert("HOME".into(), "/home/work".into());
    env.insert("LANG".into(), "C.UTF-8".into());
    for (k, v) in &spec.environ {
        env.insert(k.clone(), v.clone());
    }
    env.insert("BAI_SESSION_ID".into(), spec.session_id.to_string());
    env.insert("BAI_KERNEL_ID".into(), spec.kernel_id.to_string());
    env.insert("BAI_SESSION_NAME".into(), spec.session_name.clone());
    env.insert("BAI_SESSION_TYPE".into(), spec.session_type.as_str().into());
    env.remove("BAI_STARTUP_COMMAND");
    env.remove("BAI_BOOTSTRAP_SCRIPT");
    if let Some(c) = &spec.startup_command {
        env.insert("BAI_STARTUP_COMMAND".into(), c.clone());
    }
    if let Some(s) = &spec.bootstrap_script {
        env.insert("BAI_BOOTSTRAP_SCRIPT".into(), s.clone());
    }
    env.into_iter().map(|(k, v)| format!("{k}={v}")).collect()
}

fn container_body(inner: &Inner, spec: &KernelSpec) -> Result<ContainerCreateBody, AgentError> {
    let dirs = inner.dirs(spec.kernel_id);
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
    let labels = HashMap::from([
        (LABEL_AGENT.to_string(), inner.config.agent_id.clone()),
        (LABEL_KERNEL.to_string(), spec.kernel_id.to_string()),
        (LABEL_SESSION.to_string(), spec.session_id.to_string()),
    ]);
    let bytes = |what: &str, v: u64| {
        i64::try_from(v).map_err(|_| AgentError::BadRequest(format!("{what} {v} is too large")))
    };
    let mem = bytes("memory", spec.slots.mem)?;
    let nano_cpus = bytes("cpu", spec.slots.cpu_milli)?.saturating_mul(1_000_000);
    Ok(ContainerCreateBody {
        image: Some(spec.image.clone()),
        entrypoint: Some(vec!["/opt/bai/bin/krunner".into()]),
        cmd: Some(vec![]),
        env: Some(environment(spec)),
        labels: Some(labels),
        user: Some(format!("{WORK_UID}:{WORK_UID}")),
        working_dir: Some("/home/work".into()),
        hostname: Some("main1".into()),
        host_config: Some(HostConfig {
            binds: Some(binds),
            memory: Some(mem),
            // Same as memory: no swap, so the limit is real and OOM kills are reported.
            memory_swap: Some(mem),
            nano_cpus: Some(nano_cpus),
            shm_size: Some(bytes("shared memory", spec.shmem)?),
            pids_limit: Some(PIDS_LIMIT),
            // The engine's init (tini) is PID 1: it reaps zombies and forwards SIGTERM.
            init: Some(true),
            cap_drop: Some(vec!["ALL".into()]),
            security_opt: Some(vec!["no-new-privileges".into()]),
            ..Default::default()
        }),
        ..Default::default()
    })
}

pub async fn create(inner: &Arc<Inner>, spec: KernelSpec) -> Result<KernelCreated, AgentError> {
    let kernel_id = spec.kernel_id;
    if spec.image.trim().is_empty() {
        return Err(AgentError::BadRequest("no image given".into()));
    }
    let body = container_body(inner, &spec)?;
    let dirs = inner.dirs(kernel_id);
    dirs.check_socket_path().map_err(AgentError::Runtime)?;
    let made = make_work_dir(&dirs.root)
        .and_then(|()| make_work_dir(&dirs.work))
        .and_then(|()| make_work_dir(&dirs.run));
    if let Err(e) = made {
        let _ = tokio::fs::remove_dir_all(&dirs.root).await;
        return Err(e);
    }
    let name = Inner::container_name(kernel_id);
    let opts = CreateContainerOptions {
        name: Some(name.clone()),
        ..Default::default()
    };
    let created = match inner.docker.create_container(Some(opts), body).await {
        Ok(c) => c,
        Err(e) => {
            let _ = tokio::fs::remove_dir_all(&dirs.root).await;
            return Err(if is_not_found(&e) {
                AgentError::ImageNotFound(spec.image.clone())
            } else {
                runtime(format_args!("cannot create container {name}"), e)
            });
        }
    };
    tracing::debug!(kernel = %kernel_id, container = %created.id, "container created");
    if let Err(e) = inner
        .docker
        .start_container(&name, None::<StartContainerOptions>)
        .await
    {
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
    watch::spawn(inner, kernel_id);
    tracing::info!(kernel = %kernel_id, image = %spec.image, "kernel ready");
    Ok(KernelCreated {
        kernel_id,
        container_id: created.id,
        cpuset: None,
    })
}

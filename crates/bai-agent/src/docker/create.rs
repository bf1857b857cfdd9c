//! Creating a kernel: scratch dir, container with real limits, start, wait for krunner.

use super::{Inner, LABEL_AGENT, LABEL_KERNEL, LABEL_SESSION, destroy, watch};
use bai_core::agent::{AgentError, KernelCreated, KernelSpec};
use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::CreateContainerOptionsBuilder;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// uid/gid of the `work` user inside kernel images.
pub const WORK_UID: u32 = 1000;
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);

fn runtime(e: impl std::fmt::Display) -> AgentError {
    AgentError::Runtime(e.to_string())
}

fn make_dir(p: &std::path::Path) -> Result<(), AgentError> {
    std::fs::create_dir_all(p)
        .map_err(|e| AgentError::Runtime(format!("cannot create {}: {e}", p.display())))?;
    std::os::unix::fs::chown(p, Some(WORK_UID), Some(WORK_UID))
        .map_err(|e| AgentError::Runtime(format!("cannot chown {}: {e}", p.display())))
}

fn environment(spec: &KernelSpec) -> Vec<String> {
    let mut env: HashMap<String, String> = HashMap::new();
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
    if let Some(c) = &spec.startup_command {
        env.insert("BAI_STARTUP_COMMAND".into(), c.clone());
    }
    if let Some(s) = &spec.bootstrap_script {
        env.insert("BAI_BOOTSTRAP_SCRIPT".into(), s.clone());
    }
    let mut out: Vec<String> = env.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    out.sort();
    out
}

pub async fn create(inner: &Arc<Inner>, spec: KernelSpec) -> Result<KernelCreated, AgentError> {
    let dirs = inner.dirs(spec.kernel_id);
    make_dir(&dirs.root)?;
    make_dir(&dirs.work)?;
    make_dir(&dirs.run)?;
    let krunner = &inner.config.krunner_path;
    let binds = vec![
        format!("{}:/opt/bai/bin/krunner:ro", krunner.display()),
        format!("{}:/home/work:rw", dirs.work.display()),
        format!("{}:/opt/bai/run:rw", dirs.run.display()),
    ];
    let mut labels = HashMap::new();
    labels.insert(LABEL_AGENT.to_string(), inner.config.agent_id.clone());
    labels.insert(LABEL_KERNEL.to_string(), spec.kernel_id.to_string());
    labels.insert(LABEL_SESSION.to_string(), spec.session_id.to_string());
    let mem = i64::try_from(spec.slots.mem)
        .map_err(|_| AgentError::BadRequest("memory too large".into()))?;
    let body = ContainerCreateBody {
        image: Some(spec.image.clone()),
        entrypoint: Some(vec!["/opt/bai/bin/krunner".into()]),
        cmd: Some(vec![]),
        env: Some(environment(&spec)),
        labels: Some(labels),
        user: Some(format!("{WORK_UID}:{WORK_UID}")),
        working_dir: Some("/home/work".into()),
        hostname: Some("main1".into()),
        host_config: Some(HostConfig {
            binds: Some(binds),
            memory: Some(mem),
            memory_swap: Some(mem),
            nano_cpus: Some((spec.slots.cpu_milli as i64).saturating_mul(1_000_000)),
            shm_size: Some(spec.shmem as i64),
            pids_limit: Some(4096),
            init: Some(true),
            cap_drop: Some(vec!["ALL".into()]),
            security_opt: Some(vec!["no-new-privileges".into()]),
            ..Default::default()
        }),
        ..Default::default()
    };
    let name = Inner::container_name(spec.kernel_id);
    let opts = CreateContainerOptionsBuilder::default().name(&name).build();
    let created = match inner.docker.create_container(Some(opts), body).await {
        Ok(c) => c,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&dirs.root);
            let msg = e.to_string();
            return Err(if msg.contains("No such image") {
                AgentError::ImageNotFound(spec.image.clone())
            } else {
                runtime(msg)
            });
        }
    };
    if let Err(e) = inner
        .docker
        .start_container(
            &name,
            None::<bollard::query_parameters::StartContainerOptions>,
        )
        .await
    {
        let _ = destroy::destroy(inner, spec.kernel_id).await;
        return Err(runtime(format!("cannot start the container: {e}")));
    }
    // The watcher reports the kernel's end, whenever it comes.
    watch::spawn(inner.clone(), spec.kernel_id);
    if let Err(e) = wait_ready(inner, &spec, &name).await {
        let logs = destroy::logs(inner, spec.kernel_id, Some(4096))
            .await
            .unwrap_or_default();
        let _ = destroy::destroy(inner, spec.kernel_id).await;
        return Err(AgentError::NotReady(format!(
            "{e}; container log: {}",
            logs.trim()
        )));
    }
    Ok(KernelCreated {
        kernel_id: spec.kernel_id,
        container_id: created.id,
        cpuset: None,
    })
}

async fn ping(socket: &std::path::Path) -> std::io::Result<()> {
    let mut s = tokio::net::UnixStream::connect(socket).await?;
    s.write_all(b"{\"op\":\"ping\"}\n").await?;
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).await?;
    if line.contains("pong") {
        Ok(())
    } else {
        Err(std::io::Error::other("no pong"))
    }
}

async fn wait_ready(inner: &Inner, spec: &KernelSpec, name: &str) -> Result<(), String> {
    let socket = inner.dirs(spec.kernel_id).socket;
    let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
    let mut n = 0u32;
    loop {
        if ping(&socket).await.is_ok() {
            return Ok(());
        }
        n += 1;
        if n.is_multiple_of(25) {
            let running = inner
                .docker
                .inspect_container(
                    name,
                    None::<bollard::query_parameters::InspectContainerOptions>,
                )
                .await
                .ok()
                .and_then(|i| i.state.and_then(|s| s.running))
                .unwrap_or(false);
            if !running {
                return Err("the container stopped before its runner was ready".into());
            }
        }
        if tokio::time::Instant::now() > deadline {
            return Err(format!(
                "the runner did not answer within {}s",
                READY_TIMEOUT.as_secs()
            ));
        }
        tokio::time::sleep(Duration::from_millis(if n < 100 { 5 } else { 50 })).await;
    }
}

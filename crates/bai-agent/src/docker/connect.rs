//! Starting the Docker backend: the engine is reached, the runner and the data directory
//! checked, and what an earlier run left is taken back (kernels still running, watched
//! again) or removed (creations cut off, directories of gone containers, stray networks).

use super::{
    DockerAgent, DockerAgentConfig, Inner, destroy, egress, isolation, list, netpool, pool, watch,
};
use crate::accel::alloc::AllocMap;
use crate::cores::CoreMap;
use crate::error::runtime;
use crate::paths::KernelDirs;
use bai_core::agent::AgentError;
use bollard::Docker;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;
use uuid::Uuid;

/// See [`DockerAgent::connect`].
pub(super) async fn connect(mut config: DockerAgentConfig) -> Result<DockerAgent, AgentError> {
    let docker = Docker::connect_with_local_defaults()
        .map_err(|e| runtime("cannot connect to the Docker engine", e))?;
    docker
        .ping()
        .await
        .map_err(|e| runtime("the Docker engine does not answer", e))?;
    config.krunner_path =
        crate::krunner_link::runner_file(&config.krunner_path).ok_or_else(|| {
            AgentError::Runtime(format!(
                "the kernel runner {} is missing: build it with scripts/build-krunner.sh",
                config.krunner_path.display()
            ))
        })?;
    config.data_dir =
        crate::paths::prepare_data_dir(&config.data_dir).map_err(AgentError::Runtime)?;
    crate::kernel_files::etc::write(&config.data_dir)?;
    KernelDirs::new(&config.data_dir, Uuid::nil())
        .check_socket_path()
        .map_err(AgentError::Runtime)?;
    tracing::info!(
        agent = %config.agent_id,
        data_dir = %config.data_dir.display(),
        krunner = %config.krunner_path.display(),
        "connected to the Docker engine"
    );
    let cgroup_v2 = docker.info().await.ok().and_then(|i| i.cgroup_version)
        == Some(bollard::models::SystemInfoCgroupVersionEnum::_2);
    let (events, _) = broadcast::channel(1024);
    let devices = match &config.accelerator {
        Some(a) => {
            tracing::info!(
                plugin = a.name(),
                slot = a.slot(),
                devices = a.devices().len(),
                "accelerator plugin attached"
            );
            AllocMap::new(a.mode(), a.devices())
        }
        None => AllocMap::new(bai_core::accel::AllocMode::Discrete, &[]),
    };
    let engine = {
        let events = events.clone();
        crate::engine::Engine::new(
            docker.clone(),
            config.data_dir.clone(),
            config.registry.clone(),
            Arc::new(move |ev| {
                let _ = events.send(ev);
            }),
        )
    };
    let agent = DockerAgent {
        inner: Arc::new(Inner {
            docker,
            config,
            events,
            engine,
            ending: Mutex::new(HashSet::new()),
            ended: tokio::sync::Notify::new(),
            watchers: Mutex::new(HashMap::new()),
            devices: Mutex::new(devices),
            cores: Mutex::new(CoreMap::detect()),
            networks: tokio::sync::Mutex::new(netpool::Networks::default()),
            egress: tokio::sync::Mutex::new(egress::Egress::new(Arc::new(egress::NftCommand))),
            pools: Mutex::new(pool::Pools::default()),
            pool_wake: tokio::sync::Notify::new(),
            creates: Default::default(),
            users: Default::default(),
            cgroup_v2,
        }),
    };
    pool::make::remove_leftovers(&agent.inner).await?;
    // Each running kernel's network and egress spec, for the table loaded below.
    let mut bridges = Vec::new();
    let listed = list::containers(&agent.inner).await?;
    let with_container: HashSet<Uuid> = listed.iter().map(|l| l.kernel).collect();
    for list::Listed {
        kernel,
        mut labels,
        never_started,
    } in listed
    {
        if never_started {
            // A creation cut off before its start (the agent died): nobody was told of
            // this kernel, so it goes without a report; its creator asks again.
            tracing::info!(kernel = %kernel, "removing a kernel whose creation was cut off");
            destroy::remove(&agent.inner, kernel).await?;
            continue;
        }
        pool::claim::session_labels(&agent.inner.dirs(kernel).root, &mut labels);
        agent.inner.restore(kernel, &labels);
        bridges.push(list::kernel_network(&labels));
        watch::spawn(&agent.inner, kernel);
    }
    // A kernel's directory whose container is gone: its removal was cut off (it follows
    // the kernel's stop, after the session ended), so nobody wants it any more.
    for kernel in list::kernel_dirs(&agent.inner).await {
        if !with_container.contains(&kernel) {
            tracing::info!(kernel = %kernel, "removing the directory of a kernel whose container is gone");
            if let Err(e) = destroy::remove(&agent.inner, kernel).await {
                tracing::warn!(kernel = %kernel, error = %e, "cannot remove a kernel's directory");
            }
        }
    }
    // Cluster networks a crash left behind (none of their containers is left) go.
    netpool::prune(&agent.inner).await;
    isolation::ensure(&agent.inner).await?;
    egress::restore(&agent.inner, bridges).await;
    // Images built or loaded on this node later are reported as they appear.
    let seen = crate::engine::list::images(&agent.inner.engine)
        .await
        .unwrap_or_default();
    list::watch_images(&agent.inner, &seen);
    let targets = agent.inner.config.warm_pool.clone();
    pool::fill::set_targets(&agent.inner, pool::fill::Source::Node, targets).await;
    pool::fill::spawn(&agent.inner);
    Ok(agent)
}

//! Starting a manager: the one place that starts its background tasks. A process (`baid`)
//! parses its flags, opens the store, builds its agents and calls [`start`]; it then serves
//! [`crate::api::router`] and nothing else.

use crate::state::Manager;
use bai_control::{lifecycle, monitor, remote, scheduler};
use bai_core::agent::{AgentError, AgentRpc};
use bai_ground::agents::AgentHandle;
use bai_ground::config::ManagerConfig;
use bai_store::Store;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("agent failed to start: {0}")]
    Agent(#[from] AgentError),
    #[error("cannot read the data folders: {0}")]
    Store(#[from] bai_store::StoreError),
    #[error("reconciliation at start failed: {0}")]
    Reconcile(#[source] anyhow::Error),
    #[error("{0}")]
    AgentListener(String),
}

/// A started manager: its state and the agents it runs with.
pub struct Started {
    pub manager: Arc<Manager>,
    pub agents: Vec<Arc<AgentHandle>>,
}

/// Builds the manager, registers `agents` (each watched for kernel exits), remounts quota
/// folders, reconciles the store with what the agents run, and starts the scheduler, the
/// sweeper, the monitor and the app proxies' closer.
pub async fn start(
    store: Arc<Store>,
    config: ManagerConfig,
    agents: Vec<Arc<dyn AgentRpc>>,
) -> Result<Started, StartError> {
    let m = Manager::new(store, config);
    remount_quota_folders(&m).await?;
    let mut handles = Vec::with_capacity(agents.len());
    for rpc in agents {
        let h = m.agents.register(&m.store, rpc).await?;
        lifecycle::watch::spawn(m.lifecycle.clone(), h.clone());
        handles.push(h);
    }
    // Remote agents the database knows wait, disconnected, until they dial in.
    remote::connect::restore(&m.remote);
    lifecycle::reconcile::reconcile(&m.lifecycle)
        .await
        .map_err(StartError::Reconcile)?;
    if let Some(addr) = m.config.agent_listen {
        remote::listener::start(&m.remote, addr)
            .await
            .map_err(StartError::AgentListener)?;
    }
    bai_control::images::registry::refresh(&m.images).await;
    bai_control::images::registry::spawn_refresher(&m.images);
    bai_control::images::registry::publish_local(&m.images);
    remote::states::spawn(m.remote.clone());
    scheduler::spawn(m.scheduler.clone());
    lifecycle::timeouts::spawn_sweeper(m.lifecycle.clone());
    monitor::round::spawn(m.monitor.clone());
    spawn_proxy_closer(m.clone());
    crate::heap::spawn(&m);
    bai_control::pools::spawn(m.pools.clone());
    bai_ground::audit::spawn_pruner(m.store.clone(), m.config.audit_retention);
    m.web_sessions.spawn_sweeper();
    bai_control::lifecycle::retention::spawn_pruner(
        m.store.clone(),
        m.config.session_detail_retention,
    );
    bai_serving::reconcile::spawn(m.serving.clone());
    bai_serving::autoscale::spawn(m.serving.clone());
    // SFTP sessions an earlier run left have no listener now: they end.
    let reaper = m.clone();
    tokio::spawn(async move { crate::sftp::reap(&reaper).await });
    Ok(Started {
        manager: m,
        agents: handles,
    })
}

/// Folders with a quota are filesystems of their own: mount them again after a reboot (on a
/// blocking thread: `mount` may take a while). A folder whose host is no longer configured
/// stays in the database, unreachable.
async fn remount_quota_folders(m: &Arc<Manager>) -> Result<(), StartError> {
    let folders = m.store.vfolders(None)?;
    let m = m.clone();
    let joined = tokio::task::spawn_blocking(move || {
        for v in folders {
            if m.storage.host(&v.host).is_none() {
                tracing::warn!(
                    vfolder = %v.id, host = %v.host,
                    "data folder {:?} is on a storage host that is not configured; its files are out of reach",
                    v.name
                );
            } else if v.quota_bytes.is_some()
                && let Err(e) = m.storage.mount_quota(&v)
            {
                tracing::error!(vfolder = %v.id, error = %e.msg, "cannot mount a quota folder");
            }
        }
    })
    .await;
    if let Err(e) = joined {
        tracing::error!(error = %e, "remounting quota folders stopped");
    }
    Ok(())
}

/// Closes a session's app proxies when it starts terminating.
fn spawn_proxy_closer(m: Arc<Manager>) {
    let mut rx = m.bus.subscribe();
    tokio::spawn(async move {
        loop {
            match rx.recv().await {
                Ok(ev) if bai_control::proxy::ends_session(ev.kind) => {
                    let n = m.proxies.close_session(ev.session_id);
                    if n > 0 {
                        tracing::info!(session = %ev.session_id, closed = n, "app proxies closed");
                    }
                }
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            }
        }
    });
}

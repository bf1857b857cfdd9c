//! An admitted agent's control link: it is asked what it is, put in the registry (the same
//! handle when it comes back), and reconciled: kernels still wanted resume, kernels the
//! manager ended meanwhile are destroyed, sessions whose kernel vanished end.

use super::Remote;
use crate::lifecycle;
use bai_core::agent::AgentInfo;
use bai_ground::agents::AgentHandle;
use bai_ground::agents::slot::AgentSlot;
use bai_link::hello::Hello;
use bai_link::remote::{RemoteAgent, RemoteShared};
use bai_link::{Link, Side};
use bai_store::{AgentRow, AgentTokenRow};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// The registry's handle for a remote agent: the one it had, or a new one (watched for
/// its kernels' exits from now on).
pub fn handle_for(remote: &Arc<Remote>, id: &str, info: AgentInfo) -> Arc<AgentHandle> {
    if let Some(h) = remote.agents.get(id)
        && h.remote.is_some()
    {
        return h;
    }
    let shared = RemoteShared::new(id, remote.tunnels.clone())
        .with_retry_window(remote.config.agent_lost_after)
        .with_term(remote.config.lease_term);
    let slot = Arc::new(AgentSlot::new(shared, remote.config.agent_lost_after));
    let drained = remote
        .store
        .agent_row(id)
        .ok()
        .flatten()
        .is_some_and(|r| r.drained);
    let h = Arc::new(AgentHandle {
        id: id.to_string(),
        rpc: slot.clone(),
        info: RwLock::new(info),
        alive: AtomicBool::new(true),
        drained: AtomicBool::new(drained),
        remote: Some(slot),
    });
    remote.agents.add(h.clone());
    lifecycle::watch::spawn(remote.lifecycle.clone(), h.clone());
    h
}

/// Handles for the remote agents the database knows, disconnected until they dial in (at
/// start: their sessions are neither touched nor rescheduled before they come back or
/// are gone).
pub fn restore(remote: &Arc<Remote>) {
    let rows = match remote.store.agent_rows() {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "cannot read the known agents");
            return;
        }
    };
    for row in rows.into_iter().filter(|r| r.token_id.is_some()) {
        let info = row
            .info
            .as_deref()
            .and_then(|i| serde_json::from_str::<AgentInfo>(i).ok())
            .unwrap_or_else(|| empty_info(&row.id, &row.scaling_group));
        let h = handle_for(remote, &row.id, info);
        if let Some(slot) = &h.remote {
            *slot.address.write().unwrap_or_else(|p| p.into_inner()) = row.address.clone();
            *slot.token_id.write().unwrap_or_else(|p| p.into_inner()) = row.token_id.clone();
        }
    }
}

fn empty_info(id: &str, group: &str) -> AgentInfo {
    AgentInfo {
        id: id.to_string(),
        region: String::new(),
        scaling_group: group.to_string(),
        architecture: String::new(),
        capacity: Default::default(),
        images: vec![],
        version: String::new(),
        devices: vec![],
        storage_hosts: Default::default(),
        registry: None,
        egress_error: None,
        withheld: None,
        kernels_unreachable: false,
        size: None,
        kernel_most: Default::default(),
    }
}

/// Serves an admitted control connection until it ends.
pub async fn connected<IO>(
    remote: &Arc<Remote>,
    io: IO,
    hello: Hello,
    peer: SocketAddr,
    token: AgentTokenRow,
) where
    IO: AsyncRead + AsyncWrite + Send + 'static,
{
    let keepalive = Duration::from_millis(hello.heartbeat_ms.clamp(500, 60_000));
    let (link, inbound) = Link::start(io, Side::Listener, keepalive);
    // The handle first (not schedulable before its link is attached), so the link's
    // events and heartbeats go where the registry looks.
    let h = handle_for(
        remote,
        &hello.agent_id,
        empty_info(&hello.agent_id, &token.scaling_group),
    );
    let Some(slot) = h.remote.clone() else {
        link.close();
        return;
    };
    let agent = RemoteAgent::new(link.clone(), inbound, slot.shared.clone());
    let mut info = match tokio::time::timeout(
        keepalive * 3,
        bai_core::agent::AgentRpc::info(&agent),
    )
    .await
    {
        Ok(Ok(i)) if i.id == hello.agent_id => i,
        other => {
            tracing::warn!(agent = %hello.agent_id, %peer, answer = ?other.map(|r| r.map(|i| i.id)), "a joining agent did not say what it is");
            link.close();
            return;
        }
    };
    info.scaling_group = token.scaling_group.clone();
    *h.info.write().unwrap_or_else(|p| p.into_inner()) = info.clone();
    slot.attach(
        agent,
        peer.to_string(),
        token.id.clone(),
        hello.version.clone(),
    );
    let was_gone = slot.gone.swap(false, Ordering::Relaxed);
    let row = AgentRow {
        id: h.id.clone(),
        token_id: Some(token.id.clone()),
        credential_hash: None,
        scaling_group: token.scaling_group.clone(),
        address: peer.to_string(),
        info: serde_json::to_string(&info).ok(),
        drained: h.is_drained(),
        first_seen: String::new(),
        last_seen: String::new(),
    };
    if let Err(e) = crate::images::aliases::register(&remote.store, &info) {
        tracing::warn!(agent = %h.id, error = %e, "cannot register the agent's image aliases");
    }
    if let Err(e) = remote.store.upsert_agent(&row) {
        tracing::error!(agent = %h.id, error = %e, "cannot record the agent");
    }
    tracing::info!(
        agent = %h.id, %peer, group = %token.scaling_group, version = %hello.version,
        cores = %bai_core::resources::format_cpu(info.capacity.cpu_milli),
        images = info.images.len(), was_gone,
        "agent connected"
    );
    if let Err(e) = lifecycle::reconcile::reconcile_agent(&remote.lifecycle, &h).await {
        tracing::warn!(agent = %h.id, error = %e, "reconciling the agent failed; it is tried again when it reconnects");
    }
    remote.bus.wake_scheduler();
    let remote = remote.clone();
    tokio::spawn(async move {
        link.closed().await;
        if !slot.connected() {
            tracing::warn!(agent = %h.id, "agent disconnected; nothing new is placed there");
        }
        remote.bus.wake_scheduler();
    });
}

//! [`AgentSlot`]: a remote agent as the manager holds it across reconnects. It is an
//! `AgentRpc` like the in-process agent; while its link is down every call fails at once with
//! `Unreachable`, and its event stream outlives each link.

use async_trait::async_trait;
use bai_core::agent::{
    AgentError, AgentEvent, AgentInfo, AgentRpc, ExecEvent, ExecRequest, KernelCreated, KernelExit,
    KernelSpec,
};
use bai_core::stats::KernelStats;
use bai_link::remote::{RemoteAgent, RemoteShared};
use futures::StreamExt;
use futures::stream::BoxStream;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;
use uuid::Uuid;

/// Where a remote agent stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum AgentStatus {
    /// Connected and heard from within the bound: sessions may be placed on it.
    Alive,
    /// Its link is down (or silent) but not yet for `lost_after`: nothing new goes there,
    /// its sessions are left alone.
    Disconnected,
    /// Not heard from for `lost_after`: its sessions are degraded (`agent-lost`).
    Lost,
    /// Away for `gone_after`: its sessions ended with `agent-lost`.
    Gone,
}

impl AgentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentStatus::Alive => "ALIVE",
            AgentStatus::Disconnected => "DISCONNECTED",
            AgentStatus::Lost => "LOST",
            AgentStatus::Gone => "GONE",
        }
    }
}

/// Legal moves: any state → ALIVE on a (re)connect; ALIVE → DISCONNECTED when the link drops;
/// DISCONNECTED/ALIVE (silent) → LOST after `lost_after`; LOST → GONE after `gone_after`.
pub fn status_of(
    connected: bool,
    gone: bool,
    silent_for: Duration,
    lost_after: Duration,
) -> AgentStatus {
    if gone && !connected {
        AgentStatus::Gone
    } else if silent_for >= lost_after {
        AgentStatus::Lost
    } else if connected {
        AgentStatus::Alive
    } else {
        AgentStatus::Disconnected
    }
}

pub struct AgentSlot {
    pub shared: RemoteShared,
    current: RwLock<Option<RemoteAgent>>,
    /// Where it last connected from.
    pub address: RwLock<String>,
    /// The join token that admitted it.
    pub token_id: RwLock<Option<String>>,
    /// Its sessions were ended because it stayed away (cleared when it comes back).
    pub gone: AtomicBool,
    /// Unix ms when its current link was made (0: never in this manager's life).
    pub connected_ms: AtomicI64,
    /// Its version, as its hello said.
    pub version: RwLock<String>,
    lost_after: Duration,
}

fn read<T: Clone>(l: &RwLock<T>) -> T {
    l.read().unwrap_or_else(|p| p.into_inner()).clone()
}

impl AgentSlot {
    pub fn new(shared: RemoteShared, lost_after: Duration) -> AgentSlot {
        AgentSlot {
            version: RwLock::new(String::new()),
            lost_after,
            shared,
            current: RwLock::new(None),
            address: RwLock::new(String::new()),
            token_id: RwLock::new(None),
            gone: AtomicBool::new(false),
            connected_ms: AtomicI64::new(0),
        }
    }

    /// Puts a new link in place (closing the old one, if any).
    pub fn attach(&self, agent: RemoteAgent, address: String, token_id: String, version: String) {
        *self.version.write().unwrap_or_else(|p| p.into_inner()) = version;
        self.shared
            .heartbeat_ms
            .store(bai_core::stats::now_ms(), Ordering::Relaxed);
        self.connected_ms
            .store(bai_core::stats::now_ms(), Ordering::Relaxed);
        let old = self
            .current
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .replace(agent);
        if let Some(old) = old {
            old.link().close();
        }
        *self.address.write().unwrap_or_else(|p| p.into_inner()) = address;
        *self.token_id.write().unwrap_or_else(|p| p.into_inner()) = Some(token_id);
    }

    /// Closes the current link (token revoked, agent removed).
    pub fn disconnect(&self) {
        if let Some(a) = self
            .current
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            a.link().close();
        }
    }

    pub fn connected(&self) -> bool {
        read(&self.current).is_some_and(|a| !a.link().is_closed())
    }

    pub fn last_heartbeat_ms(&self) -> i64 {
        self.shared.heartbeat_ms.load(Ordering::Relaxed)
    }

    /// Unix ms since when it has not been heard from (its last heartbeat).
    pub fn silent_for(&self) -> Duration {
        Duration::from_millis((bai_core::stats::now_ms() - self.last_heartbeat_ms()).max(0) as u64)
    }

    pub fn status(&self) -> AgentStatus {
        status_of(
            self.connected(),
            self.gone.load(Ordering::Relaxed),
            self.silent_for(),
            self.lost_after,
        )
    }

    fn agent(&self) -> Result<RemoteAgent, AgentError> {
        match read(&self.current) {
            Some(a) if !a.link().is_closed() => Ok(a),
            _ => Err(AgentError::Unreachable(format!(
                "agent {} is not connected",
                self.shared.agent_id
            ))),
        }
    }
}

#[async_trait]
impl AgentRpc for AgentSlot {
    async fn info(&self) -> Result<AgentInfo, AgentError> {
        self.agent()?.info().await
    }
    async fn create_kernel(&self, spec: KernelSpec) -> Result<KernelCreated, AgentError> {
        self.agent()?.create_kernel(spec).await
    }
    async fn warm_pool(
        &self,
        targets: Option<Vec<bai_core::pool::PoolTarget>>,
    ) -> Result<bai_core::pool::PoolReport, AgentError> {
        self.agent()?.warm_pool(targets).await
    }
    async fn destroy_kernel(&self, kernel_id: Uuid) -> Result<KernelExit, AgentError> {
        self.agent()?.destroy_kernel(kernel_id).await
    }
    async fn terminate_processes(&self, kernel_id: Uuid) -> Result<(), AgentError> {
        self.agent()?.terminate_processes(kernel_id).await
    }
    async fn cluster_hosts(
        &self,
        session_id: Uuid,
        hosts: Vec<(String, std::net::IpAddr)>,
    ) -> Result<(), AgentError> {
        self.agent()?.cluster_hosts(session_id, hosts).await
    }
    async fn execute(
        &self,
        kernel_id: Uuid,
        req: ExecRequest,
    ) -> Result<BoxStream<'static, ExecEvent>, AgentError> {
        self.agent()?.execute(kernel_id, req).await
    }
    async fn upload_files(
        &self,
        kernel_id: Uuid,
        files: Vec<(String, bytes::Bytes)>,
    ) -> Result<(), AgentError> {
        self.agent()?.upload_files(kernel_id, files).await
    }
    async fn download_files(
        &self,
        kernel_id: Uuid,
        paths: Vec<String>,
    ) -> Result<Vec<(String, bytes::Bytes)>, AgentError> {
        self.agent()?.download_files(kernel_id, paths).await
    }
    async fn app_address(
        &self,
        kernel_id: Uuid,
        port: u16,
    ) -> Result<std::net::SocketAddr, AgentError> {
        self.agent()?.app_address(kernel_id, port).await
    }
    async fn start_app(&self, kernel_id: Uuid, name: &str) -> Result<(), AgentError> {
        self.agent()?.start_app(kernel_id, name).await
    }
    async fn logs(&self, kernel_id: Uuid) -> Result<String, AgentError> {
        self.agent()?.logs(kernel_id).await
    }
    async fn list_files(
        &self,
        kernel_id: Uuid,
        path: String,
    ) -> Result<Vec<bai_core::agent::FileEntry>, AgentError> {
        self.agent()?.list_files(kernel_id, path).await
    }
    async fn kernel_stats(&self, kernel_id: Uuid) -> Result<KernelStats, AgentError> {
        self.agent()?.kernel_stats(kernel_id).await
    }
    async fn list_kernels(&self) -> Result<Vec<Uuid>, AgentError> {
        self.agent()?.list_kernels().await
    }
    async fn commit_kernel(
        &self,
        req: bai_core::agent::CommitRequest,
    ) -> Result<bai_core::agent::ImageInfo, AgentError> {
        self.agent()?.commit_kernel(req).await
    }
    async fn remove_image(&self, reference: String) -> Result<(), AgentError> {
        self.agent()?.remove_image(reference).await
    }
    async fn tag_image(&self, source: String, target: String) -> Result<(), AgentError> {
        self.agent()?.tag_image(source, target).await
    }
    async fn pull_image(
        &self,
        reference: String,
    ) -> Result<bai_core::agent::ImageInfo, AgentError> {
        self.agent()?.pull_image(reference).await
    }
    async fn push_image(&self, reference: String) -> Result<(), AgentError> {
        self.agent()?.push_image(reference).await
    }
    fn events(&self) -> BoxStream<'static, AgentEvent> {
        tokio_stream::wrappers::BroadcastStream::new(self.shared.events.subscribe())
            .filter_map(|r| futures::future::ready(r.ok()))
            .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AgentStatus::*;

    #[test]
    fn an_agent_is_lost_after_the_bound_and_gone_only_while_away() {
        let bound = Duration::from_secs(40);
        let s = |c, g, secs| status_of(c, g, Duration::from_secs(secs), bound);
        assert_eq!(s(true, false, 0), Alive);
        assert_eq!(s(false, false, 39), Disconnected);
        assert_eq!(s(false, false, 40), Lost);
        // A link that is up but silent (a cut cable) is lost too.
        assert_eq!(s(true, false, 41), Lost);
        assert_eq!(s(false, true, 700), Gone);
        // Coming back after being gone: alive again.
        assert_eq!(s(true, true, 0), Alive);
    }
}

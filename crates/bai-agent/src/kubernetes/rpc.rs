//! The agent RPC interface on the Kubernetes backend: each call mapped to the pod, the
//! runner or the API server; what this slice does not do answers a clear error.

use super::ready::{REPORT_WAIT, wait_address};
use super::{KubernetesAgent, images, lifecycle, normalize_arch, offer};
use crate::engine;
use crate::krunner_proto::request_line;
use crate::runner;
use async_trait::async_trait;
use bai_core::agent::{
    AgentError, AgentEvent, AgentInfo, AgentRpc, ExecEvent, ExecRequest, KernelCreated, KernelExit,
    KernelSpec,
};
use futures::stream::BoxStream;
use uuid::Uuid;

#[async_trait]
impl AgentRpc for KubernetesAgent {
    async fn info(&self) -> Result<AgentInfo, AgentError> {
        let inner = &self.inner;
        let c = &inner.config;
        let offer = offer::read(inner).await?;
        let kernel_most = offer
            .sharing
            .as_ref()
            .map(super::gpus::GpuSharing::kernel_most)
            .unwrap_or_default();
        let (capacity, size, images) = (offer.capacity, offer.size, offer.images);
        let arch = offer
            .arch
            .unwrap_or_else(|| crate::host::architecture().into());
        Ok(AgentInfo {
            id: c.agent_id.clone(),
            region: "kubernetes".into(),
            scaling_group: c.scaling_group.clone(),
            architecture: normalize_arch(&arch),
            capacity,
            images,
            version: env!("CARGO_PKG_VERSION").into(),
            devices: offer.devices,
            storage_hosts: c
                .storage_hosts
                .iter()
                .map(|(k, v)| (k.clone(), v.display().to_string()))
                .collect(),
            registry: None,
            egress_error: (c.network_policies == super::Enforcement::None)
                .then(|| super::egress::NOT_ENFORCED.into()),
            withheld: offer.withheld,
            kernels_unreachable: offer.unreachable,
            size: Some(size),
            kernel_most,
        })
    }

    async fn create_kernel(&self, spec: KernelSpec) -> Result<KernelCreated, AgentError> {
        lifecycle::create(&self.inner, spec).await
    }

    async fn warm_pool(
        &self,
        targets: Option<Vec<bai_core::pool::PoolTarget>>,
    ) -> Result<bai_core::pool::PoolReport, AgentError> {
        let mut pools = self.inner.pools();
        if let Some(t) = targets {
            pools.set_targets(t);
            self.inner.pool_wake.notify_one();
        }
        Ok(pools.report())
    }

    async fn destroy_kernel(&self, kernel_id: Uuid) -> Result<KernelExit, AgentError> {
        lifecycle::destroy(&self.inner, kernel_id).await
    }

    async fn terminate_processes(&self, kernel_id: Uuid) -> Result<(), AgentError> {
        runner::terminate(self.runner(kernel_id).await?, kernel_id).await
    }

    async fn cluster_hosts(
        &self,
        session_id: Uuid,
        hosts: Vec<(String, std::net::IpAddr)>,
    ) -> Result<(), AgentError> {
        super::handover::hosts_told(&self.inner, session_id, hosts).await
    }

    async fn execute(
        &self,
        kernel_id: Uuid,
        req: ExecRequest,
    ) -> Result<BoxStream<'static, ExecEvent>, AgentError> {
        runner::request(
            self.runner(kernel_id).await?,
            kernel_id,
            request_line(&req)?,
        )
        .await
    }

    async fn upload_files(
        &self,
        kernel_id: Uuid,
        files: Vec<(String, bytes::Bytes)>,
    ) -> Result<(), AgentError> {
        if !self.inner.knows(kernel_id) {
            return Err(AgentError::KernelNotFound(kernel_id));
        }
        if self.inner.config.runner_reach == super::RunnerReach::Network {
            // A detached pod's home is its own: the runner writes it.
            return super::handover::upload(&self.inner, kernel_id, files).await;
        }
        // The pod's /home/work is a hostPath of this node: written as on Docker.
        crate::kernel_files::upload::into_work(&self.inner.dirs(kernel_id).work, kernel_id, files)
            .await
    }

    async fn download_files(
        &self,
        kernel_id: Uuid,
        paths: Vec<String>,
    ) -> Result<Vec<(String, bytes::Bytes)>, AgentError> {
        // Read by the kernel's runner as the kernel's user, so mounted folders are included
        // and no link leads to the node.
        runner::download_all(self.runner(kernel_id).await?, kernel_id, paths).await
    }

    async fn app_address(
        &self,
        kernel_id: Uuid,
        port: u16,
    ) -> Result<std::net::SocketAddr, AgentError> {
        if self.inner.state(kernel_id).is_none() {
            return Err(AgentError::KernelNotFound(kernel_id));
        }
        // A kernel is ready when its runner answers, which may be a moment before the
        // kubelet reports the pod running with its IP.
        match wait_address(&self.inner, kernel_id, REPORT_WAIT).await {
            Some(ip) => Ok(std::net::SocketAddr::new(ip, port)),
            None => Err(AgentError::NotReady("the kernel's pod has no IP".into())),
        }
    }

    async fn start_app(&self, kernel_id: Uuid, name: &str) -> Result<(), AgentError> {
        runner::start_app(self.runner(kernel_id).await?, kernel_id, name).await
    }

    async fn logs(&self, kernel_id: Uuid) -> Result<String, AgentError> {
        if !self.inner.knows(kernel_id) {
            return Err(AgentError::KernelNotFound(kernel_id));
        }
        lifecycle::logs(&self.inner, kernel_id)
            .await
            .map_err(AgentError::from)
    }

    async fn list_files(
        &self,
        kernel_id: Uuid,
        path: String,
    ) -> Result<Vec<bai_core::agent::FileEntry>, AgentError> {
        runner::list_files(self.runner(kernel_id).await?, kernel_id, &path).await
    }

    async fn kernel_stats(
        &self,
        kernel_id: Uuid,
    ) -> Result<bai_core::stats::KernelStats, AgentError> {
        runner::stats(self.runner(kernel_id).await?, kernel_id).await
    }

    async fn list_kernels(&self) -> Result<Vec<Uuid>, AgentError> {
        lifecycle::list(&self.inner).await.map_err(AgentError::from)
    }

    async fn commit_kernel(
        &self,
        req: bai_core::agent::CommitRequest,
    ) -> Result<bai_core::agent::ImageInfo, AgentError> {
        let engine = images::engine(&self.inner, "committing a session as an image")?;
        if !self.inner.knows(req.kernel_id) {
            return Err(AgentError::KernelNotFound(req.kernel_id));
        }
        let container = images::container_of(&self.inner, req.kernel_id).await?;
        engine::commit::commit(engine, &container, req).await
    }

    async fn remove_image(&self, reference: String) -> Result<(), AgentError> {
        let engine = images::engine(&self.inner, "removing an image")?;
        engine::commit::remove(engine, &reference).await
    }

    async fn tag_image(&self, source: String, target: String) -> Result<(), AgentError> {
        let engine = images::engine(&self.inner, "tagging an image")?;
        engine::commit::tag(engine, &source, &target).await
    }

    async fn pull_image(
        &self,
        reference: String,
    ) -> Result<bai_core::agent::ImageInfo, AgentError> {
        let engine = images::engine(&self.inner, "pulling an image")?;
        engine::registry::pull(engine, &reference).await
    }

    async fn push_image(&self, reference: String) -> Result<(), AgentError> {
        let engine = images::engine(&self.inner, "pushing an image")?;
        engine::registry::push(engine, &reference).await
    }

    fn events(&self) -> BoxStream<'static, AgentEvent> {
        self.inner.events.subscribe()
    }
}

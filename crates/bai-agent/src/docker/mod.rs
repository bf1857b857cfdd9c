//! [`DockerAgent`]: the agent RPC interface implemented on a local Docker engine.
//!
//! Every kernel is one container named `bai-k-<kernel_id>`, labelled with this agent's id,
//! running `bai-krunner` (bind-mounted read-only) under the engine's init. The agent talks
//! to krunner over `data_dir/kernels/<kernel_id>/run/krunner.sock`. A watcher task per
//! kernel reports kernels that end on their own; `destroy_kernel` reports the others.

mod adopt;
pub(crate) mod body;
mod cluster;
mod connect;
pub(crate) mod create;
pub(crate) mod destroy;
pub mod egress;
mod exec;
mod files;
mod inspect;
mod isolation;
pub(crate) mod list;
mod netpool;
mod overlay;
pub(crate) mod place;
pub mod pool;
pub(crate) mod ready;
mod stats;
mod stop;
mod users;
pub(crate) mod watch;

use crate::accel::alloc::AllocMap;
use crate::accel::{Accelerator, DeviceAlloc};
use crate::cores::CoreMap;
use crate::host;
use crate::paths::KernelDirs;
use async_trait::async_trait;
use bai_core::agent::{
    AgentError, AgentEvent, AgentInfo, AgentRpc, ExecEvent, ExecRequest, KernelCreated, KernelExit,
    KernelSpec,
};
use bai_core::resources::ResourceSlots;
use bollard::Docker;
use futures::StreamExt;
use futures::stream::BoxStream;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::broadcast;
use tokio::task::AbortHandle;
use uuid::Uuid;

/// Label on every container this agent owns (value: the agent id).
pub const LABEL_AGENT: &str = "ai.bai.agent";
/// Label with the kernel id.
pub const LABEL_KERNEL: &str = "ai.bai.kernel";
/// Label with the session id.
pub const LABEL_SESSION: &str = "ai.bai.session";
/// Images that are kernels carry this label.
pub use crate::engine::LABEL_KERNELSPEC;
/// Most bytes of logs kept from a finished kernel.
pub const LOG_TAIL_BYTES: usize = 256 * 1024;
/// Label with the accelerator devices a kernel holds (`0=500,1=1000`).
pub const LABEL_DEVICES: &str = "ai.bai.devices";
/// Label with the cores a kernel is pinned to (`0,1`).
pub const LABEL_CPUSET: &str = "ai.bai.cpuset";

#[derive(Debug, Clone)]
pub struct DockerAgentConfig {
    pub agent_id: String,
    pub scaling_group: String,
    /// Per-kernel directories go under `data_dir/kernels/<kernel_id>/{work,run}`.
    pub data_dir: PathBuf,
    /// The krunner binary, bind-mounted read-only into every container.
    pub krunner_path: PathBuf,
    /// Memory (bytes) kept back from the detected total.
    pub reserved_mem: u64,
    /// CPU (milli-cores) kept back from the detected total.
    pub reserved_cpu_milli: u64,
    /// The accelerator plugin, if the node has one.
    pub accelerator: Option<Arc<dyn Accelerator>>,
    /// Storage hosts this node mounts (a remote agent declares them; name → path).
    pub storage_hosts: BTreeMap<String, PathBuf>,
    /// A remote agent: the manager's host as it dials it (where a multi-node session's
    /// tunnel reaches the kernels of the manager's own agent).
    pub manager_host: Option<String>,
    /// The cluster's image registry (`host:port`) as this node reaches it.
    pub registry: Option<String>,
    /// Kernels to keep started for these shapes (the warm pool; empty: none).
    pub warm_pool: Vec<bai_core::pool::PoolTarget>,
}

pub(crate) struct Inner {
    pub docker: Docker,
    pub config: DockerAgentConfig,
    pub events: broadcast::Sender<AgentEvent>,
    /// The engine's image work (commit, list, tag, pull, push).
    pub engine: crate::engine::Engine,
    /// Kernels whose end is being handled (by destroy or by the watcher): one owner each.
    ending: Mutex<HashSet<Uuid>>,
    /// Woken each time an end is released, for those waiting on one ([`Inner::wait_end`]).
    ended: tokio::sync::Notify,
    /// The watcher task of each kernel, so destroy can stop it first.
    watchers: Mutex<HashMap<Uuid, AbortHandle>>,
    /// Which accelerator parts each kernel holds.
    devices: Mutex<AllocMap>,
    /// Which cores each pinned kernel holds.
    cores: Mutex<CoreMap>,
    /// Cluster networks: the spare bridge and which session holds which. Held while one is
    /// looked up and made, so the kernels of a session made at once share one.
    pub networks: tokio::sync::Mutex<netpool::Networks>,
    /// The egress rules this agent enforces on its kernel bridges.
    pub egress: tokio::sync::Mutex<egress::Egress>,
    /// The warm pools, and the wake-up of the task that fills them.
    pools: Mutex<pool::Pools>,
    pub pool_wake: tokio::sync::Notify,
    /// Creates in flight, which the pools' refill gives way to.
    pub creates: pool::busy::Creates,
    /// Whether the engine runs containers under cgroup v2 (its CPU weights differ).
    pub cgroup_v2: bool,
    /// Which images' containers need the kernel's user added, by image id.
    pub users: users::Known,
}

fn lock<T>(lock: &Mutex<T>) -> MutexGuard<'_, T> {
    lock.lock().unwrap_or_else(|p| p.into_inner())
}

impl Inner {
    pub fn container_name(kernel_id: Uuid) -> String {
        format!("bai-k-{kernel_id}")
    }

    pub fn dirs(&self, kernel_id: Uuid) -> KernelDirs {
        KernelDirs::new(&self.config.data_dir, kernel_id)
    }

    /// Claims the right to report and clean up a kernel's end; false if already claimed.
    pub fn claim_end(&self, kernel_id: Uuid) -> bool {
        lock(&self.ending).insert(kernel_id)
    }

    pub fn release_end(&self, kernel_id: Uuid) {
        lock(&self.ending).remove(&kernel_id);
        self.ended.notify_waiters();
    }

    /// Whether this agent has the kernel's container as far as it knows: watched, or its end
    /// being handled. Every container it has is one or the other (at start it watches what it
    /// finds and removes what never started), so a kernel it does not know has none.
    pub fn knows(&self, kernel_id: Uuid) -> bool {
        lock(&self.watchers).contains_key(&kernel_id) || lock(&self.ending).contains(&kernel_id)
    }

    /// Waits until nobody handles the kernel's end any more: its container and directory
    /// are gone (or its cleanup failed and was logged).
    pub async fn wait_end(&self, kernel_id: Uuid) {
        loop {
            let woken = self.ended.notified();
            tokio::pin!(woken);
            // Registered before the check, so a release between the two is not missed.
            woken.as_mut().enable();
            if !lock(&self.ending).contains(&kernel_id) {
                return;
            }
            woken.await;
        }
    }

    pub fn set_watcher(&self, kernel_id: Uuid, handle: AbortHandle) {
        if let Some(old) = lock(&self.watchers).insert(kernel_id, handle) {
            old.abort();
        }
    }

    /// Stops the kernel's watcher (if any) so it cannot report an end we handle ourselves.
    pub fn stop_watcher(&self, kernel_id: Uuid) {
        if let Some(h) = lock(&self.watchers).remove(&kernel_id) {
            h.abort();
        }
    }

    /// Called by a watcher that is done.
    pub fn forget_watcher(&self, kernel_id: Uuid) {
        lock(&self.watchers).remove(&kernel_id);
    }

    pub fn accelerator(&self) -> Option<&Arc<dyn Accelerator>> {
        self.config.accelerator.as_ref()
    }

    /// Gives a kernel its accelerator parts (none when it asks for none).
    pub fn allocate_devices(&self, kernel_id: Uuid, milli: u64) -> Result<DeviceAlloc, String> {
        lock(&self.devices).allocate(kernel_id, milli)
    }

    /// Pins `n` cores for a kernel.
    pub fn allocate_cores(&self, kernel_id: Uuid, n: usize) -> Result<Vec<u32>, String> {
        lock(&self.cores).allocate(kernel_id, n)
    }

    /// The accelerator parts a kernel holds.
    pub fn held_devices(&self, kernel_id: Uuid) -> Option<DeviceAlloc> {
        lock(&self.devices).held(kernel_id)
    }

    pub fn pools(&self) -> MutexGuard<'_, pool::Pools> {
        lock(&self.pools)
    }

    /// Hands what `from` holds (devices and cores) to `to`: a pool kernel claimed.
    pub fn move_holds(&self, from: Uuid, to: Uuid) {
        let mut devices = lock(&self.devices);
        if let Some(d) = devices.release(from) {
            devices.restore(to, d);
        }
        drop(devices);
        let mut cores = lock(&self.cores);
        if let Some(c) = cores.held(from) {
            cores.release(from);
            cores.restore(to, c);
        }
    }

    /// Frees what a kernel held (devices and cores); done when its container is removed.
    pub fn release(&self, kernel_id: Uuid) {
        lock(&self.devices).release(kernel_id);
        lock(&self.cores).release(kernel_id);
    }

    /// Takes back what a running kernel holds, from its container's labels (agent restart).
    pub fn restore(&self, kernel_id: Uuid, labels: &HashMap<String, String>) {
        if let Some(a) =
            crate::owned::label(labels, LABEL_DEVICES).and_then(crate::accel::parse_alloc)
        {
            lock(&self.devices).restore(kernel_id, a);
        }
        if let Some(c) =
            crate::owned::label(labels, LABEL_CPUSET).and_then(crate::cores::parse_cpulist)
        {
            lock(&self.cores).restore(kernel_id, c);
        }
    }
}

/// The Docker-backed agent. Cheap to clone (all clones share one state).
#[derive(Clone)]
pub struct DockerAgent {
    inner: Arc<Inner>,
}

impl DockerAgent {
    /// Connects to the local Docker engine (`DOCKER_HOST` or the default socket), checks the
    /// krunner binary and the data directory, and watches this agent's existing kernels
    /// again (so kernels that ended while no agent ran are reported now).
    pub async fn connect(config: DockerAgentConfig) -> Result<DockerAgent, AgentError> {
        connect::connect(config).await
    }

    /// Before the process ends: removes what only this process knows of (the spare cluster
    /// network, the warm pool, with a kernel still being made). Kernels are left running;
    /// the next start takes them back.
    pub async fn stop(&self) {
        netpool::drop_spare(&self.inner).await;
        pool::fill::stop(&self.inner).await;
    }

    /// Sets the shapes the warm pool keeps (what `warm_pool` in the configuration set first).
    pub async fn set_warm_pool(&self, targets: Vec<bai_core::pool::PoolTarget>) {
        pool::fill::set_targets(&self.inner, pool::fill::Source::Node, targets).await;
    }

    /// How long a pool keeps its whole count after the last create of its shape
    /// ([`crate::pool_demand::IDLE_AFTER`] unless set).
    pub fn set_warm_pool_idle_after(&self, after: std::time::Duration) {
        self.inner.pools().demand.idle_after = after;
        self.inner.pool_wake.notify_one();
    }

    /// Each pool's size and what the pools did.
    pub fn warm_pool_report(&self) -> pool::PoolReport {
        pool::report(&self.inner)
    }

    /// The configuration in use (paths canonicalized).
    pub fn config(&self) -> &DockerAgentConfig {
        &self.inner.config
    }

    /// Removes this agent's containers whose kernel is not in `keep`, and kernel
    /// directories without a container. Returns how many kernels were removed.
    pub async fn cleanup_orphans(&self, keep: &[Uuid]) -> Result<usize, AgentError> {
        let mut removed = 0;
        let live = list::kernels(&self.inner).await?;
        for k in live.iter().filter(|k| !keep.contains(k)) {
            tracing::info!(kernel = %k, "removing an orphan kernel");
            destroy::destroy_now(&self.inner, *k).await?;
            removed += 1;
        }
        for k in list::kernel_dirs(&self.inner).await {
            if !keep.contains(&k) && !live.contains(&k) {
                tracing::info!(kernel = %k, "removing an orphan kernel directory");
                destroy::remove(&self.inner, k).await?;
                removed += 1;
            }
        }
        netpool::prune(&self.inner).await;
        Ok(removed)
    }
}

#[async_trait]
impl AgentRpc for DockerAgent {
    async fn info(&self) -> Result<AgentInfo, AgentError> {
        let c = &self.inner.config;
        let mem = host::total_memory()
            .unwrap_or(0)
            .saturating_sub(c.reserved_mem);
        let cpu = (host::cores() * 1000).saturating_sub(c.reserved_cpu_milli);
        let devices = c
            .accelerator
            .as_ref()
            .map(|a| a.devices().to_vec())
            .unwrap_or_default();
        let mut accel = BTreeMap::new();
        for d in &devices {
            *accel.entry(d.slot.clone()).or_insert(0) += d.capacity_milli;
        }
        Ok(AgentInfo {
            id: c.agent_id.clone(),
            region: "local".into(),
            scaling_group: c.scaling_group.clone(),
            architecture: host::architecture().into(),
            capacity: ResourceSlots {
                cpu_milli: cpu,
                mem,
                accel,
            },
            images: crate::engine::list::images(&self.inner.engine).await?,
            version: env!("CARGO_PKG_VERSION").into(),
            devices,
            storage_hosts: c
                .storage_hosts
                .iter()
                .map(|(k, v)| (k.clone(), v.display().to_string()))
                .collect(),
            registry: c.registry.clone(),
            egress_error: self.inner.egress.lock().await.error().map(str::to_string),
            withheld: None,
            kernels_unreachable: false,
            size: None,
            kernel_most: Default::default(),
        })
    }

    async fn create_kernel(&self, spec: KernelSpec) -> Result<KernelCreated, AgentError> {
        create::create(&self.inner, spec).await
    }

    async fn warm_pool(
        &self,
        targets: Option<Vec<bai_core::pool::PoolTarget>>,
    ) -> Result<bai_core::pool::PoolReport, AgentError> {
        if let Some(t) = targets {
            pool::fill::set_targets(&self.inner, pool::fill::Source::Manager, t).await;
        }
        Ok(pool::report(&self.inner))
    }

    async fn destroy_kernel(&self, kernel_id: Uuid) -> Result<KernelExit, AgentError> {
        destroy::destroy(&self.inner, kernel_id).await
    }

    async fn terminate_processes(&self, kernel_id: Uuid) -> Result<(), AgentError> {
        exec::terminate(&self.inner, kernel_id).await
    }

    async fn execute(
        &self,
        kernel_id: Uuid,
        req: ExecRequest,
    ) -> Result<BoxStream<'static, ExecEvent>, AgentError> {
        exec::execute(&self.inner, kernel_id, req).await
    }

    async fn upload_files(
        &self,
        kernel_id: Uuid,
        files: Vec<(String, bytes::Bytes)>,
    ) -> Result<(), AgentError> {
        files::upload(&self.inner, kernel_id, files).await
    }

    async fn download_files(
        &self,
        kernel_id: Uuid,
        paths: Vec<String>,
    ) -> Result<Vec<(String, bytes::Bytes)>, AgentError> {
        exec::download(&self.inner, kernel_id, paths).await
    }

    async fn app_address(
        &self,
        kernel_id: Uuid,
        port: u16,
    ) -> Result<std::net::SocketAddr, AgentError> {
        let ip = inspect::address(&self.inner, kernel_id).await?;
        Ok(std::net::SocketAddr::new(ip, port))
    }

    async fn start_app(&self, kernel_id: Uuid, name: &str) -> Result<(), AgentError> {
        exec::start_app(&self.inner, kernel_id, name).await
    }

    async fn logs(&self, kernel_id: Uuid) -> Result<String, AgentError> {
        inspect::logs(&self.inner, kernel_id, LOG_TAIL_BYTES).await
    }

    async fn list_files(
        &self,
        kernel_id: Uuid,
        path: String,
    ) -> Result<Vec<bai_core::agent::FileEntry>, AgentError> {
        exec::list_files(&self.inner, kernel_id, &path).await
    }

    async fn kernel_stats(
        &self,
        kernel_id: Uuid,
    ) -> Result<bai_core::stats::KernelStats, AgentError> {
        stats::stats(&self.inner, kernel_id).await
    }

    async fn list_kernels(&self) -> Result<Vec<Uuid>, AgentError> {
        list::kernels(&self.inner).await
    }

    async fn commit_kernel(
        &self,
        req: bai_core::agent::CommitRequest,
    ) -> Result<bai_core::agent::ImageInfo, AgentError> {
        let container = Inner::container_name(req.kernel_id);
        crate::engine::commit::commit(&self.inner.engine, &container, req).await
    }

    async fn remove_image(&self, reference: String) -> Result<(), AgentError> {
        crate::engine::commit::remove(&self.inner.engine, &reference).await
    }

    async fn tag_image(&self, source: String, target: String) -> Result<(), AgentError> {
        crate::engine::commit::tag(&self.inner.engine, &source, &target).await
    }

    async fn pull_image(
        &self,
        reference: String,
    ) -> Result<bai_core::agent::ImageInfo, AgentError> {
        crate::engine::registry::pull(&self.inner.engine, &reference).await
    }

    async fn push_image(&self, reference: String) -> Result<(), AgentError> {
        crate::engine::registry::push(&self.inner.engine, &reference).await
    }

    fn events(&self) -> BoxStream<'static, AgentEvent> {
        let rx = self.inner.events.subscribe();
        futures::stream::unfold(rx, |mut rx| async move {
            loop {
                match rx.recv().await {
                    Ok(ev) => return Some((ev, rx)),
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(missed = n, "an agent event subscriber lagged");
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
        .boxed()
    }
}

//! [`DockerAgent`]: the agent RPC interface implemented on a local Docker engine.

mod create;
mod destroy;
mod exec;
mod watch;

use crate::host;
use crate::paths::KernelDirs;
use async_trait::async_trait;
use bai_core::agent::{
    AgentError, AgentEvent, AgentInfo, AgentRpc, ExecEvent, ExecRequest, ImageInfo, KernelCreated,
    KernelExit, KernelSpec,
};
use bai_core::resources::ResourceSlots;
use bollard::Docker;
use futures::StreamExt;
use futures::stream::BoxStream;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;
use uuid::Uuid;

/// Label on every container this agent owns.
pub const LABEL_AGENT: &str = "ai.bai.agent";
pub const LABEL_KERNEL: &str = "ai.bai.kernel";
pub const LABEL_SESSION: &str = "ai.bai.session";
/// Images that are kernels carry this label.
pub const LABEL_KERNELSPEC: &str = "ai.backend.kernelspec";
/// Most logs kept from a finished kernel.
pub const LOG_TAIL_BYTES: usize = 256 * 1024;

#[derive(Debug, Clone)]
pub struct DockerAgentConfig {
    pub agent_id: String,
    pub scaling_group: String,
    /// Per-kernel directories go under `data_dir/kernels/<kernel_id>/`.
    pub data_dir: PathBuf,
    /// The krunner binary, bind-mounted read-only into every container.
    pub krunner_path: PathBuf,
    pub reserved_mem: u64,
    pub reserved_cpu_milli: u64,
}

pub(crate) struct Inner {
    pub docker: Docker,
    pub config: DockerAgentConfig,
    pub events: broadcast::Sender<AgentEvent>,
    /// Kernels whose end is being handled (by destroy or by the watcher): exactly one owner.
    pub ending: Mutex<HashSet<Uuid>>,
}

impl Inner {
    pub fn container_name(kernel_id: Uuid) -> String {
        format!("bai-k-{kernel_id}")
    }

    pub fn dirs(&self, kernel_id: Uuid) -> KernelDirs {
        KernelDirs::new(&self.config.data_dir, kernel_id)
    }

    /// Claims the right to clean up after a kernel; false if someone else already did.
    pub fn claim_end(&self, kernel_id: Uuid) -> bool {
        self.ending
            .lock()
            .map(|mut s| s.insert(kernel_id))
            .unwrap_or(false)
    }

    pub fn release_end(&self, kernel_id: Uuid) {
        if let Ok(mut s) = self.ending.lock() {
            s.remove(&kernel_id);
        }
    }
}

/// The Docker-backed agent. Cheap to clone.
#[derive(Clone)]
pub struct DockerAgent {
    inner: Arc<Inner>,
}

fn runtime(e: impl std::fmt::Display) -> AgentError {
    AgentError::Runtime(e.to_string())
}

impl DockerAgent {
    /// Connects to the local Docker engine and re-attaches watchers to this agent's kernels.
    pub async fn connect(config: DockerAgentConfig) -> Result<DockerAgent, AgentError> {
        let docker = Docker::connect_with_local_defaults().map_err(runtime)?;
        docker
            .ping()
            .await
            .map_err(|e| AgentError::Runtime(format!("Docker engine does not answer: {e}")))?;
        std::fs::create_dir_all(config.data_dir.join("kernels"))
            .map_err(|e| AgentError::Runtime(format!("cannot create kernel dirs: {e}")))?;
        let (events, _) = broadcast::channel(1024);
        let agent = DockerAgent {
            inner: Arc::new(Inner {
                docker,
                config,
                events,
                ending: Mutex::new(HashSet::new()),
            }),
        };
        for kernel in agent.list_kernels().await? {
            watch::spawn(agent.inner.clone(), kernel);
        }
        Ok(agent)
    }

    /// Removes this agent's containers that are not in `keep`.
    pub async fn cleanup_orphans(&self, keep: &[Uuid]) -> Result<usize, AgentError> {
        let mut n = 0;
        for k in self.list_kernels().await? {
            if !keep.contains(&k) {
                destroy::destroy(&self.inner, k).await?;
                n += 1;
            }
        }
        Ok(n)
    }

    async fn images(&self) -> Result<Vec<ImageInfo>, AgentError> {
        let mut filters = HashMap::new();
        filters.insert("label".to_string(), vec![LABEL_KERNELSPEC.to_string()]);
        let opts = bollard::query_parameters::ListImagesOptions {
            filters: Some(filters),
            ..Default::default()
        };
        let list = self
            .inner
            .docker
            .list_images(Some(opts))
            .await
            .map_err(runtime)?;
        Ok(list
            .into_iter()
            .filter_map(|img| {
                let name = img
                    .repo_tags
                    .iter()
                    .find(|t| *t != "<none>:<none>")?
                    .clone();
                Some(ImageInfo {
                    name,
                    digest: img.id,
                    labels: img.labels.into_iter().collect::<BTreeMap<_, _>>(),
                    size_bytes: img.size.max(0) as u64,
                })
            })
            .collect())
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
        Ok(AgentInfo {
            id: c.agent_id.clone(),
            region: "local".into(),
            scaling_group: c.scaling_group.clone(),
            architecture: host::architecture().into(),
            capacity: ResourceSlots {
                cpu_milli: cpu,
                mem,
                accel: BTreeMap::new(),
            },
            images: self.images().await?,
            version: env!("CARGO_PKG_VERSION").into(),
        })
    }

    async fn create_kernel(&self, spec: KernelSpec) -> Result<KernelCreated, AgentError> {
        create::create(&self.inner, spec).await
    }

    async fn destroy_kernel(&self, kernel_id: Uuid) -> Result<KernelExit, AgentError> {
        destroy::destroy(&self.inner, kernel_id).await
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
        exec::upload(&self.inner, kernel_id, files).await
    }

    async fn logs(&self, kernel_id: Uuid) -> Result<String, AgentError> {
        destroy::logs(&self.inner, kernel_id, None).await
    }

    async fn list_kernels(&self) -> Result<Vec<Uuid>, AgentError> {
        let mut filters = HashMap::new();
        filters.insert(
            "label".to_string(),
            vec![format!("{LABEL_AGENT}={}", self.inner.config.agent_id)],
        );
        let opts = bollard::query_parameters::ListContainersOptions {
            all: true,
            filters: Some(filters),
            ..Default::default()
        };
        let list = self
            .inner
            .docker
            .list_containers(Some(opts))
            .await
            .map_err(runtime)?;
        Ok(list
            .into_iter()
            .filter_map(|c| {
                c.labels?
                    .get(LABEL_KERNEL)
                    .and_then(|k| Uuid::parse_str(k).ok())
            })
            .collect())
    }

    fn events(&self) -> BoxStream<'static, AgentEvent> {
        let rx = self.inner.events.subscribe();
        futures::stream::unfold(rx, |mut rx| async move {
            loop {
                match rx.recv().await {
                    Ok(ev) => return Some((ev, rx)),
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(missed = n, "agent event subscriber lagged");
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
        .boxed()
    }
}

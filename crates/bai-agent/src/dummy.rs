//! DUMMY AGENT: an agent backend with no containers, for scheduler tests and benchmarks.
//!
//! It reports a configured capacity, "starts" a kernel after a configured delay and keeps it
//! in memory, with the files uploaded to it (downloads give them back). It runs nothing: a batch session's startup command `sleep N` ends the kernel
//! after N seconds with exit code 0 (any other command exits 0 at once); execute answers
//! with one line on stderr saying that nothing ran. It goes through the same [`AgentRpc`]
//! interface as the Docker agent, so the manager cannot tell them apart — 1,000 of them fit
//! in one process. It is never what `baid up` uses unless asked (`--dummy-agents N`).
//!
//! Tests script it: [`DummyAgent::script_create`] decides how the next kernel creations go
//! (succeed, fail, or hang until [`DummyAgent::release`]), [`DummyAgent::exit`] ends a kernel
//! as its process would (any exit code, or the OOM killer), and it keeps which kernels it
//! created and destroyed.

use async_trait::async_trait;
use bai_core::agent::{
    AgentError, AgentEvent, AgentInfo, AgentRpc, EventFanout, ExecEvent, ExecRequest,
    KernelCreated, KernelExit, KernelSpec,
};
use bai_core::resources::ResourceSlots;
use bai_core::status::SessionType;
use futures::StreamExt;
use futures::stream::BoxStream;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use uuid::Uuid;

/// How a dummy agent presents itself.
#[derive(Debug, Clone)]
pub struct DummyAgentConfig {
    pub id: String,
    pub scaling_group: String,
    pub capacity: ResourceSlots,
    /// How long `create_kernel` takes.
    pub start_delay: Duration,
    /// Images it claims to have (the manager only lets sessions use known images).
    pub images: Vec<String>,
}

impl DummyAgentConfig {
    /// An agent `id` of the default group with `cores` cores and 16 GiB, claiming `image`,
    /// starting kernels at once: the dummy agent of the in-process tests.
    pub fn sized(id: &str, cores: u64, image: &str) -> DummyAgentConfig {
        DummyAgentConfig {
            id: id.into(),
            scaling_group: "default".into(),
            capacity: ResourceSlots {
                cpu_milli: cores * 1000,
                mem: 16 << 30,
                accel: Default::default(),
            },
            start_delay: Duration::ZERO,
            images: vec![image.into()],
        }
    }
}

/// How a scripted kernel creation goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateStep {
    /// The kernel starts (the default when nothing is scripted).
    Start,
    /// `create_kernel` fails with this runtime error.
    Fail(String),
    /// `create_kernel` does not answer until [`DummyAgent::release`]; then the kernel starts.
    Hang,
}

struct Inner {
    config: DummyAgentConfig,
    kernels: Mutex<HashMap<Uuid, KernelSpec>>,
    /// Nothing kept while no event comes: 1,000 of these agents fit in one process.
    events: EventFanout,
    script: Mutex<std::collections::VecDeque<CreateStep>>,
    release: tokio::sync::Notify,
    /// Every `create_kernel` call (in order), and every kernel destroyed.
    asked: Mutex<Vec<Uuid>>,
    destroyed: Mutex<Vec<Uuid>>,
    asked_bell: tokio::sync::Notify,
    /// `destroy_kernel` waits for [`DummyAgent::release`] first (see [`DummyAgent::hold_destroys`]).
    hold_destroys: std::sync::atomic::AtomicBool,
    /// Files uploaded to each kernel, by path.
    files: Mutex<HashMap<(Uuid, String), bytes::Bytes>>,
}

#[derive(Clone)]
pub struct DummyAgent {
    inner: Arc<Inner>,
}

impl DummyAgent {
    pub fn new(config: DummyAgentConfig) -> DummyAgent {
        DummyAgent {
            inner: Arc::new(Inner {
                config,
                kernels: Mutex::new(HashMap::new()),
                events: EventFanout::default(),
                script: Mutex::new(Default::default()),
                release: tokio::sync::Notify::new(),
                asked: Mutex::new(Vec::new()),
                destroyed: Mutex::new(Vec::new()),
                asked_bell: tokio::sync::Notify::new(),
                hold_destroys: std::sync::atomic::AtomicBool::new(false),
                files: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// How the next kernel creations go, one step each, in order.
    pub fn script_create(&self, steps: impl IntoIterator<Item = CreateStep>) {
        lock(&self.inner.script).extend(steps);
    }

    /// From now on (`true`), every `destroy_kernel` waits for [`DummyAgent::release`]
    /// before it removes anything.
    pub fn hold_destroys(&self, hold: bool) {
        self.inner
            .hold_destroys
            .store(hold, std::sync::atomic::Ordering::SeqCst);
    }

    /// Lets every hanging creation (and held destroy) go on.
    pub fn release(&self) {
        self.inner.release.notify_waiters();
    }

    /// Ends a kernel as its main process would: with `exit_code`, or killed by the OOM killer.
    /// Returns whether the kernel was there.
    pub fn exit(&self, kernel_id: Uuid, exit_code: i32, oom_killed: bool) -> bool {
        if self.kernels().remove(&kernel_id).is_none() {
            return false;
        }
        self.inner.events.send(AgentEvent::KernelExited(KernelExit {
            kernel_id,
            exit_code: Some(exit_code),
            oom_killed,
            logs: format!("dummy kernel ended with exit code {exit_code}\n"),
        }));
        true
    }

    /// What a running kernel was started with.
    pub fn spec(&self, kernel_id: Uuid) -> Option<KernelSpec> {
        self.kernels().get(&kernel_id).cloned()
    }

    /// The kernels running now.
    pub fn live(&self) -> Vec<Uuid> {
        self.kernels().keys().copied().collect()
    }

    /// Every kernel `create_kernel` was asked for, in order (also failed and hanging ones).
    pub fn asked(&self) -> Vec<Uuid> {
        lock(&self.inner.asked).clone()
    }

    /// Every kernel that `destroy_kernel` removed, in order.
    pub fn destroyed(&self) -> Vec<Uuid> {
        lock(&self.inner.destroyed).clone()
    }

    /// Waits until `create_kernel` has been asked for `n` kernels in all.
    pub async fn wait_asked(&self, n: usize) {
        loop {
            let bell = self.inner.asked_bell.notified();
            if lock(&self.inner.asked).len() >= n {
                return;
            }
            bell.await;
        }
    }

    fn kernels(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, KernelSpec>> {
        self.inner.kernels.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Seconds of `sleep N` (the only command a dummy kernel "runs").
    fn sleep_secs(cmd: &str) -> f64 {
        let mut it = cmd.split_whitespace();
        match (it.next(), it.next(), it.next()) {
            (Some("sleep"), Some(n), None) => bai_core::parse_duration(n)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0),
            _ => 0.0,
        }
    }
}

#[async_trait]
impl AgentRpc for DummyAgent {
    async fn info(&self) -> Result<AgentInfo, AgentError> {
        let c = &self.inner.config;
        Ok(AgentInfo {
            id: c.id.clone(),
            region: "local".into(),
            scaling_group: c.scaling_group.clone(),
            architecture: std::env::consts::ARCH.into(),
            capacity: c.capacity.clone(),
            images: c
                .images
                .iter()
                .map(|name| bai_core::agent::ImageInfo {
                    name: name.clone(),
                    digest: String::new(),
                    labels: Default::default(),
                    size_bytes: 0,
                })
                .collect(),
            version: format!("dummy-{}", env!("CARGO_PKG_VERSION")),
            devices: Vec::new(),
            storage_hosts: Default::default(),
            registry: None,
            egress_error: None,
            withheld: None,
            kernels_unreachable: false,
            size: None,
            kernel_most: Default::default(),
        })
    }

    async fn create_kernel(&self, spec: KernelSpec) -> Result<KernelCreated, AgentError> {
        let kernel_id = spec.kernel_id;
        let step = lock(&self.inner.script)
            .pop_front()
            .unwrap_or(CreateStep::Start);
        let released = self.inner.release.notified();
        lock(&self.inner.asked).push(kernel_id);
        self.inner.asked_bell.notify_waiters();
        match step {
            CreateStep::Start => {}
            CreateStep::Fail(e) => return Err(AgentError::Runtime(e)),
            CreateStep::Hang => released.await,
        }
        tokio::time::sleep(self.inner.config.start_delay).await;
        // A batch kernel ends with its command; one without (a cluster's sub kernel) waits.
        if spec.session_type == SessionType::Batch
            && let Some(cmd) = spec.startup_command.as_deref()
        {
            let secs = Self::sleep_secs(cmd);
            let me = self.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs_f64(secs.clamp(0.0, 1e7))).await;
                if me.kernels().contains_key(&kernel_id) {
                    me.inner.events.send(AgentEvent::KernelExited(KernelExit {
                        kernel_id,
                        exit_code: Some(0),
                        oom_killed: false,
                        logs: String::new(),
                    }));
                }
            });
        }
        self.kernels().insert(kernel_id, spec);
        Ok(KernelCreated {
            kernel_id,
            container_id: format!("dummy-{kernel_id}"),
            cpuset: None,
            devices: Default::default(),
            address: None,
        })
    }

    async fn terminate_processes(&self, _kernel_id: Uuid) -> Result<(), AgentError> {
        // A dummy kernel has no processes: its grace simply runs out.
        Ok(())
    }

    async fn destroy_kernel(&self, kernel_id: Uuid) -> Result<KernelExit, AgentError> {
        if self
            .inner
            .hold_destroys
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            self.inner.release.notified().await;
        }
        self.kernels()
            .remove(&kernel_id)
            .ok_or(AgentError::KernelNotFound(kernel_id))?;
        lock(&self.inner.files).retain(|(k, _), _| *k != kernel_id);
        lock(&self.inner.destroyed).push(kernel_id);
        Ok(KernelExit {
            kernel_id,
            exit_code: None,
            oom_killed: false,
            logs: String::new(),
        })
    }

    async fn execute(
        &self,
        kernel_id: Uuid,
        _req: ExecRequest,
    ) -> Result<BoxStream<'static, ExecEvent>, AgentError> {
        if !self.kernels().contains_key(&kernel_id) {
            return Err(AgentError::KernelNotFound(kernel_id));
        }
        let out = vec![
            ExecEvent::Stderr {
                data: "this session runs on a dummy agent: nothing was executed\n".into(),
            },
            ExecEvent::Finished { exit_code: 0 },
        ];
        Ok(futures::stream::iter(out).boxed())
    }

    async fn upload_files(
        &self,
        kernel_id: Uuid,
        files: Vec<(String, bytes::Bytes)>,
    ) -> Result<(), AgentError> {
        if !self.kernels().contains_key(&kernel_id) {
            return Err(AgentError::KernelNotFound(kernel_id));
        }
        let mut held = lock(&self.inner.files);
        for (path, bytes) in files {
            held.insert((kernel_id, path), bytes);
        }
        Ok(())
    }

    async fn download_files(
        &self,
        kernel_id: Uuid,
        paths: Vec<String>,
    ) -> Result<Vec<(String, bytes::Bytes)>, AgentError> {
        if !self.kernels().contains_key(&kernel_id) {
            return Err(AgentError::KernelNotFound(kernel_id));
        }
        let held = lock(&self.inner.files);
        paths
            .into_iter()
            .map(|p| match held.get(&(kernel_id, p.clone())) {
                Some(b) => Ok((p, b.clone())),
                None => Err(AgentError::BadRequest(format!(
                    "the DUMMY kernel holds no file {p} (only uploaded files)"
                ))),
            })
            .collect()
    }

    async fn app_address(
        &self,
        kernel_id: Uuid,
        _port: u16,
    ) -> Result<std::net::SocketAddr, AgentError> {
        if !self.kernels().contains_key(&kernel_id) {
            return Err(AgentError::KernelNotFound(kernel_id));
        }
        Err(AgentError::BadRequest(
            "a DUMMY agent's kernels run no apps".into(),
        ))
    }

    async fn start_app(&self, kernel_id: Uuid, _name: &str) -> Result<(), AgentError> {
        if !self.kernels().contains_key(&kernel_id) {
            return Err(AgentError::KernelNotFound(kernel_id));
        }
        Err(AgentError::BadRequest(
            "a DUMMY agent's kernels run no apps".into(),
        ))
    }

    async fn logs(&self, kernel_id: Uuid) -> Result<String, AgentError> {
        if !self.kernels().contains_key(&kernel_id) {
            return Err(AgentError::KernelNotFound(kernel_id));
        }
        Ok(String::new())
    }

    /// A DUMMY kernel has no files.
    async fn list_files(
        &self,
        kernel_id: Uuid,
        _path: String,
    ) -> Result<Vec<bai_core::agent::FileEntry>, AgentError> {
        if !self.kernels().contains_key(&kernel_id) {
            return Err(AgentError::KernelNotFound(kernel_id));
        }
        Ok(Vec::new())
    }

    /// A DUMMY kernel runs nothing, so it uses nothing.
    async fn kernel_stats(
        &self,
        kernel_id: Uuid,
    ) -> Result<bai_core::stats::KernelStats, AgentError> {
        if !self.kernels().contains_key(&kernel_id) {
            return Err(AgentError::KernelNotFound(kernel_id));
        }
        Ok(bai_core::stats::KernelStats {
            kernel_id,
            at_ms: bai_core::stats::now_ms(),
            ..Default::default()
        })
    }

    async fn list_kernels(&self) -> Result<Vec<Uuid>, AgentError> {
        Ok(self.kernels().keys().copied().collect())
    }

    async fn commit_kernel(
        &self,
        req: bai_core::agent::CommitRequest,
    ) -> Result<bai_core::agent::ImageInfo, AgentError> {
        if !self.kernels().contains_key(&req.kernel_id) {
            return Err(AgentError::KernelNotFound(req.kernel_id));
        }
        Err(AgentError::Runtime(
            "the dummy agent has no container engine to commit with".into(),
        ))
    }

    async fn remove_image(&self, _reference: String) -> Result<(), AgentError> {
        Ok(())
    }

    async fn tag_image(&self, _source: String, _target: String) -> Result<(), AgentError> {
        Ok(())
    }

    async fn pull_image(
        &self,
        reference: String,
    ) -> Result<bai_core::agent::ImageInfo, AgentError> {
        Err(AgentError::ImageNotFound(reference))
    }

    async fn push_image(&self, _reference: String) -> Result<(), AgentError> {
        Err(AgentError::BadRequest(
            "the dummy agent has no registry".into(),
        ))
    }

    fn events(&self) -> BoxStream<'static, AgentEvent> {
        self.inner.events.subscribe()
    }
}

fn lock<T>(lock: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    lock.lock().unwrap_or_else(|p| p.into_inner())
}

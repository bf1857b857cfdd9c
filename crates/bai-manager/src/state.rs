//! Shared manager state: the store, the agents, the event bus and the scheduler's wake-up.

use bai_core::agent::KernelExit;
use bai_core::agent::{AgentInfo, AgentRpc};
use bai_core::event::SessionEvent;
use bai_store::Store;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;
use tokio::sync::{Notify, broadcast};

pub use crate::remote::slot::AgentStatus;
use uuid::Uuid;

#[derive(Debug, Clone)]
pub struct ManagerConfig {
    pub data_dir: PathBuf,
    /// How long a kernel may take from SCHEDULED to RUNNING before the session errors out.
    pub create_timeout_secs: u64,
    /// Safety tick of the scheduler (it is also woken by events).
    pub schedule_tick_ms: u64,
    /// Benchmarks only: placed sessions stay SCHEDULED (no kernel is started).
    pub launch_disabled: bool,
    /// Host ports the app proxy's port mode may use (inclusive).
    pub app_port_pool: (u16, u16),
    /// Resource readings and idle checkers.
    pub monitor: crate::monitor::book::MonitorConfig,
    /// Storage hosts of data folders, checked by `Storage::open`; None: only
    /// `local:volume1` under the data dir.
    pub storage: Option<crate::storage::Storage>,
    /// Where remote agents connect (`baid agent`); None: no remote agents.
    pub agent_listen: Option<std::net::SocketAddr>,
    /// A remote agent not heard from this long is LOST (its sessions degraded).
    pub agent_lost_after: std::time::Duration,
    /// A remote agent away this long is gone: its sessions end with `agent-lost`.
    pub agent_gone_after: std::time::Duration,
    /// The host name service endpoint URLs carry (`http://HOST:PORT`).
    pub endpoint_host: String,
    /// The cluster's image registry as the manager reaches it (its images are in the
    /// catalogue; agents with a registry pull them when they lack them).
    pub registry: Option<String>,
    /// The bearer token Prometheus scrapes `/metrics` with (None: administrators only).
    pub metrics_token: Option<String>,
    /// The API and web UI are served over HTTPS: the web session cookie is `Secure` and
    /// path-mode app URLs are `https://`.
    pub tls: bool,
    /// How long audit log entries are kept (None: for good).
    pub audit_retention: Option<std::time::Duration>,
}

impl ManagerConfig {
    /// The scheme of the API's own URLs: `https` when it is served over TLS.
    pub fn api_scheme(&self) -> &'static str {
        if self.tls { "https" } else { "http" }
    }
}

impl Default for ManagerConfig {
    fn default() -> Self {
        ManagerConfig {
            data_dir: PathBuf::from("."),
            create_timeout_secs: 120,
            schedule_tick_ms: 1000,
            launch_disabled: false,
            app_port_pool: (30000, 30199),
            monitor: Default::default(),
            storage: None,
            agent_listen: None,
            agent_lost_after: std::time::Duration::from_secs(40),
            agent_gone_after: std::time::Duration::from_secs(600),
            endpoint_host: "127.0.0.1".into(),
            registry: None,
            metrics_token: None,
            tls: false,
            audit_retention: Some(std::time::Duration::from_secs(365 * 86400)),
        }
    }
}

/// One agent, reached through its RPC interface.
pub struct AgentHandle {
    pub id: String,
    pub rpc: Arc<dyn AgentRpc>,
    pub info: RwLock<AgentInfo>,
    /// False once the agent stopped answering; nothing new is scheduled there.
    pub alive: AtomicBool,
    /// Drained by an admin: no new sessions, running ones stay.
    pub drained: AtomicBool,
    /// A remote agent's link and state (None: inside the manager's process).
    pub remote: Option<Arc<crate::remote::slot::AgentSlot>>,
}

impl AgentHandle {
    pub fn is_alive(&self) -> bool {
        self.status() == AgentStatus::Alive
    }

    pub fn status(&self) -> AgentStatus {
        match &self.remote {
            Some(slot) => slot.status(),
            None if self.alive.load(Ordering::Relaxed) => AgentStatus::Alive,
            None => AgentStatus::Lost,
        }
    }

    pub fn is_drained(&self) -> bool {
        self.drained.load(Ordering::Relaxed)
    }

    /// Whether new sessions may be placed here.
    pub fn schedulable(&self) -> bool {
        self.is_alive() && !self.is_drained()
    }

    pub fn info(&self) -> AgentInfo {
        self.info.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The agent's kernel images as it reported them last.
    pub fn set_images(&self, images: Vec<bai_core::agent::ImageInfo>) {
        self.info.write().unwrap_or_else(|p| p.into_inner()).images = images;
    }
}

pub struct Manager {
    pub store: Arc<Store>,
    pub agents: RwLock<Vec<Arc<AgentHandle>>>,
    pub events: broadcast::Sender<SessionEvent>,
    pub wake_scheduler: Notify,
    pub config: ManagerConfig,
    /// Sessions whose launch task is running now (the stuck-session sweeper skips them).
    pub launching: Mutex<HashSet<Uuid>>,
    /// Kernel exits that arrived while their session was still being created.
    pub early_exits: Mutex<HashMap<Uuid, KernelExit>>,
    /// Per resource group scheduler state kept between passes (round-robin counter).
    pub sched_state: Mutex<HashMap<String, bai_sched::GroupState>>,
    /// Why each PENDING session waits, as of the last scheduling pass.
    pub pending_views: Mutex<HashMap<Uuid, bai_api::sessions::PendingInfo>>,
    /// When the scheduler last wrote an unchanged wait to a session's history.
    history_marks: Mutex<HashMap<Uuid, Instant>>,
    /// Where data folders live.
    pub storage: crate::storage::Storage,
    /// Pending uploads and downloads by token.
    pub transfers: Mutex<HashMap<String, crate::storage::Transfer>>,
    /// Bytes through the app proxies per session (for the idle checker).
    pub traffic: crate::apps::TrafficBook,
    /// Open HTTP app proxies.
    pub proxies: crate::proxy::Proxies,
    /// Logged-in browsers of the web UI.
    pub web_sessions: crate::web::sessions::WebSessions,
    /// Recent resource use of running sessions.
    pub stats: crate::monitor::book::StatsBook,
    /// Unix milliseconds when this manager started (activity before it is unknown).
    pub started_ms: i64,
    /// Remote agents: the manager's identity and the tunnels it waits for.
    pub remote: crate::remote::Remote,
    /// Executions by long poll (`POST /session/{ref}`) between their polls.
    pub exec_runs: crate::api::exec_runs::Runs,
    /// Model services: their endpoints, probers and back-offs.
    pub serving: crate::serving::state::Serving,
    /// Background tasks (commits), followed on `/events/background-task`.
    pub bgtasks: crate::bgtask::BgTasks,
    /// Sessions being committed now.
    pub commits: crate::images::committing::Commits,
    /// What the cluster's registry holds, as last read.
    pub registry: crate::images::registry_view::RegistryView,
    /// Requests per keypair in the rate limit window.
    pub rate: crate::guard::rate::RateLimiter,
    /// Wrong web passwords per e-mail.
    pub logins: crate::guard::logins::LoginThrottle,
    /// Counters and timings for `/metrics`.
    pub metrics: Arc<crate::metrics::Metrics>,
}

impl Manager {
    pub fn new(store: Arc<Store>, config: ManagerConfig) -> Arc<Manager> {
        let (events, _) = broadcast::channel(4096);
        let metrics = Arc::new(crate::metrics::Metrics::default());
        let heard = metrics.clone();
        store.observe(Box::new(move |kind, secs| {
            heard.store_connection(kind, secs)
        }));
        Arc::new(Manager {
            store,
            agents: RwLock::new(Vec::new()),
            events,
            wake_scheduler: Notify::new(),
            launching: Mutex::new(HashSet::new()),
            early_exits: Mutex::new(HashMap::new()),
            sched_state: Mutex::new(HashMap::new()),
            pending_views: Mutex::new(HashMap::new()),
            history_marks: Mutex::new(HashMap::new()),
            storage: config
                .storage
                .clone()
                .unwrap_or_else(|| crate::storage::Storage::local(&config.data_dir)),
            transfers: Mutex::new(HashMap::new()),
            proxies: crate::proxy::Proxies::new(config.app_port_pool),
            config,
            traffic: Default::default(),
            web_sessions: Default::default(),
            stats: Default::default(),
            started_ms: bai_core::stats::now_ms(),
            remote: Default::default(),
            exec_runs: Default::default(),
            serving: Default::default(),
            bgtasks: Default::default(),
            commits: Default::default(),
            registry: Default::default(),
            rate: Default::default(),
            logins: Default::default(),
            metrics,
        })
    }

    /// Whether an unchanged wait of this session should be recorded again (attempts += 1):
    /// at most every 10 seconds, so a long queue does not rewrite its history every tick.
    pub fn history_due(&self, id: Uuid) -> bool {
        let mut marks = self.history_marks.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        match marks.get(&id) {
            Some(t) if now.duration_since(*t).as_secs() < 10 => false,
            _ => {
                marks.insert(id, now);
                if marks.len() > 100_000 {
                    marks.retain(|_, t| now.duration_since(*t).as_secs() < 60);
                }
                true
            }
        }
    }

    /// Why a PENDING session waits, if the scheduler has looked at it.
    pub fn pending_view(&self, id: Uuid) -> Option<bai_api::sessions::PendingInfo> {
        self.pending_views
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .cloned()
    }

    pub fn agents(&self) -> Vec<Arc<AgentHandle>> {
        self.agents
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The accelerator slots the agents offer, each with its quantum.
    pub fn accel_slots(&self) -> Vec<bai_core::accel::AccelSlot> {
        let infos: Vec<_> = self.agents().iter().map(|a| a.info()).collect();
        bai_core::accel::AccelSlot::collect(
            infos.iter().flat_map(|i| i.devices.iter()),
            infos.iter().flat_map(|i| i.capacity.accel.keys()),
        )
    }

    pub fn agent(&self, id: &str) -> Option<Arc<AgentHandle>> {
        self.agents().into_iter().find(|a| a.id == id)
    }

    pub async fn register_agent(
        &self,
        rpc: Arc<dyn AgentRpc>,
    ) -> Result<Arc<AgentHandle>, bai_core::agent::AgentError> {
        let info = rpc.info().await?;
        let drained = self
            .store
            .agent_row(&info.id)
            .ok()
            .flatten()
            .is_some_and(|r| r.drained);
        let handle = Arc::new(AgentHandle {
            id: info.id.clone(),
            rpc,
            info: RwLock::new(info),
            alive: AtomicBool::new(true),
            drained: AtomicBool::new(drained),
            remote: None,
        });
        self.add_agent(handle.clone());
        Ok(handle)
    }

    /// The sessions that hold resources on `agent` (SCHEDULED through TERMINATING).
    pub fn sessions_on(
        &self,
        agent: &str,
    ) -> Result<Vec<bai_store::SessionRow>, bai_store::StoreError> {
        let subs: std::collections::HashSet<uuid::Uuid> = self
            .store
            .sessions_with_subs_on(agent)?
            .into_iter()
            .collect();
        Ok(self
            .store
            .sessions_in(&bai_core::status::SessionStatus::HOLDS_RESOURCES)?
            .into_iter()
            .filter(|r| r.agent_id.as_deref() == Some(agent) || subs.contains(&r.id))
            .collect())
    }

    /// Adds an agent to the registry (replacing one of the same id).
    pub fn add_agent(&self, handle: Arc<AgentHandle>) {
        let mut agents = self.agents.write().unwrap_or_else(|p| p.into_inner());
        agents.retain(|a| a.id != handle.id);
        agents.push(handle);
    }

    /// Takes an agent out of the registry.
    pub fn remove_agent(&self, id: &str) -> Option<Arc<AgentHandle>> {
        let mut agents = self.agents.write().unwrap_or_else(|p| p.into_inner());
        let i = agents.iter().position(|a| a.id == id)?;
        Some(agents.remove(i))
    }

    /// Publishes persisted events to live subscribers and logs them.
    pub fn publish(&self, events: Vec<SessionEvent>) {
        for ev in events {
            tracing::info!(
                event = ev.kind.as_str(),
                session = %ev.session_id,
                name = %ev.session_name,
                reason = %ev.reason,
                "session event"
            );
            self.metrics.event(ev.kind.as_str());
            // No subscribers is fine.
            let _ = self.events.send(ev);
        }
    }
}

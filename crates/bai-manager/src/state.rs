//! The hub: the manager as the HTTP edge sees it. It is built once ([`Manager::new`]) from
//! the store and the configuration, wires each subsystem to what it needs, and holds them.
//! Subsystems never import it: each receives its own parts (the lifecycle its
//! [`Lifecycle`], the scheduler its [`Scheduler`], …); only the edge (`api`, `auth`, `web`)
//! and [`crate::start`] take the hub.

use crate::exec_runs::Runs;
use bai_control::images::Images;
use bai_control::images::committing::Commits;
use bai_control::images::registry_view::RegistryView;
use bai_control::lifecycle::Lifecycle;
use bai_control::monitor::Monitor;
use bai_control::proxy::Proxies;
use bai_control::remote::Remote;
use bai_control::scheduler::Scheduler;
use bai_ground::agents::Agents;
use bai_ground::apps::TrafficBook;
use bai_ground::bgtask::BgTasks;
use bai_ground::browsers::WebSessions;
use bai_ground::bus::Bus;
use bai_ground::config::ManagerConfig;
use bai_ground::guard::{logins::LoginThrottle, rate::RateLimiter};
use bai_ground::metrics::Metrics;
use bai_ground::stats::Readings;
use bai_ground::storage::{Storage, Transfer};
use bai_serving::state::Serving;
use bai_store::Store;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub struct Manager {
    // The ground every subsystem shares.
    pub store: Arc<Store>,
    pub config: Arc<ManagerConfig>,
    /// The agents the manager reaches.
    pub agents: Arc<Agents>,
    /// Session events and the scheduler's wake-up.
    pub bus: Arc<Bus>,
    /// Counters and timings for `/metrics`.
    pub metrics: Arc<Metrics>,
    /// Where data folders live.
    pub storage: Arc<Storage>,

    // The subsystems.
    pub lifecycle: Arc<Lifecycle>,
    pub scheduler: Arc<Scheduler>,
    pub monitor: Arc<Monitor>,
    pub remote: Arc<Remote>,
    pub images: Arc<Images>,
    pub serving: Arc<Serving>,
    /// The warm pools' targets per agent, and what the agents said of them.
    pub pools: Arc<bai_control::pools::WarmPools>,

    // What the edge keeps itself, each in its own module.
    /// What the monitor read of running sessions (the API's stats and idle checks).
    pub readings: Arc<Readings>,
    /// Background tasks (commits, clones), followed on `/events/background-task`.
    pub bgtasks: Arc<BgTasks>,
    /// Pending uploads and downloads by token.
    pub transfers: Mutex<HashMap<String, Transfer>>,
    /// Bytes through the app proxies per session (the idle checker reads it too).
    pub traffic: Arc<TrafficBook>,
    /// Open HTTP app proxies.
    pub proxies: Proxies,
    /// Logged-in browsers of the web UI (kept in the store; a short cache while this
    /// manager leads).
    pub web_sessions: WebSessions,
    /// Executions by long poll (`POST /session/{ref}`) between their polls.
    pub exec_runs: Runs,
    /// Requests per keypair in the rate limit window.
    pub rate: RateLimiter,
    /// Wrong web passwords per e-mail.
    pub logins: LoginThrottle,
    /// Refused web logins per client address (any name; OpenID callbacks of no login).
    pub client_logins: LoginThrottle,
    /// The site's directory the web login also checks (`baid up --ldap-url …`; set once,
    /// before the API is served). Unset: local accounts only.
    pub directory: std::sync::OnceLock<bai_ldap::Directory>,
    /// The site's OpenID provider for web logins (`baid up --oidc-issuer …`; set once,
    /// before the API is served). Unset: no "Log in with …".
    pub oidc: std::sync::OnceLock<bai_oidc::Provider>,
}

impl Manager {
    pub fn new(store: Arc<Store>, config: ManagerConfig) -> Arc<Manager> {
        let metrics = Arc::new(Metrics::default());
        let heard = metrics.clone();
        store.observe(Box::new(move |kind, secs| {
            heard.store_connection(kind, secs)
        }));
        let storage = Arc::new(
            config
                .storage
                .clone()
                .unwrap_or_else(|| Storage::local(&config.data_dir)),
        );
        let proxies = Proxies::new(config.app_port_pool);
        let config = Arc::new(config);
        let agents = Arc::new(Agents::default());
        let bus = Arc::new(Bus::new(metrics.clone()));
        let traffic = Arc::new(TrafficBook::default());
        let bgtasks = Arc::new(BgTasks::default());
        let registry = Arc::new(RegistryView::default());
        let readings = Arc::new(Readings::new(
            store.clone(),
            config.monitor.clone(),
            traffic.clone(),
        ));
        let lifecycle = Arc::new(Lifecycle::new(
            store.clone(),
            agents.clone(),
            bus.clone(),
            config.clone(),
            storage.clone(),
            registry.clone(),
            readings.clone(),
        ));
        let scheduler = Arc::new(Scheduler::new(
            lifecycle.clone(),
            storage.clone(),
            metrics.clone(),
        ));
        let monitor = Arc::new(Monitor {
            readings: readings.clone(),
            agents: agents.clone(),
            lifecycle: lifecycle.clone(),
        });
        let remote = Arc::new(Remote::new(lifecycle.clone()));
        let images = Arc::new(Images {
            store: store.clone(),
            agents: agents.clone(),
            config: config.clone(),
            bgtasks: bgtasks.clone(),
            commits: Commits::default(),
            registry,
        });
        let serving = Arc::new(Serving::new(lifecycle.clone(), readings.clone()));
        let pools =
            bai_control::pools::WarmPools::new(store.clone(), agents.clone(), config.warm_pools);
        let web_sessions = WebSessions::new(store.clone());
        Arc::new(Manager {
            pools,
            store,
            config,
            agents,
            bus,
            metrics,
            storage,
            lifecycle,
            scheduler,
            monitor,
            remote,
            images,
            serving,
            readings,
            bgtasks,
            transfers: Mutex::new(HashMap::new()),
            traffic,
            proxies,
            web_sessions,
            exec_runs: Default::default(),
            rate: Default::default(),
            logins: Default::default(),
            client_logins: LoginThrottle::with_max(bai_ground::guard::logins::MAX_CLIENT_FAILURES),
            directory: Default::default(),
            oidc: Default::default(),
        })
    }
}

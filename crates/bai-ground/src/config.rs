//! The manager's configuration, as `baid` gives it: plain data every subsystem reads.

use std::path::PathBuf;

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
    pub monitor: crate::stats::book::MonitorConfig,
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
    /// How long ended sessions keep their details: scheduling history, events, logs (None:
    /// for good; their rows are kept either way).
    pub session_detail_retention: Option<std::time::Duration>,
    /// The image of SFTP sessions (it needs sshd; None: `python`, the bundled one).
    pub sftp_image: Option<String>,
    /// An SFTP session with no connection for this long ends.
    pub sftp_idle: std::time::Duration,
    /// The term of the lease this manager leads under (`baid` takes it before starting
    /// the manager; 0 in tests): every call to a remote agent carries it, and agents
    /// refuse a lower one than the highest they saw.
    pub lease_term: u64,
    /// Whether agents are sent warm pool shapes (the groups' configured ones and the
    /// automatic mode's). `baid` turns it on unless `--warm-pools off`; off here, for tests.
    pub warm_pools: bool,
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
            lease_term: 0,
            tls: false,
            audit_retention: Some(std::time::Duration::from_secs(365 * 86400)),
            session_detail_retention: None,
            sftp_image: None,
            sftp_idle: std::time::Duration::from_secs(600),
            warm_pools: false,
        }
    }
}

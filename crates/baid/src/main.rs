//! `baid`: the bai server. `baid up` runs everything on one machine: the API and manager,
//! one agent on the local Docker engine, and the embedded SQLite database.
#![forbid(unsafe_code)]

mod again;
mod agent;
mod backend;
mod bootstrap;
mod config_file;
mod credentials;
mod db;
mod each_node;
mod https;
mod ldap_flags;
mod lead;
mod lease;
mod lock;
mod node;
mod oidc_flags;
mod open;
mod parse;
mod standby;

use anyhow::{Context, Result};
use bai_agent::{DummyAgent, DummyAgentConfig};
use bai_core::agent::AgentRpc;
use bai_ground::config::ManagerConfig;
use clap::{CommandFactory, Parser, Subcommand};
use parse::*;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Parser)]
#[command(name = "baid", version, about = "The bai server")]
struct Cli {
    /// A TOML file of flags: each key a flag's long name (`listen = "0.0.0.0:8090"`,
    /// `no-docker = true`), at the top or under `[up]` / `[agent]`. A flag given on the
    /// command line, or its environment variable, wins over the file.
    #[arg(long, global = true, env = "BAI_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    /// Log lines as text (for people) or JSON, one object per line (for log shippers).
    #[arg(
        long,
        global = true,
        env = "BAI_LOG_FORMAT",
        value_enum,
        default_value = "text"
    )]
    log_format: LogFormat,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the whole platform on this machine: API, manager, one agent, SQLite.
    Up(Box<UpArgs>),
    /// Run an agent on this machine for a manager elsewhere (it dials the manager).
    Agent(Box<agent::AgentArgs>),
    /// Back up the database while the server runs, or restore a backup.
    Db(db::DbArgs),
}

#[derive(clap::Args)]
struct UpArgs {
    /// The bearer token Prometheus scrapes `GET /metrics` with (without one, only an
    /// administrator's signed request reads it).
    #[arg(long, env = "BAI_METRICS_TOKEN", hide_env_values = true)]
    metrics_token: Option<String>,
    /// How long audit log entries are kept (`90d`, `365d`; `0`: for good).
    #[arg(long, env = "BAI_AUDIT_RETENTION", default_value = "365d", value_parser = retention)]
    audit_retention: std::time::Duration,
    /// How long ended sessions keep their details: scheduling history, events and logs
    /// (`90d`; `0`: for good). Their rows, the summary every listing shows, are kept.
    #[arg(long, env = "BAI_SESSION_DETAIL_RETENTION", default_value = "0", value_parser = retention)]
    session_detail_retention: std::time::Duration,
    /// Address the API listens on.
    #[arg(long, env = "BAI_LISTEN", default_value = "127.0.0.1:8090")]
    listen: SocketAddr,
    /// Serve the API and web UI over HTTPS with this certificate chain (PEM), with --tls-key.
    #[arg(long, env = "BAI_TLS_CERT", value_name = "FILE")]
    tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, env = "BAI_TLS_KEY", value_name = "FILE")]
    tls_key: Option<PathBuf>,
    /// Serve HTTPS with a self-signed certificate made on the first start (kept in the data
    /// dir's tls/; clients trust it with BAI_CA_CERT or SSL_CERT_FILE).
    #[arg(long, env = "BAI_TLS_SELF_SIGNED")]
    tls_self_signed: bool,
    /// Where the database, kernel scratch directories and env files live.
    #[arg(long, env = "BAI_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// The database: `postgres://USER[:PASSWORD]@HOST[:PORT]/DB` (the database must exist;
    /// several managers may share it), or `sqlite:PATH`. Default: SQLite, bai.db in the
    /// data dir.
    #[arg(long, env = "BAI_DATABASE", hide_env_values = true, value_name = "URL")]
    database: Option<String>,
    /// Also start N dummy agents (no containers; for scheduler tests and benchmarks).
    #[arg(long, env = "BAI_DUMMY_AGENTS", default_value_t = 0)]
    dummy_agents: u32,
    /// Capacity of each dummy agent.
    #[arg(long, env = "BAI_DUMMY_CAPACITY", default_value = "cpu=4,mem=8g")]
    dummy_capacity: String,
    /// Resource group of the dummy agents (created when missing).
    #[arg(long, env = "BAI_DUMMY_GROUP", default_value = "default")]
    dummy_group: String,
    /// How long a dummy agent takes to start a kernel.
    #[arg(long, env = "BAI_DUMMY_START_DELAY_MS", default_value_t = 0)]
    dummy_start_delay_ms: u64,
    /// Do not start the Docker agent (only dummy agents).
    #[arg(long, env = "BAI_NO_DOCKER")]
    no_docker: bool,
    /// Run a manager only: no agent inside this process (remote agents join with
    /// `baid agent`).
    #[arg(long, env = "BAI_NO_LOCAL_AGENT")]
    no_local_agent: bool,
    /// Where remote agents (`baid agent`) connect, or `off`.
    #[arg(long, env = "BAI_AGENT_LISTEN", default_value = "0.0.0.0:8091", value_parser = parse_listen)]
    agent_listen: Listen,
    /// A remote agent not heard from this long is LOST: its sessions are degraded.
    #[arg(long, env = "BAI_AGENT_LOST_AFTER", default_value = "40s", value_parser = parse_duration)]
    agent_lost_after: std::time::Duration,
    /// A remote agent away this long is gone: its sessions end with `agent-lost`.
    #[arg(long, env = "BAI_AGENT_GONE_AFTER", default_value = "10m", value_parser = parse_duration)]
    agent_gone_after: std::time::Duration,
    #[command(flatten)]
    node: node::NodeArgs,
    #[command(flatten)]
    ldap: ldap_flags::LdapArgs,
    #[command(flatten)]
    oidc: oidc_flags::OidcArgs,
    /// The host name model service URLs carry (`http://HOST:PORT`); default: the API's
    /// listen address, or 127.0.0.1 when that is 0.0.0.0.
    #[arg(long, env = "BAI_ENDPOINT_HOST")]
    endpoint_host: Option<String>,
    /// Where other managers of the same database reach this one's API, HOST:PORT (a standby
    /// relays to it while this one leads); default: the endpoint host and the listen port.
    #[arg(long, env = "BAI_ADVERTISE", value_name = "HOST:PORT")]
    advertise: Option<String>,
    /// The image SFTP sessions run (it needs sshd); default: the bundled `python` image.
    #[arg(long, env = "BAI_SFTP_IMAGE")]
    sftp_image: Option<String>,
    /// An SFTP session with no open connection for this long ends.
    #[arg(long, env = "BAI_SFTP_IDLE", default_value = "10m", value_parser = parse_duration)]
    sftp_idle: std::time::Duration,
    /// Warm pools: agents keep kernels started for each resource group's configured shapes
    /// and, in its automatic mode, its most launched recent ones (`on`), or none (`off`).
    #[arg(long, env = "BAI_WARM_POOLS", default_value = "on", value_parser = parse_on_off)]
    warm_pools: bool,
    /// Host ports the app proxy's port mode (and service endpoints) hand out, FIRST-LAST.
    #[arg(long, env = "BAI_APP_PORTS", default_value = "30000-30199", value_parser = parse_port_range)]
    app_ports: (u16, u16),
    /// Scheduler safety tick in milliseconds (it is also woken by events).
    #[arg(long, env = "BAI_SCHEDULE_TICK_MS", default_value_t = 1000)]
    schedule_tick_ms: u64,
    /// How often each running session's resource use is read and the idle checkers run.
    #[arg(long, env = "BAI_MONITOR_INTERVAL_MS", default_value_t = 5000)]
    monitor_interval_ms: u64,
    /// The utilization idle checker, e.g. `window=1800,grace=600,cpu_util=1,mem=0,op=and`
    /// (seconds; thresholds in percent of the allocation); off when not given.
    #[arg(long, env = "BAI_IDLE_UTILIZATION", value_parser = parse_utilization)]
    idle_utilization: Option<bai_core::idle::UtilizationConfig>,
    /// One more storage host for data folders, NAME=PATH (repeatable; the env variable takes
    /// a comma-separated list), e.g. `nfs:shared=/mnt/nfs/bai` for an NFS export mounted at
    /// the same path on every agent. `local:volume1` (under the data dir) always exists.
    #[arg(
        long = "storage-host",
        env = "BAI_STORAGE_HOSTS",
        value_name = "NAME=PATH"
    )]
    storage_hosts: Vec<String>,
    /// Where new data folders go when the request names no host.
    #[arg(
        long,
        env = "BAI_DEFAULT_STORAGE_HOST",
        default_value = bai_ground::storage::LOCAL_HOST,
        value_name = "NAME"
    )]
    default_storage_host: String,
}

/// A login configuration that cannot be used stops `baid up`: one line, exit code 2.
fn config_or_exit<T>(made: Result<T>) -> T {
    made.unwrap_or_else(|e| {
        eprintln!("Error: {e:#}");
        std::process::exit(2)
    })
}

pub fn default_data_dir() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root"))
        .join(".local/share/bai")
}

#[tokio::main]
async fn main() -> Result<()> {
    // The config file's keys become flags where the command line and the environment set
    // none; a bad file stops baid with one line.
    let argv = match config_file::with_config(&Cli::command(), std::env::args_os().collect()) {
        Ok(argv) => argv,
        Err(e) => {
            eprintln!("Error: {e:#}");
            std::process::exit(2);
        }
    };
    let cli = Cli::parse_from(argv);
    let logs = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,bollard=warn,hyper=warn".into()),
        )
        .with_writer(std::io::stderr);
    match cli.log_format {
        LogFormat::Text => logs.init(),
        LogFormat::Json => logs.json().init(),
    }
    if let Some((point, hit)) = bai_fault::armed() {
        // Only test builds (`--features fault-points`) arm a point; the crash tests wait for it.
        tracing::warn!(
            point,
            hit,
            "fault point armed: this process kills itself there"
        );
    }
    match cli.cmd {
        Cmd::Up(args) => up(*args).await,
        Cmd::Agent(args) => agent::run(*args).await,
        Cmd::Db(args) => db::run(args),
    }
}

async fn up(args: UpArgs) -> Result<()> {
    let data_dir = args.data_dir.clone().unwrap_or_else(default_data_dir);
    std::fs::create_dir_all(&data_dir)
        .with_context(|| format!("cannot create the data dir {}", data_dir.display()))?;
    // One baid per data dir, for as long as this one runs.
    let _lock = lock::wait(&data_dir)?;
    // A bad storage configuration stops baid with one line (no backtrace, whatever
    // RUST_BACKTRACE says): what is wrong and with which host.
    let storage = match storage_config(&args.storage_hosts, &args.default_storage_host)
        .and_then(|c| bai_ground::storage::Storage::open(&data_dir, &c))
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("Error: bad storage host configuration: {e}");
            std::process::exit(2);
        }
    };
    // A bad directory (`--ldap-*`) or OpenID provider (`--oidc-*`) configuration stops baid
    // with one line, before anything.
    let directory = config_or_exit(args.ldap.directory());
    let oidc = config_or_exit(args.oidc.provider());
    // A database that does not open (or one of a newer schema than this build's) stops baid
    // with one line; a manager that starts again after losing the lead waits for it.
    let store = open::store(&args, &data_dir).await;
    let endpoint_host = args
        .endpoint_host
        .clone()
        .unwrap_or_else(|| match args.listen.ip() {
            ip if ip.is_unspecified() => "127.0.0.1".to_string(),
            std::net::IpAddr::V6(ip) => format!("[{ip}]"),
            ip => ip.to_string(),
        });
    let tls = https::choose(
        args.tls_cert.clone(),
        args.tls_key.clone(),
        args.tls_self_signed,
        &data_dir,
        &tls_names(&args, &endpoint_host),
    )?;
    let acceptor = tls.as_ref().map(https::acceptor).transpose()?;
    // Lead, or stand by until this manager may: nothing below runs on a standby.
    let bid = lead::bid(
        args.advertise
            .clone()
            .unwrap_or_else(|| format!("{endpoint_host}:{}", args.listen.port())),
    );
    let plan = lead::StandbyPlan {
        api: args.listen,
        app_ports: args.app_ports,
        plain_http: tls.is_none(),
    };
    let lease = match lead::take(&store, &bid, plan).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("Error: {e:#}");
            std::process::exit(2);
        }
    };
    if let Err(e) = store.fence(lease::LEASE, lease.term) {
        open::database_failed(e);
    }
    lead::keep(store.clone(), bid.clone(), lease.term);
    let endpoint = match &tls {
        Some(_) => format!("https://{}", args.listen),
        None => format!("http://{}", args.listen),
    };
    let trust = tls
        .as_ref()
        .filter(|_| args.tls_self_signed)
        .map(|t| t.cert.clone());
    let accounts = bootstrap::ensure_accounts(&store, &data_dir, &endpoint, trust.as_deref())?;

    let agent_id = match store.meta_get("agent_id")? {
        Some(id) => id,
        None => {
            let id = format!("agent-{}", &hex::encode(rand::random::<[u8; 4]>()));
            store.meta_set("agent_id", &id)?;
            id
        }
    };
    let config = ManagerConfig {
        data_dir: data_dir.clone(),
        schedule_tick_ms: args.schedule_tick_ms.max(10),
        app_port_pool: args.app_ports,
        monitor: bai_ground::stats::book::MonitorConfig {
            interval: std::time::Duration::from_millis(args.monitor_interval_ms.max(100)),
            utilization: args.idle_utilization.clone(),
        },
        storage: Some(storage),
        agent_listen: args.agent_listen.0,
        agent_lost_after: args.agent_lost_after,
        agent_gone_after: args.agent_gone_after,
        registry: args.node.registry.clone(),
        metrics_token: args.metrics_token.clone().filter(|t| !t.trim().is_empty()),
        endpoint_host,
        tls: tls.is_some(),
        audit_retention: Some(args.audit_retention).filter(|d| !d.is_zero()),
        session_detail_retention: Some(args.session_detail_retention).filter(|d| !d.is_zero()),
        sftp_image: args.sftp_image.clone().filter(|i| !i.trim().is_empty()),
        sftp_idle: args.sftp_idle,
        warm_pools: args.warm_pools,
        lease_term: u64::try_from(lease.term).unwrap_or(0),
        ..Default::default()
    };
    let mut agents: Vec<Arc<dyn AgentRpc>> = Vec::new();
    let mut docker_agent = None;
    if !args.no_docker && !args.no_local_agent {
        let agent = node::docker_agent(
            &args.node,
            &agent_id,
            "default",
            &data_dir,
            Default::default(),
            None,
        )
        .await?;
        docker_agent = Some(agent.clone());
        agents.push(Arc::new(agent));
    }
    if args.dummy_agents > 0 {
        let capacity = parse_capacity(&args.dummy_capacity)?;
        if store.resource_group(&args.dummy_group)?.is_none() {
            store.put_resource_group(&bai_store::ResourceGroupRow::new(&args.dummy_group))?;
        }
        for i in 0..args.dummy_agents {
            agents.push(Arc::new(DummyAgent::new(DummyAgentConfig {
                id: format!("dummy-{}-{i:04}", args.dummy_group),
                scaling_group: args.dummy_group.clone(),
                capacity: capacity.clone(),
                start_delay: std::time::Duration::from_millis(args.dummy_start_delay_ms),
                images: vec![bootstrap::PYTHON_IMAGE.to_string()],
            })));
        }
    }
    if agents.is_empty() && args.agent_listen.0.is_none() {
        anyhow::bail!(
            "no agent to run: drop --no-docker/--no-local-agent, add --dummy-agents N, or let remote agents join (--agent-listen)"
        );
    }
    let started = bai_manager::start(store.clone(), config, agents).await?;
    let (m, handles) = (started.manager, started.agents);
    if let Some(d) = directory {
        bai_manager::web::directory::spawn_sync(m.store.clone(), d.clone());
        let _ = m.directory.set(d);
    }
    if let Some(p) = oidc {
        let _ = m.oidc.set(p);
    }
    for h in &handles {
        bai_control::images::aliases::register(&store, &h.info())?;
    }
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    println!("bai is up.");
    println!("  API endpoint : {endpoint}");
    match bai_manager::web::web_dir() {
        Some(_) => {
            println!("  web UI       : {endpoint}/  (log in with an email and web password below)")
        }
        None => println!(
            "  web UI       : not built (make up builds it: cd web && npm ci && npm run build)"
        ),
    }
    println!("  data dir     : {}", data_dir.display());
    if let Some(d) = m.directory.get() {
        println!(
            "  directory    : {} (web logins of names that are no local account)",
            d.config().url
        );
    }
    if let Some(p) = m.oidc.get() {
        println!(
            "  OpenID       : {} (\"Log in with {}\" on the login page)",
            p.config().issuer,
            p.config().name
        );
    }
    if let Some(t) = &tls {
        println!("  HTTPS        : certificate {}", t.cert.display());
    }
    for h in m.storage.hosts() {
        let default = if h.name == m.storage.default_host() {
            " (default)"
        } else {
            ""
        };
        println!(
            "  storage host : {} at {}{default}",
            h.name,
            h.root.display()
        );
    }
    if let Some(h) = handles.first() {
        print_agent(&h.info());
    }
    match m.remote.listen.get() {
        Some(addr) => println!(
            "  agents join  : {addr} (on another machine: baid agent --manager THIS-HOST:{} --token TOKEN; TOKEN from `bai admin agent-token create`)",
            addr.port()
        ),
        None => println!("  agents join  : off (--agent-listen)"),
    }
    if handles.len() > 1 {
        println!(
            "  dummy agents : {} in resource group {:?} (no containers)",
            args.dummy_agents, args.dummy_group
        );
    }
    accounts.print();
    println!("Stop with Ctrl-C.");
    match acceptor {
        Some(acceptor) => {
            https::serve(
                listener,
                acceptor,
                bai_manager::api::router(m),
                shutdown_signal(),
            )
            .await
        }
        None => axum::serve(
            listener,
            bai_manager::api::router(m)
                .into_make_service_with_connect_info::<std::net::SocketAddr>(),
        )
        .with_graceful_shutdown(shutdown_signal())
        .await
        .context("API server failed")?,
    }
    if let Some(a) = docker_agent {
        a.stop().await;
    }
    lead::release(&store, &bid, lease.term);
    Ok(())
}

/// The names a self-signed certificate covers: localhost, the listen address and the
/// endpoint host.
fn tls_names(args: &UpArgs, endpoint_host: &str) -> Vec<String> {
    let mut names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    let ip = args.listen.ip();
    if !ip.is_unspecified() {
        names.push(ip.to_string());
    }
    names.push(endpoint_host.trim_matches(['[', ']']).to_string());
    names.sort();
    names.dedup();
    names
}

/// The local agent's line (and its accelerator's) in the banner.
fn print_agent(info: &bai_core::agent::AgentInfo) {
    println!(
        "  agent        : {} ({} cores, {} memory, {} images)",
        info.id,
        bai_core::resources::format_cpu(info.capacity.cpu_milli),
        bai_core::resources::format_bytes(info.capacity.mem),
        info.images.len()
    );
    if let Some(d) = info.devices.first() {
        let total: u64 = info.devices.iter().map(|d| d.capacity_milli).sum();
        println!(
            "  accelerator  : {} × {} ({}, {} {}){}",
            info.devices.len(),
            d.model,
            d.slot,
            bai_core::resources::format_cpu(total),
            bai_core::accel::display_unit(&d.slot),
            if d.plugin == "mock" {
                " MOCK: no real device"
            } else {
                ""
            }
        );
    }
}

pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {},
            _ = term.recv() => {},
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
    tracing::info!("shutting down; sessions keep running and are picked up on the next start");
}

/// `--storage-host` / `BAI_STORAGE_HOSTS` and `--default-storage-host` as a storage
/// configuration (the hosts are checked by `Storage::open`).
fn storage_config(
    hosts: &[String],
    default: &str,
) -> Result<bai_ground::storage::StorageConfig, String> {
    let default = default.trim();
    bai_ground::storage::check_host_name(default)
        .map_err(|e| format!("--default-storage-host: {e}"))?;
    Ok(bai_ground::storage::StorageConfig {
        hosts: bai_ground::storage::parse_host_specs(hosts)?,
        default: Some(default.to_string()),
    })
}

#[cfg(test)]
#[path = "cli_tests.rs"]
mod tests;

//! `baid`: the bai server. `baid up` runs everything on one machine: the API and manager,
//! one agent on the local Docker engine, and the embedded SQLite database.
#![forbid(unsafe_code)]

mod bootstrap;

use anyhow::{Context, Result};
use bai_agent::{DockerAgent, DockerAgentConfig, DummyAgent, DummyAgentConfig};
use bai_core::agent::AgentRpc;
use bai_manager::ManagerConfig;
use bai_store::Store;
use clap::{Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Parser)]
#[command(name = "baid", version, about = "The bai server")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the whole platform on this machine: API, manager, one agent, SQLite.
    Up(UpArgs),
}

#[derive(clap::Args)]
struct UpArgs {
    /// Address the API listens on.
    #[arg(long, env = "BAI_LISTEN", default_value = "127.0.0.1:8090")]
    listen: SocketAddr,
    /// Where the database, kernel scratch directories and env files live.
    #[arg(long, env = "BAI_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// The krunner binary bind-mounted into every container (default: next to baid).
    #[arg(long, env = "BAI_KRUNNER")]
    krunner: Option<PathBuf>,
    /// Memory kept back for the host and bai itself.
    #[arg(long, env = "BAI_RESERVED_MEM_MB", default_value_t = 512)]
    reserved_mem_mb: u64,
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
    /// Give the local agent the MOCK accelerator described in FILE (Backend.AI's
    /// `mock-accelerator.toml` format): fake GPUs for machines without any, so scheduling,
    /// policies and the UI can be tried. Kernels get only `BACKENDAI_MOCK_CUDA_*` variables.
    #[arg(long, env = "BAI_MOCK_ACCELERATOR", value_name = "FILE")]
    mock_accelerator: Option<PathBuf>,
    /// How real NVIDIA GPUs are handed out: `discrete` (whole GPUs, `cuda.device`) or
    /// `fractional` (shares, `cuda.shares`, enforced with NVIDIA MPS).
    #[arg(long, env = "BAI_GPU_MODE", default_value = "discrete", value_parser = parse_mode)]
    gpu_mode: bai_core::accel::AllocMode,
    /// The smallest fractional GPU share handed out.
    #[arg(long, env = "BAI_GPU_QUANTUM", default_value = "0.1", value_parser = parse_quantum)]
    gpu_quantum: u64,
    /// Do not start the Docker agent (only dummy agents).
    #[arg(long, env = "BAI_NO_DOCKER")]
    no_docker: bool,
    /// Host ports the app proxy's port mode hands out, FIRST-LAST.
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
        default_value = bai_manager::storage::LOCAL_HOST,
        value_name = "NAME"
    )]
    default_storage_host: String,
}

fn parse_mode(s: &str) -> Result<bai_core::accel::AllocMode, String> {
    bai_core::accel::AllocMode::parse(s)
}

/// `0.1` → 100 milli-shares.
fn parse_quantum(s: &str) -> Result<u64, String> {
    let q: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number"))?;
    bai_core::accel::parse_quantum(q)
}

fn parse_utilization(s: &str) -> Result<bai_core::idle::UtilizationConfig, String> {
    bai_core::idle::UtilizationConfig::parse(s)
}

/// `cpu=4,mem=8g` → slots.
fn parse_capacity(s: &str) -> Result<bai_core::ResourceSlots> {
    let mut map = serde_json::Map::new();
    for part in s.split(',').filter(|p| !p.trim().is_empty()) {
        let (k, v) = part
            .split_once('=')
            .with_context(|| format!("capacity {part:?} must look like cpu=4 or mem=8g"))?;
        map.insert(
            k.trim().to_string(),
            serde_json::Value::String(v.trim().to_string()),
        );
    }
    let req = bai_core::resources::ResourceRequest::parse(&map, &serde_json::Map::new(), &[])
        .map_err(|e| anyhow::anyhow!("bad --dummy-capacity: {e}"))?;
    Ok(req.slots)
}

/// The local agent's accelerator plugin: the mock when asked for, else real NVIDIA GPUs
/// when the driver finds any (none and no driver: no plugin, no error).
fn accelerator(
    args: &UpArgs,
    data_dir: &std::path::Path,
) -> Result<Option<Arc<dyn bai_agent::accel::Accelerator>>> {
    if let Some(file) = &args.mock_accelerator {
        let mock = bai_agent::accel::mock::MockAccelerator::load(file)
            .map_err(|e| anyhow::anyhow!("bad --mock-accelerator: {e}"))?;
        return Ok(Some(Arc::new(mock)));
    }
    let config = bai_agent::accel::cuda::CudaConfig {
        mode: args.gpu_mode,
        quantum_milli: args.gpu_quantum,
        mps_dir: data_dir.join("mps"),
    };
    match bai_agent::accel::cuda::CudaAccelerator::discover(config) {
        Ok(Some(cuda)) => Ok(Some(Arc::new(cuda))),
        Ok(None) => Ok(None),
        Err(e) => anyhow::bail!("the NVIDIA GPUs of this node cannot be used: {e}"),
    }
}

fn default_data_dir() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root"))
        .join(".local/share/bai")
}

#[tokio::main]
async fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,bollard=warn,hyper=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().cmd {
        Cmd::Up(args) => up(args).await,
    }
}

async fn up(args: UpArgs) -> Result<()> {
    let data_dir = args.data_dir.clone().unwrap_or_else(default_data_dir);
    std::fs::create_dir_all(&data_dir)
        .with_context(|| format!("cannot create the data dir {}", data_dir.display()))?;
    // A bad storage configuration stops baid with one line (no backtrace, whatever
    // RUST_BACKTRACE says): what is wrong and with which host.
    let storage = match storage_config(&args.storage_hosts, &args.default_storage_host)
        .and_then(|c| bai_manager::storage::Storage::open(&data_dir, &c))
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("Error: bad storage host configuration: {e}");
            std::process::exit(2);
        }
    };
    let store =
        Arc::new(Store::open(&data_dir.join("bai.db")).context("cannot open the database")?);
    let endpoint = format!("http://{}", args.listen);
    let accounts = bootstrap::ensure_accounts(&store, &data_dir, &endpoint)?;

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
        monitor: bai_manager::monitor::book::MonitorConfig {
            interval: std::time::Duration::from_millis(args.monitor_interval_ms.max(100)),
            utilization: args.idle_utilization.clone(),
        },
        storage: Some(storage),
        ..Default::default()
    };
    let mut agents: Vec<Arc<dyn AgentRpc>> = Vec::new();
    if !args.no_docker {
        let krunner = match args.krunner.clone() {
            Some(p) => p,
            None => std::env::current_exe()
                .context("cannot find baid's own path")?
                .with_file_name("bai-krunner"),
        };
        // Docker bind mounts need an absolute path.
        let krunner = std::fs::canonicalize(&krunner).with_context(|| {
            format!(
                "the kernel runner {} is missing: build it with `cargo build -p bai-krunner` or set BAI_KRUNNER",
                krunner.display()
            )
        })?;
        let accelerator = accelerator(&args, &data_dir)?;
        let agent = DockerAgent::connect(DockerAgentConfig {
            agent_id: agent_id.clone(),
            scaling_group: "default".into(),
            data_dir: data_dir.clone(),
            krunner_path: krunner,
            reserved_mem: args.reserved_mem_mb * 1024 * 1024,
            reserved_cpu_milli: 0,
            accelerator,
        })
        .await
        .context("cannot reach the Docker engine (is dockerd running? `make up` starts it)")?;
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
    if agents.is_empty() {
        anyhow::bail!("no agent to run: drop --no-docker or add --dummy-agents N");
    }
    let started = bai_manager::start(store.clone(), config, agents).await?;
    let (m, handles) = (started.manager, started.agents);
    for h in &handles {
        bootstrap::register_aliases(&store, &h.info())?;
    }
    let handle = handles[0].clone();

    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let info = handle.info();
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
    if handles.len() > 1 {
        println!(
            "  dummy agents : {} in resource group {:?} (no containers)",
            args.dummy_agents, args.dummy_group
        );
    }
    accounts.print();
    println!("Stop with Ctrl-C.");
    axum::serve(listener, bai_manager::api::router(m))
        .with_graceful_shutdown(shutdown_signal())
        .await
        .context("API server failed")?;
    Ok(())
}

async fn shutdown_signal() {
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
) -> Result<bai_manager::storage::StorageConfig, String> {
    let default = default.trim();
    bai_manager::storage::check_host_name(default)
        .map_err(|e| format!("--default-storage-host: {e}"))?;
    Ok(bai_manager::storage::StorageConfig {
        hosts: bai_manager::storage::parse_host_specs(hosts)?,
        default: Some(default.to_string()),
    })
}

/// `FIRST-LAST` (inclusive), both 1024–65535.
fn parse_port_range(s: &str) -> Result<(u16, u16), String> {
    let (a, b) = s
        .split_once('-')
        .ok_or_else(|| format!("{s:?} is not FIRST-LAST, e.g. 30000-30199"))?;
    let port = |p: &str| -> Result<u16, String> {
        p.trim()
            .parse::<u16>()
            .ok()
            .filter(|p| *p >= 1024)
            .ok_or_else(|| format!("{p:?} is not a port from 1024 to 65535"))
    };
    let (a, b) = (port(a)?, port(b)?);
    if a > b {
        return Err(format!("{s:?}: the first port is after the last"));
    }
    Ok((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up_args(args: &[&str]) -> UpArgs {
        let mut argv = vec!["baid", "up"];
        argv.extend_from_slice(args);
        match Cli::try_parse_from(argv).expect("parse").cmd {
            Cmd::Up(a) => a,
        }
    }

    #[test]
    fn storage_hosts_from_repeated_flags() {
        let a = up_args(&[
            "--storage-host",
            "nfs:shared=/mnt/nfs",
            "--storage-host",
            "fast:ssd=/ssd,more:v=/m",
            "--default-storage-host",
            "nfs:shared",
        ]);
        let c = storage_config(&a.storage_hosts, &a.default_storage_host).expect("valid");
        assert_eq!(c.default.as_deref(), Some("nfs:shared"));
        let names: Vec<&str> = c.hosts.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["nfs:shared", "fast:ssd", "more:v"]);
    }

    #[test]
    fn storage_defaults_and_bad_values() {
        let a = up_args(&[]);
        let c = storage_config(&a.storage_hosts, &a.default_storage_host).expect("valid");
        assert!(c.hosts.is_empty());
        assert_eq!(c.default.as_deref(), Some("local:volume1"));
        let e = storage_config(&[], "nope").expect_err("bad default");
        assert!(e.starts_with("--default-storage-host:"), "{e}");
        let e = storage_config(&["x:y".into()], "local:volume1").expect_err("no path");
        assert!(e.contains("NAME=PATH"), "{e}");
    }
}

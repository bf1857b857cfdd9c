//! What every node runs, whether inside `baid up` or as `baid agent`: the Docker agent with
//! its kernel runner and its accelerator plugin.

use anyhow::{Context, Result};
use bai_agent::{DockerAgent, DockerAgentConfig};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The flags of a node's agent.
#[derive(clap::Args, Clone)]
pub struct NodeArgs {
    /// The krunner binary bind-mounted into every container (default: next to baid).
    #[arg(long, env = "BAI_KRUNNER")]
    pub krunner: Option<PathBuf>,
    /// Memory kept back for the host and bai itself.
    #[arg(long, env = "BAI_RESERVED_MEM_MB", default_value_t = 512)]
    pub reserved_mem_mb: u64,
    /// Give the local agent the MOCK accelerator described in FILE (Backend.AI's
    /// `mock-accelerator.toml` format): fake GPUs for machines without any, so scheduling,
    /// policies and the UI can be tried. Kernels get only `BACKENDAI_MOCK_CUDA_*` variables.
    #[arg(long, env = "BAI_MOCK_ACCELERATOR", value_name = "FILE")]
    pub mock_accelerator: Option<PathBuf>,
    /// How real NVIDIA GPUs are handed out: `discrete` (whole GPUs, `cuda.device`) or
    /// `fractional` (shares, `cuda.shares`, enforced with NVIDIA MPS).
    #[arg(long, env = "BAI_GPU_MODE", default_value = "discrete", value_parser = parse_mode)]
    pub gpu_mode: bai_core::accel::AllocMode,
    /// The smallest fractional GPU share handed out.
    #[arg(long, env = "BAI_GPU_QUANTUM", default_value = "0.1", value_parser = parse_quantum)]
    pub gpu_quantum: u64,
    /// How many fGPU one physical GPU counts as in fractional mode (1 to 100): with 5,
    /// `cuda.shares=1` is a fifth of a GPU's memory and SMs, and a GPU holds 5 fGPU.
    #[arg(long, env = "BAI_FGPU_PER_GPU", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=100))]
    pub fgpu_per_gpu: u64,
    /// The cluster's image registry (`host:port`, plain HTTP; Debian's `docker-registry`) as
    /// this node reaches it: images this node lacks are pulled from there. `baid up` also
    /// pushes its kernel images there and lists what it holds.
    #[arg(long, env = "BAI_REGISTRY", value_name = "HOST:PORT")]
    pub registry: Option<String>,
    /// Kernels this node keeps started for the shapes people launch, claimed by a create of
    /// exactly that image and resources (a session from the pool starts without waiting for
    /// the engine): `IMAGE[,cpu=N][,mem=SIZE][,shm=SIZE][,count=N]`, several separated by
    /// `;`, e.g. `bai/python:3.11-bookworm,cpu=1,mem=1g,count=2`.
    #[arg(long, env = "BAI_WARM_POOL", value_name = "SHAPES", default_value = "",
          value_parser = parse_pool)]
    pub warm_pool: PoolTargets,
}

/// The warm pool's targets, as one flag value.
#[derive(Clone, Debug, Default)]
pub struct PoolTargets(pub Vec<bai_core::pool::PoolTarget>);

pub fn parse_pool(s: &str) -> Result<PoolTargets, String> {
    bai_core::pool::parse_targets(s)
        .map(PoolTargets)
        .map_err(|e| e.to_string())
}

pub fn parse_mode(s: &str) -> Result<bai_core::accel::AllocMode, String> {
    bai_core::accel::AllocMode::parse(s)
}

/// `0.1` → 100 milli-shares.
pub fn parse_quantum(s: &str) -> Result<u64, String> {
    let q: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number"))?;
    bai_core::accel::parse_quantum(q)
}

/// The node's accelerator plugin: the mock when asked for, else real NVIDIA GPUs
/// when the driver finds any (none and no driver: no plugin, no error).
fn accelerator(
    args: &NodeArgs,
    data_dir: &Path,
) -> Result<Option<Arc<dyn bai_agent::accel::Accelerator>>> {
    if let Some(file) = &args.mock_accelerator {
        let mock = bai_agent::accel::mock::MockAccelerator::load(file)
            .map_err(|e| anyhow::anyhow!("bad --mock-accelerator: {e}"))?;
        return Ok(Some(Arc::new(mock)));
    }
    let config = bai_agent::accel::cuda::CudaConfig {
        mode: args.gpu_mode,
        quantum_milli: args.gpu_quantum,
        shares_per_gpu: args.fgpu_per_gpu,
        mps_dir: data_dir.join("mps"),
    };
    match bai_agent::accel::cuda::CudaAccelerator::discover(config) {
        Ok(Some(cuda)) => Ok(Some(Arc::new(cuda))),
        Ok(None) => Ok(None),
        Err(e) => anyhow::bail!("the NVIDIA GPUs of this node cannot be used: {e}"),
    }
}

/// The Docker agent of this node: `id` in `group`, its scratch files under `data_dir`.
pub async fn docker_agent(
    args: &NodeArgs,
    id: &str,
    group: &str,
    data_dir: &Path,
    storage_hosts: std::collections::BTreeMap<String, PathBuf>,
    manager_host: Option<String>,
) -> Result<DockerAgent> {
    let krunner = match args.krunner.clone() {
        Some(p) => p,
        None => std::env::current_exe()
            .context("cannot find baid's own path")?
            .with_file_name("bai-krunner"),
    };
    // Docker bind mounts need an absolute path.
    let krunner = std::fs::canonicalize(&krunner).with_context(|| {
        format!(
            "the kernel runner {} is missing: build it with scripts/build-krunner.sh (make build) or set BAI_KRUNNER",
            krunner.display()
        )
    })?;
    let accelerator = accelerator(args, data_dir)?;
    DockerAgent::connect(DockerAgentConfig {
        agent_id: id.to_string(),
        scaling_group: group.to_string(),
        data_dir: data_dir.to_path_buf(),
        krunner_path: krunner,
        reserved_mem: args.reserved_mem_mb * 1024 * 1024,
        reserved_cpu_milli: 0,
        accelerator,
        storage_hosts,
        manager_host,
        registry: args.registry.clone(),
        warm_pool: args.warm_pool.0.clone(),
    })
    .await
    .context("cannot reach the Docker engine (is dockerd running? `make up` starts it)")
}

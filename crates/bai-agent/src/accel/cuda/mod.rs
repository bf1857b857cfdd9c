//! The cuda plugin: real NVIDIA GPUs, found through NVML (loaded at run time; a node
//! without the driver has no GPUs and no error), handed to containers by the plugin
//! itself, with nothing but the driver: no NVIDIA container toolkit, on any Docker.
//!
//! * `cuda.device` (discrete): whole GPUs. The container gets the driver's control nodes
//!   and each granted GPU's `/dev/nvidiaN` (nothing else: Docker's device cgroup refuses
//!   the rest), the driver's libraries and tools read-only ([`driver`]), and
//!   `CUDA_VISIBLE_DEVICES=0,1,…`: CUDA numbers the GPUs it can open from 0, in PCI bus
//!   order with `CUDA_DEVICE_ORDER=PCI_BUS_ID`, the order of NVML's indices.
//! * `cuda.shares` (fractional): the same devices, and the kernel becomes a client of
//!   NVIDIA MPS, which enforces the share: `CUDA_MPS_PINNED_DEVICE_MEM_LIMIT` gives each
//!   device (by container-local index) `floor(memory * share)` MiB and
//!   `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` the largest per-device share of the SMs. The
//!   container bind mounts the daemon's pipe directory at [`MPS_PIPE_IN_CONTAINER`] and
//!   shares the host's IPC namespace (MPS clients talk to the server over shared memory).
//!
//! **One MPS control daemon for all of the node's GPUs, not one per GPU.** An MPS client
//! connects to exactly one pipe directory, so with a daemon per GPU a share spanning two
//! GPUs (1.5 fGPU = 1.0 + 0.5) could only ever use one of them. With one daemon that sees
//! every GPU, the client uses all of its devices and the memory limit still holds per
//! device. Fractional mode without a working MPS daemon is not offered: discovery fails.
//!
//! Limits: kernels share one MPS server per user id (all kernels run as uid 1000, so they
//! share one); MIG devices are not handled (a MIG-enabled GPU is offered whole).

mod args;
pub mod cdi;
pub mod driver;
mod mps;
mod nvml;

pub use args::{
    GpuDevice, MPS_PIPE_IN_CONTAINER, MpsClient, container_args, mem_limit_mib, thread_percentage,
};
pub use driver::{DriverFiles, Host};
pub use mps::{MpsDaemon, find_control};

use super::{Accelerator, ContainerArgs, DeviceAlloc};
use bai_core::accel::{AllocMode, DEFAULT_QUANTUM_MILLI, DeviceInfo, DeviceReading};
use std::path::{Path, PathBuf};

/// How the cuda plugin hands out the node's GPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaConfig {
    pub mode: AllocMode,
    /// Smallest step of a share, milli-units (fractional mode only; 1..=1000).
    pub quantum_milli: u64,
    /// How many fGPU one physical GPU counts as (fractional mode only; 1..=100): with 5,
    /// `cuda.shares=1` is a fifth of a GPU (seed 002: "5 FGPU means 1 physical GPU").
    pub shares_per_gpu: u64,
    /// Where the MPS daemon's `pipe` and `log` directories go (fractional mode only), e.g.
    /// `<agent data dir>/mps`.
    pub mps_dir: PathBuf,
}

impl CudaConfig {
    /// Fractional shares in steps of [`DEFAULT_QUANTUM_MILLI`].
    pub fn fractional(mps_dir: impl Into<PathBuf>) -> CudaConfig {
        CudaConfig {
            mode: AllocMode::Fractional,
            quantum_milli: DEFAULT_QUANTUM_MILLI,
            shares_per_gpu: 1,
            mps_dir: mps_dir.into(),
        }
    }

    /// Whole GPUs (no MPS).
    pub fn discrete() -> CudaConfig {
        CudaConfig {
            mode: AllocMode::Discrete,
            quantum_milli: 1000,
            shares_per_gpu: 1,
            mps_dir: PathBuf::new(),
        }
    }
}

/// The node's NVIDIA GPUs.
#[derive(Debug)]
pub struct CudaAccelerator {
    nvml: nvml_wrapper::Nvml,
    mode: AllocMode,
    /// `cuda.device` or `cuda.shares`, after the mode.
    slot: String,
    gpus: Vec<GpuDevice>,
    devices: Vec<DeviceInfo>,
    /// What one GPU counts as in the slot, milli-units.
    capacity_milli: u64,
    driver: DriverFiles,
    mps: Option<MpsDaemon>,
}

impl CudaAccelerator {
    /// Finds the node's GPUs. Ok(None) when the NVIDIA driver is absent or there are no
    /// GPUs; Err when the configuration is wrong or fractional mode cannot start MPS.
    pub fn discover(config: CudaConfig) -> Result<Option<CudaAccelerator>, String> {
        let quantum = match config.mode {
            AllocMode::Discrete => 1000,
            AllocMode::Fractional if (1..=1000).contains(&config.quantum_milli) => {
                config.quantum_milli
            }
            AllocMode::Fractional => {
                return Err(format!(
                    "quantum {} milli must be above 0 and at most 1000",
                    config.quantum_milli
                ));
            }
        };
        let capacity_milli = match config.mode {
            AllocMode::Discrete => 1000,
            AllocMode::Fractional if (1..=100).contains(&config.shares_per_gpu) => {
                config.shares_per_gpu * 1000
            }
            AllocMode::Fractional => {
                return Err(format!(
                    "{} fGPU to a GPU: give 1 to 100",
                    config.shares_per_gpu
                ));
            }
        };
        let Some(nvml) = nvml::load() else {
            return Ok(None);
        };
        let gpus = nvml::list(&nvml)?;
        if gpus.is_empty() {
            tracing::info!("NVML found no usable GPUs: no cuda devices");
            return Ok(None);
        }
        let version = nvml
            .sys_driver_version()
            .map_err(|e| format!("NVML does not tell the driver's version: {e}"))?;
        // A CDI spec where the site keeps one, else the plugin's own search.
        let driver = match cdi::find(&Host::real())? {
            Some((path, files)) => {
                tracing::info!(spec = %path.display(), "GPU containers get what the CDI spec says");
                files
            }
            None => DriverFiles::find(
                &Host::real(),
                &version,
                driver::loaded_nvml_dir().as_deref(),
            )
            .map_err(|e| format!("the driver's files for containers: {e}"))?,
        };
        tracing::info!(
            version = %driver.version,
            files = driver.mounts.len(),
            nodes = %driver.control_nodes.join(","),
            "NVIDIA driver files found for containers"
        );
        let slot = config.mode.slot("cuda");
        let devices = gpus
            .iter()
            .map(|g| DeviceInfo {
                slot: slot.clone(),
                id: g.index.to_string(),
                plugin: "cuda".into(),
                model: g.model.clone(),
                memory: g.memory,
                numa_node: g.numa_node,
                capacity_milli,
                quantum_milli: quantum,
            })
            .collect();
        let mps = match config.mode {
            AllocMode::Discrete => None,
            AllocMode::Fractional => {
                let indices: Vec<u32> = gpus.iter().map(|g| g.index).collect();
                Some(MpsDaemon::start(&config.mps_dir, &indices).map_err(|e| {
                    format!("fractional GPUs need NVIDIA MPS, which cannot start: {e}")
                })?)
            }
        };
        tracing::info!(gpus = gpus.len(), %slot, "cuda devices found");
        Ok(Some(CudaAccelerator {
            nvml,
            mode: config.mode,
            slot,
            gpus,
            devices,
            capacity_milli,
            driver,
            mps,
        }))
    }

    /// The GPUs with their UUIDs, in NVML index order.
    pub fn gpus(&self) -> &[GpuDevice] {
        &self.gpus
    }

    /// The driver's files and nodes every GPU container gets.
    pub fn driver(&self) -> &DriverFiles {
        &self.driver
    }

    /// The host pipe directory of the MPS daemon (fractional mode).
    pub fn mps_pipe_dir(&self) -> Option<&Path> {
        self.mps.as_ref().map(|m| m.pipe_dir())
    }

    /// The MPS daemon (fractional mode).
    pub fn mps(&self) -> Option<&MpsDaemon> {
        self.mps.as_ref()
    }

    /// Stops the MPS daemon (fractional mode; nothing to do in discrete mode). Not done on
    /// drop: kernels keep using the daemon across agent restarts.
    pub fn stop(&self) -> Result<(), String> {
        self.mps.as_ref().map_or(Ok(()), |m| m.stop())
    }
}

impl Accelerator for CudaAccelerator {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn slot(&self) -> &str {
        &self.slot
    }

    fn mode(&self) -> AllocMode {
        self.mode
    }

    fn devices(&self) -> &[DeviceInfo] {
        &self.devices
    }

    fn container_args(&self, alloc: &DeviceAlloc) -> ContainerArgs {
        let mps = self.mps_pipe_dir().map(|pipe| MpsClient {
            pipe,
            capacity_milli: self.capacity_milli,
        });
        container_args(&self.gpus, &self.driver, mps, alloc)
    }

    /// With `container`: the use of the processes in that container (NVML's compute
    /// processes whose cgroup names it; their SM share and memory). Without: the whole
    /// device's. A share's `mem_used` is capped at its `mem_total`.
    fn readings(&self, alloc: &DeviceAlloc, container: Option<&str>) -> Vec<DeviceReading> {
        args::granted(&self.gpus, alloc)
            .into_iter()
            .map(|(g, milli)| {
                let (util, used) = match container {
                    Some(c) => nvml::usage_of(&self.nvml, g.index, c),
                    None => nvml::usage(&self.nvml, g.index),
                };
                let (mem_total, mem_used) = match self.mode {
                    AllocMode::Discrete => (g.memory, used),
                    AllocMode::Fractional => {
                        let total =
                            bai_core::accel::memory_share(g.memory, milli, self.capacity_milli);
                        (total, used.min(total))
                    }
                };
                DeviceReading {
                    device: g.index.to_string(),
                    util,
                    mem_used,
                    mem_total,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_driver_means_no_gpus_and_bad_quanta_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let has_driver = nvml_wrapper::Nvml::init().is_ok();
        if !has_driver {
            assert!(
                CudaAccelerator::discover(CudaConfig::discrete())
                    .unwrap()
                    .is_none()
            );
            let frac = CudaConfig::fractional(dir.path().join("mps"));
            assert!(CudaAccelerator::discover(frac).unwrap().is_none());
            assert!(!dir.path().join("mps").exists(), "no MPS without GPUs");
        }
        let mut bad = CudaConfig::fractional(dir.path());
        bad.quantum_milli = 0;
        assert!(CudaAccelerator::discover(bad.clone()).is_err());
        bad.quantum_milli = 1001;
        assert!(CudaAccelerator::discover(bad).is_err());
        for shares in [0, 101] {
            let mut bad = CudaConfig::fractional(dir.path());
            bad.shares_per_gpu = shares;
            assert!(
                CudaAccelerator::discover(bad).is_err(),
                "{shares} fGPU to a GPU"
            );
        }
    }
}

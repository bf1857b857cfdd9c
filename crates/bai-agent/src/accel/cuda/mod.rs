//! The cuda plugin: real NVIDIA GPUs, found through NVML (loaded at run time; a node
//! without the driver has no GPUs and no error), handed to containers through Docker's
//! `nvidia` device requests by UUID.
//!
//! * `cuda.device` (discrete): whole GPUs. The container gets the GPUs' UUIDs as device
//!   requests, `NVIDIA_VISIBLE_DEVICES` (the UUIDs) and `CUDA_VISIBLE_DEVICES=0,1,…`:
//!   inside the container the nvidia runtime numbers the granted GPUs from 0, in PCI bus
//!   order, which `CUDA_DEVICE_ORDER=PCI_BUS_ID` makes CUDA's order too.
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
mod mps;
mod nvml;

pub use args::{
    GpuDevice, MPS_PIPE_IN_CONTAINER, container_args, mem_limit_mib, thread_percentage,
};
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
            mps_dir: mps_dir.into(),
        }
    }

    /// Whole GPUs (no MPS).
    pub fn discrete() -> CudaConfig {
        CudaConfig {
            mode: AllocMode::Discrete,
            quantum_milli: 1000,
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
        let Some(nvml) = nvml::load() else {
            return Ok(None);
        };
        let gpus = nvml::list(&nvml)?;
        if gpus.is_empty() {
            tracing::info!("NVML found no usable GPUs: no cuda devices");
            return Ok(None);
        }
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
                capacity_milli: 1000,
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
            mps,
        }))
    }

    /// The GPUs with their UUIDs, in NVML index order.
    pub fn gpus(&self) -> &[GpuDevice] {
        &self.gpus
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
        container_args(&self.gpus, self.mps_pipe_dir(), alloc)
    }

    /// Utilization and used memory are the whole device's (NVML does not tell which kernel
    /// uses what); a share's `mem_used` is capped at its `mem_total`.
    fn readings(&self, alloc: &DeviceAlloc) -> Vec<DeviceReading> {
        args::granted(&self.gpus, alloc)
            .into_iter()
            .map(|(g, milli)| {
                let (util, used) = nvml::usage(&self.nvml, g.index);
                let (mem_total, mem_used) = match self.mode {
                    AllocMode::Discrete => (g.memory, used),
                    AllocMode::Fractional => {
                        let total = bai_core::accel::memory_share(g.memory, milli, 1000);
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
    }
}

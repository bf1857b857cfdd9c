//! Accelerator plugins: what a node's accelerators are, how they are handed out and what a
//! container needs to use its part of them.
//!
//! A plugin ([`Accelerator`]) offers one slot (`cuda.device` for whole GPUs or `cuda.shares`
//! for fractions), lists its devices, turns an allocation into container arguments and
//! reads each device's use. Which part of which device a kernel holds is the agent's
//! [`alloc::AllocMap`], the same for every plugin. Two plugins exist: [`cuda`] for real
//! NVIDIA GPUs (NVML, the driver's device nodes and libraries, MPS for fractions) and [`mock`], a clearly
//! fake one for machines without GPUs that gives kernels only environment variables.

pub mod alloc;
pub mod cuda;
pub mod mock;

use bai_core::accel::{AllocMode, DeviceInfo, DeviceReading};
use std::collections::BTreeMap;

/// Device id → milli-units of it that one kernel holds.
pub type DeviceAlloc = BTreeMap<String, u64>;

/// What a container needs to use its devices.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerArgs {
    /// Environment variables set for the kernel (the user's own values do not override
    /// these: they are what makes the allocation hold).
    pub env: BTreeMap<String, String>,
    /// Host device nodes the container gets (`HOST`, at the same path inside, or
    /// `HOST:CONTAINER`; read-write-mknod in its device cgroup): what makes a GPU usable
    /// without NVIDIA's container toolkit.
    pub devices: Vec<String>,
    /// Extra bind mounts, `HOST:CONTAINER:MODE`.
    pub binds: Vec<String>,
    /// Directories appended to a search-path variable (`PATH`, `LD_LIBRARY_PATH`) after the
    /// image's or the user's own value.
    pub search_paths: BTreeMap<String, String>,
    /// The container shares the host's IPC namespace (NVIDIA MPS clients need it to reach
    /// the MPS server's shared memory).
    pub ipc_host: bool,
}

/// One accelerator plugin of an agent.
pub trait Accelerator: Send + Sync + std::fmt::Debug {
    /// `cuda` or `mock`.
    fn name(&self) -> &'static str;
    /// The slot the plugin offers.
    fn slot(&self) -> &str;
    fn mode(&self) -> AllocMode;
    /// The devices found (each with its capacity in the slot and its quantum).
    fn devices(&self) -> &[DeviceInfo];
    /// What a container holding `alloc` needs.
    fn container_args(&self, alloc: &DeviceAlloc) -> ContainerArgs;
    /// Each allocated device's use now by the kernel whose container is `container` (the
    /// engine's id; the processes in it), else by anyone: utilization in percent, memory
    /// used against the kernel's share of the device.
    fn readings(&self, alloc: &DeviceAlloc, container: Option<&str>) -> Vec<DeviceReading>;
}

/// `0=500,1=1000` (the container label that keeps an allocation across agent restarts).
pub fn format_alloc(a: &DeviceAlloc) -> String {
    a.iter()
        .map(|(d, m)| format!("{d}={m}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The inverse of [`format_alloc`]; None for anything malformed.
pub fn parse_alloc(s: &str) -> Option<DeviceAlloc> {
    let mut out = DeviceAlloc::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        let (d, m) = part.split_once('=')?;
        out.insert(d.to_string(), m.parse().ok()?);
    }
    Some(out)
}

/// `0,1` of the devices of an allocation, in order.
pub fn device_list(a: &DeviceAlloc) -> String {
    a.keys().cloned().collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_round_trip_as_labels() {
        let a = DeviceAlloc::from([("0".to_string(), 500), ("1".to_string(), 1000)]);
        assert_eq!(format_alloc(&a), "0=500,1=1000");
        assert_eq!(parse_alloc("0=500,1=1000"), Some(a.clone()));
        assert_eq!(device_list(&a), "0,1");
        assert_eq!(parse_alloc(""), Some(DeviceAlloc::new()));
        assert_eq!(parse_alloc("0=half"), None);
    }
}

//! What a container holding part of the node's GPUs needs, as pure functions of an
//! allocation and the plugin's device table (so they are tested without a GPU).

use super::super::{ContainerArgs, DeviceAlloc};
use std::path::Path;

/// Where a fractional kernel finds the MPS daemon's pipe directory inside its container.
pub const MPS_PIPE_IN_CONTAINER: &str = "/opt/bai/mps/pipe";

const MIB: u64 = 1 << 20;

/// One GPU as the plugin keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuDevice {
    /// NVML's index (also the device id the agent reports, as a string).
    pub index: u32,
    /// `GPU-…`, what Docker's `nvidia` device requests name.
    pub uuid: String,
    pub model: String,
    /// Device memory, bytes.
    pub memory: u64,
    pub numa_node: Option<u32>,
}

/// `floor(memory * share / 1000)` in whole MiB: the memory a share of `share_milli` of a
/// device with `memory` bytes may pin.
pub fn mem_limit_mib(memory: u64, share_milli: u64) -> u64 {
    bai_core::accel::memory_share(memory, share_milli, 1000) / MIB
}

/// `round(share * 100 / 1000)`, clamped to `1..=100`: the percentage of the device's SMs
/// an MPS client holding `share_milli` of its largest device may use.
pub fn thread_percentage(share_milli: u64) -> u64 {
    let pct = share_milli.saturating_mul(100).saturating_add(500) / 1000;
    pct.clamp(1, 100)
}

/// The allocated devices that the table knows, ordered by NVML index (the order in which
/// the nvidia runtime numbers them from 0 inside the container), with their share.
pub fn granted<'a>(devices: &'a [GpuDevice], alloc: &DeviceAlloc) -> Vec<(&'a GpuDevice, u64)> {
    let mut out: Vec<(&GpuDevice, u64)> = alloc
        .iter()
        .filter_map(|(id, milli)| {
            let d = devices.iter().find(|d| d.index.to_string() == *id);
            if d.is_none() {
                tracing::warn!(device = %id, "allocation names a GPU this node does not have");
            }
            d.map(|d| (d, *milli))
        })
        .collect();
    out.sort_by_key(|(d, _)| d.index);
    out
}

/// The container arguments for `alloc`. With `mps_pipe` (the host pipe directory of the
/// node's MPS control daemon; fractional mode) the kernel also becomes an MPS client whose
/// pinned memory and SM share are limited to its share of each device.
pub fn container_args(
    devices: &[GpuDevice],
    mps_pipe: Option<&Path>,
    alloc: &DeviceAlloc,
) -> ContainerArgs {
    let mut args = ContainerArgs::default();
    let granted = granted(devices, alloc);
    if granted.is_empty() {
        return args;
    }
    args.nvidia_devices = granted.iter().map(|(d, _)| d.uuid.clone()).collect();
    let local: Vec<String> = (0..granted.len()).map(|i| i.to_string()).collect();
    let env = &mut args.env;
    env.insert("CUDA_VISIBLE_DEVICES".into(), local.join(","));
    env.insert("CUDA_DEVICE_ORDER".into(), "PCI_BUS_ID".into());
    env.insert(
        "NVIDIA_VISIBLE_DEVICES".into(),
        args.nvidia_devices.join(","),
    );
    let Some(pipe) = mps_pipe else {
        return args;
    };
    env.insert(
        "CUDA_MPS_PIPE_DIRECTORY".into(),
        MPS_PIPE_IN_CONTAINER.into(),
    );
    let limits: Vec<String> = granted
        .iter()
        .enumerate()
        .map(|(i, (d, milli))| format!("{i}={}M", mem_limit_mib(d.memory, *milli)))
        .collect();
    env.insert("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT".into(), limits.join(","));
    let largest = granted.iter().map(|(_, m)| *m).max().unwrap_or(0);
    env.insert(
        "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE".into(),
        thread_percentage(largest).to_string(),
    );
    args.binds
        .push(format!("{}:{MPS_PIPE_IN_CONTAINER}:rw", pipe.display()));
    args.ipc_host = true;
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn table() -> Vec<GpuDevice> {
        [0u32, 1, 2, 10]
            .iter()
            .map(|i| GpuDevice {
                index: *i,
                uuid: format!("GPU-{i}"),
                model: "H100".into(),
                memory: 80 * GIB,
                numa_node: None,
            })
            .collect()
    }

    fn alloc(parts: &[(&str, u64)]) -> DeviceAlloc {
        parts.iter().map(|(d, m)| (d.to_string(), *m)).collect()
    }

    #[test]
    fn limits_round_down_to_whole_mib_and_percentages_clamp() {
        assert_eq!(mem_limit_mib(80 * GIB, 1000), 80 * 1024);
        assert_eq!(mem_limit_mib(80 * GIB, 250), 20 * 1024);
        // 81559 MiB (an H100's) * 0.25 = 20389.75 MiB, rounded down.
        assert_eq!(mem_limit_mib(81559 << 20, 250), 20389);
        assert_eq!(mem_limit_mib(1000, 1), 0);
        assert_eq!(
            mem_limit_mib(8 * GIB, 5000),
            8 * 1024,
            "never above the device"
        );
        assert_eq!(thread_percentage(0), 1);
        assert_eq!(thread_percentage(4), 1);
        assert_eq!(thread_percentage(50), 5);
        assert_eq!(thread_percentage(255), 26);
        assert_eq!(thread_percentage(1000), 100);
        assert_eq!(thread_percentage(u64::MAX), 100);
    }

    #[test]
    fn discrete_devices_are_renumbered_from_zero_in_index_order() {
        let a = container_args(&table(), None, &alloc(&[("10", 1000), ("2", 1000)]));
        assert_eq!(a.nvidia_devices, ["GPU-2", "GPU-10"]);
        assert_eq!(a.env["CUDA_VISIBLE_DEVICES"], "0,1");
        assert_eq!(a.env["NVIDIA_VISIBLE_DEVICES"], "GPU-2,GPU-10");
        assert_eq!(a.env["CUDA_DEVICE_ORDER"], "PCI_BUS_ID");
        assert!(!a.env.contains_key("CUDA_MPS_PIPE_DIRECTORY"));
        assert!(a.binds.is_empty() && !a.ipc_host);
        assert_eq!(
            container_args(&table(), None, &DeviceAlloc::new()),
            ContainerArgs::default()
        );
    }

    #[test]
    fn shares_become_mps_clients_with_per_device_limits() {
        let pipe = Path::new("/var/lib/bai/mps/pipe");
        let a = container_args(&table(), Some(pipe), &alloc(&[("1", 1000), ("0", 500)]));
        assert_eq!(a.nvidia_devices, ["GPU-0", "GPU-1"]);
        assert_eq!(a.env["CUDA_VISIBLE_DEVICES"], "0,1");
        assert_eq!(a.env["CUDA_MPS_PIPE_DIRECTORY"], MPS_PIPE_IN_CONTAINER);
        assert_eq!(
            a.env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"],
            "0=40960M,1=81920M"
        );
        assert_eq!(a.env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "100");
        assert_eq!(a.binds, ["/var/lib/bai/mps/pipe:/opt/bai/mps/pipe:rw"]);
        assert!(a.ipc_host);
        let small = container_args(&table(), Some(pipe), &alloc(&[("2", 50)]));
        assert_eq!(small.env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=4096M");
        assert_eq!(small.env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "5");
        assert_eq!(small.nvidia_devices, ["GPU-2"]);
    }

    #[test]
    fn unknown_devices_are_left_out() {
        let a = container_args(&table(), None, &alloc(&[("7", 1000), ("0", 1000)]));
        assert_eq!(a.nvidia_devices, ["GPU-0"]);
        assert_eq!(a.env["CUDA_VISIBLE_DEVICES"], "0");
    }
}

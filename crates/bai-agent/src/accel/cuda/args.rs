//! What a container holding part of the node's GPUs needs, as pure functions of an
//! allocation and the plugin's device table (so they are tested without a GPU).

use super::super::{ContainerArgs, DeviceAlloc};
use super::driver::DriverFiles;
use std::path::Path;

/// Where a fractional kernel finds the MPS daemon's pipe directory inside its container.
pub const MPS_PIPE_IN_CONTAINER: &str = "/opt/bai/mps/pipe";

const MIB: u64 = 1 << 20;

/// One GPU as the plugin keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuDevice {
    /// NVML's index (also the device id the agent reports, as a string).
    pub index: u32,
    /// `GPU-…`.
    pub uuid: String,
    /// The minor number of its device node, `/dev/nvidia<minor>`.
    pub minor: u32,
    pub model: String,
    /// Device memory, bytes.
    pub memory: u64,
    pub numa_node: Option<u32>,
}

/// `floor(memory * share / capacity)` in whole MiB: the memory a share of `share_milli` of a
/// device with `memory` bytes, which counts as `capacity_milli` (1000 = one fGPU per GPU),
/// may pin.
pub fn mem_limit_mib(memory: u64, share_milli: u64, capacity_milli: u64) -> u64 {
    bai_core::accel::memory_share(memory, share_milli, capacity_milli) / MIB
}

/// `round(share * 100 / capacity)`, clamped to `1..=100`: the percentage of the device's
/// SMs an MPS client holding `share_milli` of its largest device may use.
pub fn thread_percentage(share_milli: u64, capacity_milli: u64) -> u64 {
    let cap = capacity_milli.max(1);
    let pct = share_milli.saturating_mul(100).saturating_add(cap / 2) / cap;
    pct.clamp(1, 100)
}

/// How a fractional kernel reaches MPS: the host pipe directory of the node's control
/// daemon, and what one GPU counts as in the slot (milli-fGPU).
#[derive(Debug, Clone, Copy)]
pub struct MpsClient<'a> {
    pub pipe: &'a Path,
    pub capacity_milli: u64,
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

/// The container arguments for `alloc`: the driver's control nodes and each granted GPU's
/// own node, the driver's files, and the search paths to them. With `mps` (fractional
/// mode) the kernel also becomes an MPS client whose pinned memory and SM share are
/// limited to its share of each device.
pub fn container_args(
    devices: &[GpuDevice],
    driver: &DriverFiles,
    mps: Option<MpsClient>,
    alloc: &DeviceAlloc,
) -> ContainerArgs {
    let mut args = ContainerArgs::default();
    let granted = granted(devices, alloc);
    if granted.is_empty() {
        return args;
    }
    args.devices = driver.control_nodes.clone();
    for (d, _) in &granted {
        args.devices
            .extend(driver.nodes_of(d.index, &d.uuid, d.minor));
    }
    args.binds = driver.binds();
    for (var, dirs) in [
        ("LD_LIBRARY_PATH", &driver.lib_dirs),
        ("PATH", &driver.bin_dirs),
    ] {
        if !dirs.is_empty() {
            args.search_paths.insert(var.into(), dirs.join(":"));
        }
    }
    args.env.extend(driver.env.clone());
    // Inside, CUDA numbers the GPUs it can open from 0, in PCI bus order with this.
    let local: Vec<String> = (0..granted.len()).map(|i| i.to_string()).collect();
    let env = &mut args.env;
    env.insert("CUDA_VISIBLE_DEVICES".into(), local.join(","));
    env.insert("CUDA_DEVICE_ORDER".into(), "PCI_BUS_ID".into());
    env.insert(
        "BAI_GPU_UUIDS".into(),
        granted
            .iter()
            .map(|(d, _)| d.uuid.as_str())
            .collect::<Vec<_>>()
            .join(","),
    );
    let Some(MpsClient {
        pipe,
        capacity_milli: cap,
    }) = mps
    else {
        return args;
    };
    env.insert(
        "CUDA_MPS_PIPE_DIRECTORY".into(),
        MPS_PIPE_IN_CONTAINER.into(),
    );
    let limits: Vec<String> = granted
        .iter()
        .enumerate()
        .map(|(i, (d, milli))| format!("{i}={}M", mem_limit_mib(d.memory, *milli, cap)))
        .collect();
    env.insert("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT".into(), limits.join(","));
    let largest = granted.iter().map(|(_, m)| *m).max().unwrap_or(0);
    env.insert(
        "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE".into(),
        thread_percentage(largest, cap).to_string(),
    );
    args.binds
        .push(format!("{}:{MPS_PIPE_IN_CONTAINER}:rw", pipe.display()));
    args.ipc_host = true;
    args
}

#[cfg(test)]
mod tests {
    use super::super::driver::{BIN_IN_CONTAINER, FileMount, LIB_IN_CONTAINER};
    use super::*;

    const GIB: u64 = 1 << 30;

    fn table() -> Vec<GpuDevice> {
        [0u32, 1, 2, 10]
            .iter()
            .map(|i| GpuDevice {
                index: *i,
                uuid: format!("GPU-{i}"),
                // Minor numbers need not follow the index.
                minor: i + 4,
                model: "H100".into(),
                memory: 80 * GIB,
                numa_node: None,
            })
            .collect()
    }

    fn driver() -> DriverFiles {
        DriverFiles {
            version: "580.1".into(),
            mounts: vec![FileMount {
                host: "/usr/lib/libcuda.so.580.1".into(),
                container: "/usr/local/nvidia/lib64/libcuda.so.1".into(),
            }],
            control_nodes: vec!["/dev/nvidiactl".into(), "/dev/nvidia-uvm".into()],
            lib_dirs: vec![LIB_IN_CONTAINER.into()],
            bin_dirs: vec![BIN_IN_CONTAINER.into()],
            ..Default::default()
        }
    }

    #[test]
    fn a_cdi_spec_names_each_gpus_nodes_by_index_or_uuid() {
        let mut d = driver();
        d.gpu_nodes.insert("0".into(), vec!["/dev/nvidia4".into()]);
        d.gpu_nodes
            .insert("GPU-2".into(), vec!["/dev/nvidia9:/dev/nvidia6".into()]);
        d.lib_dirs = vec!["/usr/lib/x86_64-linux-gnu".into()];
        d.bin_dirs.clear();
        let a = container_args(
            &table(),
            &d,
            None,
            &alloc(&[("0", 1000), ("2", 1000), ("1", 1000)]),
        );
        // GPU 1 is in no device of the spec: it gets no node at all.
        assert_eq!(
            a.devices,
            [
                "/dev/nvidiactl",
                "/dev/nvidia-uvm",
                "/dev/nvidia4",
                "/dev/nvidia9:/dev/nvidia6"
            ]
        );
        assert_eq!(
            a.search_paths["LD_LIBRARY_PATH"],
            "/usr/lib/x86_64-linux-gnu"
        );
        assert!(!a.search_paths.contains_key("PATH"));
    }

    fn alloc(parts: &[(&str, u64)]) -> DeviceAlloc {
        parts.iter().map(|(d, m)| (d.to_string(), *m)).collect()
    }

    #[test]
    fn limits_round_down_to_whole_mib_and_percentages_clamp() {
        assert_eq!(mem_limit_mib(80 * GIB, 1000, 1000), 80 * 1024);
        assert_eq!(mem_limit_mib(80 * GIB, 250, 1000), 20 * 1024);
        // 81559 MiB (an H100's) * 0.25 = 20389.75 MiB, rounded down.
        assert_eq!(mem_limit_mib(81559 << 20, 250, 1000), 20389);
        // The H200 of the device check: 143771 MiB / 2 = 71885.5 MiB.
        assert_eq!(mem_limit_mib(143771 << 20, 500, 1000), 71885);
        assert_eq!(mem_limit_mib(1000, 1, 1000), 0);
        assert_eq!(
            mem_limit_mib(8 * GIB, 5000, 1000),
            8 * 1024,
            "never above the device"
        );
        // Five fGPU to a GPU: 1 fGPU is a fifth of it.
        assert_eq!(mem_limit_mib(80 * GIB, 1000, 5000), 16 * 1024);
        assert_eq!(mem_limit_mib(80 * GIB, 5000, 5000), 80 * 1024);
        assert_eq!(thread_percentage(0, 1000), 1);
        assert_eq!(thread_percentage(4, 1000), 1);
        assert_eq!(thread_percentage(50, 1000), 5);
        assert_eq!(thread_percentage(255, 1000), 26);
        assert_eq!(thread_percentage(1000, 1000), 100);
        assert_eq!(thread_percentage(u64::MAX, 1000), 100);
        assert_eq!(thread_percentage(1000, 5000), 20);
        assert_eq!(thread_percentage(2500, 5000), 50);
        assert_eq!(thread_percentage(1, 0), 100, "no division by zero");
    }

    #[test]
    fn whole_gpus_are_their_device_nodes_and_the_drivers_files() {
        let a = container_args(
            &table(),
            &driver(),
            None,
            &alloc(&[("10", 1000), ("2", 1000)]),
        );
        // The control nodes, then each granted GPU's node by its minor number, no other.
        assert_eq!(
            a.devices,
            [
                "/dev/nvidiactl",
                "/dev/nvidia-uvm",
                "/dev/nvidia6",
                "/dev/nvidia14"
            ]
        );
        assert_eq!(
            a.binds,
            ["/usr/lib/libcuda.so.580.1:/usr/local/nvidia/lib64/libcuda.so.1:ro"]
        );
        assert_eq!(a.search_paths["LD_LIBRARY_PATH"], LIB_IN_CONTAINER);
        assert_eq!(a.search_paths["PATH"], BIN_IN_CONTAINER);
        assert_eq!(a.env["CUDA_VISIBLE_DEVICES"], "0,1");
        assert_eq!(a.env["BAI_GPU_UUIDS"], "GPU-2,GPU-10");
        assert_eq!(a.env["CUDA_DEVICE_ORDER"], "PCI_BUS_ID");
        assert!(!a.env.contains_key("CUDA_MPS_PIPE_DIRECTORY"));
        assert!(!a.ipc_host);
        assert_eq!(
            container_args(&table(), &driver(), None, &DeviceAlloc::new()),
            ContainerArgs::default(),
            "no GPU: no node, no driver file"
        );
    }

    #[test]
    fn shares_become_mps_clients_with_per_device_limits() {
        let pipe = Path::new("/var/lib/bai/mps/pipe");
        let mps = Some(MpsClient {
            pipe,
            capacity_milli: 1000,
        });
        let a = container_args(&table(), &driver(), mps, &alloc(&[("1", 1000), ("0", 500)]));
        assert_eq!(
            a.devices,
            [
                "/dev/nvidiactl",
                "/dev/nvidia-uvm",
                "/dev/nvidia4",
                "/dev/nvidia5"
            ]
        );
        assert_eq!(a.env["CUDA_VISIBLE_DEVICES"], "0,1");
        assert_eq!(a.env["CUDA_MPS_PIPE_DIRECTORY"], MPS_PIPE_IN_CONTAINER);
        assert_eq!(
            a.env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"],
            "0=40960M,1=81920M"
        );
        assert_eq!(a.env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "100");
        assert_eq!(
            a.binds.last().map(String::as_str),
            Some("/var/lib/bai/mps/pipe:/opt/bai/mps/pipe:rw")
        );
        assert!(a.ipc_host);
        let small = container_args(&table(), &driver(), mps, &alloc(&[("2", 50)]));
        assert_eq!(small.env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=4096M");
        assert_eq!(small.env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "5");
        assert_eq!(
            small.devices.last().map(String::as_str),
            Some("/dev/nvidia6")
        );
    }

    #[test]
    fn with_five_fgpu_to_a_gpu_one_fgpu_is_a_fifth_of_it() {
        let mps = Some(MpsClient {
            pipe: Path::new("/p"),
            capacity_milli: 5000,
        });
        let a = container_args(&table(), &driver(), mps, &alloc(&[("0", 1000)]));
        assert_eq!(a.env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=16384M");
        assert_eq!(a.env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "20");
    }

    #[test]
    fn unknown_devices_are_left_out() {
        let a = container_args(
            &table(),
            &driver(),
            None,
            &alloc(&[("7", 1000), ("0", 1000)]),
        );
        assert_eq!(a.devices.last().map(String::as_str), Some("/dev/nvidia4"));
        assert_eq!(a.devices.len(), 3);
        assert_eq!(a.env["CUDA_VISIBLE_DEVICES"], "0");
    }
}

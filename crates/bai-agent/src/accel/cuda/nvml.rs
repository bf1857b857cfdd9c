//! NVML: which GPUs the node has and how busy they are. `nvml-wrapper` loads
//! `libnvidia-ml.so.1` at run time, so a node without the NVIDIA driver simply has no GPUs.

use super::args::GpuDevice;
use nvml_wrapper::Nvml;
use nvml_wrapper::enums::device::UsedGpuMemory;

/// Loads NVML; None (logged) when the library or the driver is absent.
pub fn load() -> Option<Nvml> {
    match Nvml::init() {
        Ok(n) => Some(n),
        Err(e) => {
            tracing::info!("no NVIDIA driver found (NVML: {e}): no cuda devices");
            None
        }
    }
}

/// The node's GPUs in NVML index order. A GPU that does not answer (fallen off the bus, …)
/// is left out with a warning rather than failing the others.
pub fn list(nvml: &Nvml) -> Result<Vec<GpuDevice>, String> {
    let count = nvml
        .device_count()
        .map_err(|e| format!("NVML cannot count the GPUs: {e}"))?;
    let mut out = Vec::new();
    for index in 0..count {
        match describe(nvml, index) {
            Ok(d) => out.push(d),
            Err(e) => tracing::warn!(index, "GPU left out: {e}"),
        }
    }
    Ok(out)
}

fn describe(nvml: &Nvml, index: u32) -> Result<GpuDevice, nvml_wrapper::error::NvmlError> {
    let d = nvml.device_by_index(index)?;
    let numa_node = d.pci_info().ok().and_then(|p| numa_node(&p.bus_id));
    Ok(GpuDevice {
        index,
        uuid: d.uuid()?,
        // Every NVIDIA GPU has one on Linux; the index is the usual one where NVML fails.
        minor: d.minor_number().unwrap_or(index),
        model: d.name()?,
        memory: d.memory_info()?.total,
        numa_node,
    })
}

/// The NUMA node of a PCI device from sysfs (NVML's bus id `00000000:18:00.0` is sysfs's
/// `0000:18:00.0`); None where the kernel does not know one (`-1`).
fn numa_node(bus_id: &str) -> Option<u32> {
    let id = bus_id.to_ascii_lowercase();
    let short = id.get(id.len().checked_sub(12)?..)?;
    let text = std::fs::read_to_string(format!("/sys/bus/pci/devices/{short}/numa_node")).ok()?;
    text.trim().parse().ok()
}

/// One device's busy percentage and used memory (bytes) now; zeros when NVML fails.
pub fn usage(nvml: &Nvml, index: u32) -> (f64, u64) {
    let Ok(d) = nvml.device_by_index(index) else {
        return (0.0, 0);
    };
    let util = d.utilization_rates().map(|u| u.gpu as f64).unwrap_or(0.0);
    let used = d.memory_info().map(|m| m.used).unwrap_or(0);
    (util, used)
}

/// The busy percentage and used memory (bytes) of the processes in container `container`
/// (the engine's id) on device `index`. NVML lists the device's compute processes (MPS
/// clients too) with their memory, and samples each one's SM use; a process is the
/// container's when its cgroup path names the container. Where NVML has no per-process
/// sample (not every driver keeps them), the device's busy time stands in while the
/// kernel has work on the device: exact for a whole GPU, an upper bound for a share.
pub fn usage_of(nvml: &Nvml, index: u32, container: &str) -> (f64, u64) {
    let Ok(d) = nvml.device_by_index(index) else {
        return (0.0, 0);
    };
    let procs = d.running_compute_processes().unwrap_or_default();
    let mine: Vec<u32> = procs
        .iter()
        .map(|p| p.pid)
        .filter(|pid| in_container(*pid, container))
        .collect();
    let used: u64 = procs
        .iter()
        .filter(|p| mine.contains(&p.pid))
        .map(|p| match p.used_gpu_memory {
            UsedGpuMemory::Used(b) => b,
            UsedGpuMemory::Unavailable => 0,
        })
        .sum();
    if mine.is_empty() {
        return (0.0, 0);
    }
    // Samples of the last few seconds (NVML's timestamps are the CPU clock's, in µs).
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|t| t.as_micros() as u64)
        .unwrap_or(0)
        .saturating_sub(5_000_000);
    let samples = d.process_utilization_stats(since).unwrap_or_default();
    let sampled: Vec<_> = samples.iter().filter(|s| mine.contains(&s.pid)).collect();
    let util = if sampled.is_empty() {
        d.utilization_rates().map(|u| u.gpu as f64).unwrap_or(0.0)
    } else {
        // The newest sample of each process, summed.
        let mut newest: std::collections::BTreeMap<u32, (u64, u32)> = Default::default();
        for s in sampled {
            let e = newest.entry(s.pid).or_insert((0, 0));
            if s.timestamp >= e.0 {
                *e = (s.timestamp, s.sm_util);
            }
        }
        newest
            .values()
            .map(|(_, u)| f64::from(*u))
            .sum::<f64>()
            .min(100.0)
    };
    (util, used)
}

/// Whether process `pid` is in the container `container`.
fn in_container(pid: u32, container: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
        .is_ok_and(|text| cgroup_names(&text, container))
}

/// Whether a `/proc/PID/cgroup` text puts the process in the container with engine id
/// `container` (cgroupfs: `/docker/ID`; systemd: `/system.slice/docker-ID.scope`; v1 and
/// v2 alike). Ids shorter than Docker's 64 hex digits are refused: a prefix could match
/// another container's.
fn cgroup_names(text: &str, container: &str) -> bool {
    container.len() == 64
        && container.bytes().all(|b| b.is_ascii_hexdigit())
        && text
            .lines()
            .filter_map(|l| l.splitn(3, ':').nth(2))
            .any(|path| path.contains(container))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_a_containers_when_its_cgroup_names_it() {
        let id = "a".repeat(64);
        let other = "b".repeat(64);
        assert!(cgroup_names(&format!("0::/docker/{id}\n"), &id));
        assert!(cgroup_names(
            &format!("0::/system.slice/docker-{id}.scope\n"),
            &id
        ));
        assert!(cgroup_names(
            &format!("12:devices:/docker/{id}\n0::/\n"),
            &id
        ));
        assert!(!cgroup_names(&format!("0::/docker/{other}\n"), &id));
        assert!(!cgroup_names("0::/user.slice/session-1.scope\n", &id));
        assert!(
            !cgroup_names(&format!("0::/docker/{id}\n"), "aaaa"),
            "no prefixes"
        );
    }
}

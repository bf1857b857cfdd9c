//! NVML: which GPUs the node has and how busy they are. `nvml-wrapper` loads
//! `libnvidia-ml.so.1` at run time, so a node without the NVIDIA driver simply has no GPUs.

use super::args::GpuDevice;
use nvml_wrapper::Nvml;

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

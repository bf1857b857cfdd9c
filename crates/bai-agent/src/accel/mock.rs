//! The mock accelerator: a clearly fake plugin for machines without GPUs, so everything
//! above the agent (scheduler, policies, fair share, pending reasons, the UI, the idle
//! checker) can be exercised. Never on by default: `baid up --mock-accelerator FILE`.
//!
//! It reads a TOML file compatible with Backend.AI's `mock-accelerator.toml` (`slot_name`,
//! `[[devices]]` with `model_name`, `memory_size`, `numa_node`, `subproc_count`, …) plus
//! the mode settings Backend.AI keeps elsewhere: `allocation_mode` (`discrete` or
//! `fractional`), `quantum_size` (default 0.1), and optionally `unit_mem` / `unit_proc`
//! (a device then gives `min(memory / unit_mem, subproc_count / unit_proc)` shares instead
//! of 1). Kernels get no device at all, only `BACKENDAI_MOCK_CUDA_DEVICES` (the device ids)
//! and `BACKENDAI_MOCK_CUDA_DEVICE_COUNT`. Its devices always read as idle (0 %).

use super::{Accelerator, ContainerArgs, DeviceAlloc, device_list};
use bai_core::accel::{
    AllocMode, DEFAULT_QUANTUM_MILLI, DeviceInfo, DeviceReading, memory_share, parse_quantum,
};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Deserialize)]
struct MockFile {
    #[serde(default = "default_slot_name")]
    slot_name: String,
    #[serde(default)]
    devices: Vec<MockDevice>,
    allocation_mode: Option<String>,
    quantum_size: Option<f64>,
    unit_mem: Option<toml::Value>,
    unit_proc: Option<u32>,
}

fn default_slot_name() -> String {
    "cuda".into()
}

#[derive(Debug, Deserialize)]
struct MockDevice {
    #[serde(default = "default_model")]
    model_name: String,
    #[serde(default)]
    numa_node: Option<u32>,
    #[serde(default)]
    subproc_count: Option<u32>,
    memory_size: toml::Value,
    #[serde(default)]
    is_mig_device: bool,
}

fn default_model() -> String {
    "Mock GPU".into()
}

#[derive(Debug)]
pub struct MockAccelerator {
    slot: String,
    mode: AllocMode,
    devices: Vec<DeviceInfo>,
    env_prefix: String,
}

/// `"40G"`, `"512m"` or a number of bytes.
fn size(what: &str, v: &toml::Value) -> Result<u64, String> {
    match v {
        toml::Value::Integer(i) => u64::try_from(*i).map_err(|_| format!("{what} is negative")),
        toml::Value::String(s) => bai_core::parse_size(s).map_err(|e| format!("{what}: {e}")),
        other => Err(format!("{what} must be a size like \"40G\", not {other}")),
    }
}

impl MockAccelerator {
    pub fn load(path: &Path) -> Result<MockAccelerator, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<MockAccelerator, String> {
        let f: MockFile = toml::from_str(text).map_err(|e| e.message().to_string())?;
        let mode = match &f.allocation_mode {
            Some(m) => AllocMode::parse(m)?,
            None => AllocMode::Discrete,
        };
        if f.devices.is_empty() {
            return Err("no [[devices]] given".into());
        }
        if !f
            .slot_name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        {
            return Err(format!(
                "slot_name {:?} must be lowercase letters",
                f.slot_name
            ));
        }
        let quantum = match (mode, f.quantum_size) {
            (AllocMode::Discrete, _) => 1000,
            (AllocMode::Fractional, None) => DEFAULT_QUANTUM_MILLI,
            (AllocMode::Fractional, Some(q)) => {
                parse_quantum(q).map_err(|e| format!("quantum_size: {e}"))?
            }
        };
        let unit_mem = f
            .unit_mem
            .as_ref()
            .map(|v| size("unit_mem", v))
            .transpose()?
            .filter(|u| *u > 0);
        let slot = mode.slot(&f.slot_name);
        let mut devices = Vec::new();
        for (i, d) in f.devices.iter().enumerate() {
            if d.is_mig_device {
                return Err(format!("device {i}: MIG devices are not supported"));
            }
            let memory = size(&format!("device {i} memory_size"), &d.memory_size)?;
            let capacity_milli = match mode {
                AllocMode::Discrete => 1000,
                AllocMode::Fractional => {
                    let by_mem = unit_mem.map(|u| memory as f64 / u as f64);
                    let by_proc = f
                        .unit_proc
                        .filter(|u| *u > 0)
                        .zip(d.subproc_count)
                        .map(|(u, n)| n as f64 / u as f64);
                    match by_mem.into_iter().chain(by_proc).reduce(f64::min) {
                        // Rounded down to a whole quantum.
                        Some(shares) => ((shares * 1000.0) as u64 / quantum) * quantum,
                        None => 1000,
                    }
                }
            };
            devices.push(DeviceInfo {
                slot: slot.clone(),
                id: i.to_string(),
                plugin: "mock".into(),
                model: d.model_name.clone(),
                memory,
                numa_node: d.numa_node,
                capacity_milli,
                quantum_milli: quantum,
            });
        }
        Ok(MockAccelerator {
            env_prefix: format!("BACKENDAI_MOCK_{}", f.slot_name.to_ascii_uppercase()),
            slot,
            mode,
            devices,
        })
    }

    fn device(&self, id: &str) -> Option<&DeviceInfo> {
        self.devices.iter().find(|d| d.id == id)
    }
}

impl Accelerator for MockAccelerator {
    fn name(&self) -> &'static str {
        "mock"
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
        let mut args = ContainerArgs::default();
        if alloc.is_empty() {
            return args;
        }
        let p = &self.env_prefix;
        args.env.insert(format!("{p}_DEVICES"), device_list(alloc));
        args.env
            .insert(format!("{p}_DEVICE_COUNT"), alloc.len().to_string());
        args
    }

    fn readings(&self, alloc: &DeviceAlloc, _container: Option<&str>) -> Vec<DeviceReading> {
        alloc
            .iter()
            .map(|(id, milli)| {
                let (memory, cap) = self
                    .device(id)
                    .map(|d| (d.memory, d.capacity_milli))
                    .unwrap_or((0, 1000));
                DeviceReading {
                    device: id.clone(),
                    util: 0.0,
                    mem_used: 0,
                    mem_total: memory_share(memory, *milli, cap),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRACTIONAL: &str = r#"
slot_name = "cuda"
device_plugin_name = "CUDADevice"
allocation_mode = "fractional"
quantum_size = 0.1

[attributes]
nvidia_driver = "450.00.00"

[[devices]]
mother_uuid = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d01"
model_name = "CUDA GPU"
numa_node = 0
subproc_count = 108
memory_size = "8G"
is_mig_device = false

[[devices]]
model_name = "CUDA GPU"
memory_size = "8G"

[formats.shares]
display_unit = "fGPU"
"#;

    #[test]
    fn reads_backend_ai_style_files() {
        let m = MockAccelerator::parse(FRACTIONAL).unwrap();
        assert_eq!(m.slot(), "cuda.shares");
        assert_eq!(m.devices().len(), 2);
        assert_eq!(m.devices()[0].capacity_milli, 1000);
        assert_eq!(m.devices()[0].memory, 8 << 30);
        assert_eq!(m.devices()[0].quantum_milli, 100);
        let alloc = DeviceAlloc::from([("1".to_string(), 500)]);
        let args = m.container_args(&alloc);
        assert_eq!(args.env["BACKENDAI_MOCK_CUDA_DEVICES"], "1");
        assert_eq!(args.env["BACKENDAI_MOCK_CUDA_DEVICE_COUNT"], "1");
        assert!(args.devices.is_empty() && args.binds.is_empty());
        assert_eq!(m.readings(&alloc, None)[0].mem_total, 4 << 30);
    }

    #[test]
    fn units_shape_the_shares_and_bad_files_are_refused() {
        let with_units = format!("{FRACTIONAL}\n").replace(
            "quantum_size = 0.1",
            "quantum_size = 0.1\nunit_mem = \"2G\"",
        );
        let m = MockAccelerator::parse(&with_units).unwrap();
        assert_eq!(m.devices()[0].capacity_milli, 4000);
        let discrete = FRACTIONAL.replace("fractional", "discrete");
        let m = MockAccelerator::parse(&discrete).unwrap();
        assert_eq!(m.slot(), "cuda.device");
        assert_eq!(m.mode(), AllocMode::Discrete);
        for bad in [
            "",
            "allocation_mode = \"half\"\n[[devices]]\nmemory_size = \"1G\"",
            "[[devices]]\nmemory_size = true",
            "allocation_mode = \"fractional\"\nquantum_size = 2.0\n[[devices]]\nmemory_size = \"1G\"",
        ] {
            assert!(MockAccelerator::parse(bad).is_err(), "{bad}");
        }
    }
}

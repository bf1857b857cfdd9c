//! Accelerators as the manager and the agent both see them: slot names (Backend.AI's,
//! `cuda.device` for whole GPUs and `cuda.shares` for fractional ones), the aliases bai's
//! users type (`gpu`, `fgpu`), the devices an agent reports and the per-device readings
//! its plugin takes. Amounts are milli-units like every other slot (`500` = half a GPU).

use serde::{Deserialize, Serialize};

/// Whole NVIDIA GPUs.
pub const CUDA_DEVICE: &str = "cuda.device";
/// Fractional NVIDIA GPUs (fGPU).
pub const CUDA_SHARES: &str = "cuda.shares";
/// The smallest step of a fractional slot unless the plugin says otherwise (0.1).
pub const DEFAULT_QUANTUM_MILLI: u64 = 100;

/// How a plugin hands out its devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AllocMode {
    /// Whole devices only (`cuda.device`).
    Discrete,
    /// Shares of devices in steps of a quantum (`cuda.shares`).
    Fractional,
}

impl AllocMode {
    pub fn parse(s: &str) -> Result<AllocMode, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "discrete" => Ok(AllocMode::Discrete),
            "fractional" => Ok(AllocMode::Fractional),
            other => Err(format!(
                "allocation_mode {other:?} is not known: use discrete or fractional"
            )),
        }
    }
}

impl AllocMode {
    /// The slot a plugin keyed `key` offers in this mode: `cuda.device` or `cuda.shares`.
    pub fn slot(self, key: &str) -> String {
        match self {
            AllocMode::Discrete => format!("{key}.device"),
            AllocMode::Fractional => format!("{key}.shares"),
        }
    }
}

/// A fractional quantum given as a number of devices (`0.1`) in milli-units; it must be
/// above 0 and at most one device.
pub fn parse_quantum(q: f64) -> Result<u64, String> {
    if q > 0.0 && q <= 1.0 {
        Ok((q * 1000.0).round() as u64)
    } else {
        Err(format!("quantum {q} must be above 0 and at most 1"))
    }
}

/// The part of a device's `memory` (bytes) that `milli` of its `capacity_milli` stands for,
/// rounded down and never more than the whole device.
pub fn memory_share(memory: u64, milli: u64, capacity_milli: u64) -> u64 {
    let cap = capacity_milli.max(1);
    (memory as u128 * milli.min(cap) as u128 / cap as u128) as u64
}

/// NVIDIA's slots: `cuda.device`, `cuda.shares` and the MIG slots.
pub fn is_cuda(slot: &str) -> bool {
    slot.starts_with("cuda.")
}

/// Slots named `<key>.device` count whole devices, and so do MIG instances
/// ([`is_mig`]); every other accelerator slot is a share.
pub fn is_whole(slot: &str) -> bool {
    slot.ends_with(".device") || is_mig(slot)
}

/// A slot of one MIG profile's instances, by Backend.AI's name for it:
/// `cuda.device:<profile>-mig` (`cuda.device:1g.10gb-mig`). Each instance is a whole device
/// to a kernel.
pub fn is_mig(slot: &str) -> bool {
    slot.strip_prefix("cuda.device:")
        .and_then(|p| p.strip_suffix("-mig"))
        .is_some_and(|profile| !profile.is_empty())
}

/// The unit a user reads for a slot: `GPU`, `fGPU`, or the slot's own name.
pub fn display_unit(slot: &str) -> &str {
    match slot {
        CUDA_DEVICE => "GPU",
        CUDA_SHARES => "fGPU",
        mig if is_mig(mig) => "MIG instance",
        other => other,
    }
}

/// One accelerator slot offered somewhere in the cluster, with its smallest step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccelSlot {
    pub name: String,
    pub quantum_milli: u64,
}

impl AccelSlot {
    /// The slots of a set of agents' devices (and capacity keys without devices, such as a
    /// dummy agent's), each once, with the coarsest quantum any agent has.
    pub fn collect<'a>(
        devices: impl IntoIterator<Item = &'a DeviceInfo>,
        capacity_keys: impl IntoIterator<Item = &'a String>,
    ) -> Vec<AccelSlot> {
        let mut out: Vec<AccelSlot> = Vec::new();
        let mut add = |name: &str, q: u64| match out.iter_mut().find(|s| s.name == name) {
            Some(s) => s.quantum_milli = s.quantum_milli.max(q),
            None => out.push(AccelSlot {
                name: name.to_string(),
                quantum_milli: q,
            }),
        };
        for d in devices {
            add(&d.slot, d.quantum_milli.max(1));
        }
        for k in capacity_keys {
            let q = if is_whole(k) { 1000 } else { 1 };
            add(k, q);
        }
        out
    }
}

/// The slot a resource key names: itself when the cluster offers it, or for the aliases
/// `gpu` (whole GPUs where the cluster has them, else shares) and `fgpu` (shares where the
/// cluster has them, else whole GPUs). `cuda.shares` and `gpu` also name the first
/// accelerator slot of a cluster without CUDA slots (the dummy agents' `mock.shares`).
pub fn resolve<'a>(key: &str, slots: &'a [AccelSlot]) -> Option<&'a AccelSlot> {
    let named = |n: &str| slots.iter().find(|s| s.name == n);
    if let Some(s) = named(key) {
        return Some(s);
    }
    let cuda = match key {
        "gpu" => named(CUDA_DEVICE).or_else(|| named(CUDA_SHARES)),
        "fgpu" => named(CUDA_SHARES).or_else(|| named(CUDA_DEVICE)),
        CUDA_SHARES => None,
        _ => return None,
    };
    let has_cuda = slots.iter().any(|s| is_cuda(&s.name));
    cuda.or_else(|| (!has_cuda).then(|| slots.first()).flatten())
}

/// One accelerator device of an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeviceInfo {
    /// The slot it is counted in (`cuda.device`, `cuda.shares`).
    pub slot: String,
    /// The device's id on its agent (`0`, `1`, …; NVML's index for CUDA).
    pub id: String,
    /// Which plugin drives it (`cuda`, or `mock` for the clearly fake one).
    pub plugin: String,
    pub model: String,
    /// Device memory, bytes.
    pub memory: u64,
    pub numa_node: Option<u32>,
    /// How much of the slot this device gives, milli-units (1000 = one GPU).
    pub capacity_milli: u64,
    /// The smallest step in which the slot is handed out, milli-units.
    pub quantum_milli: u64,
}

/// A device's use as one kernel sees it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeviceReading {
    /// The device's id on its agent.
    pub device: String,
    /// Busy time of the device, percent.
    pub util: f64,
    /// Device memory in use, bytes.
    pub mem_used: u64,
    /// Device memory this kernel may use (its share of the device), bytes.
    pub mem_total: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots(names: &[&str]) -> Vec<AccelSlot> {
        names
            .iter()
            .map(|n| AccelSlot {
                name: n.to_string(),
                quantum_milli: 100,
            })
            .collect()
    }

    #[test]
    fn aliases_follow_the_clusters_mode() {
        let frac = slots(&[CUDA_SHARES]);
        assert_eq!(resolve("gpu", &frac).unwrap().name, CUDA_SHARES);
        assert_eq!(resolve("fgpu", &frac).unwrap().name, CUDA_SHARES);
        let whole = slots(&[CUDA_DEVICE]);
        assert_eq!(resolve("gpu", &whole).unwrap().name, CUDA_DEVICE);
        assert_eq!(resolve("fgpu", &whole).unwrap().name, CUDA_DEVICE);
        assert!(resolve("cuda.shares", &whole).is_none());
        assert!(resolve("tpu", &whole).is_none());
        let mock = slots(&["mock.shares"]);
        assert_eq!(resolve("gpu", &mock).unwrap().name, "mock.shares");
        assert!(resolve("gpu", &[]).is_none());
    }

    #[test]
    fn whole_slots_and_units() {
        assert!(is_whole(CUDA_DEVICE));
        assert!(!is_whole(CUDA_SHARES));
        assert_eq!(display_unit(CUDA_SHARES), "fGPU");
        assert_eq!(AllocMode::parse("Fractional"), Ok(AllocMode::Fractional));
        assert!(AllocMode::parse("half").is_err());
        assert_eq!(AllocMode::Fractional.slot("cuda"), CUDA_SHARES);
        assert_eq!(AllocMode::Discrete.slot("cuda"), CUDA_DEVICE);
        assert_eq!(parse_quantum(0.1), Ok(100));
        assert!(parse_quantum(0.0).is_err() && parse_quantum(1.5).is_err());
        assert_eq!(memory_share(8 << 30, 500, 1000), 4 << 30);
        assert_eq!(memory_share(8 << 30, 5000, 1000), 8 << 30);
    }

    /// A MIG profile's slot (Backend.AI's `cuda.device:<profile>-mig`) counts whole
    /// instances: its step is one, and half of one is refused saying what an instance is.
    #[test]
    fn mig_instances_are_whole_devices() {
        let mig = "cuda.device:1g.18gb-mig";
        assert!(is_mig(mig) && is_whole(mig));
        assert!(!is_mig("cuda.device:-mig") && !is_mig(CUDA_DEVICE) && !is_mig(CUDA_SHARES));
        assert_eq!(display_unit(mig), "MIG instance");
        let key = mig.to_string();
        let offered = AccelSlot::collect([], [&key]);
        assert_eq!(offered[0].quantum_milli, 1000);
        let ask = |v: &str| crate::resources::ResourceAsk {
            slots: [(key.clone(), v.to_string())].into(),
            shmem: None,
        };
        let one = crate::resources::ResourceRequest::parse(&ask("1"), &offered).expect("one");
        assert_eq!(one.slots.accel[mig], 1000);
        let half = crate::resources::ResourceRequest::parse(&ask("0.5"), &offered).unwrap_err();
        assert_eq!(
            half.to_string(),
            "cuda.device:1g.18gb-mig=0.5: cuda.device:1g.18gb-mig counts whole devices: each is \
             one MIG instance of a GPU, ask for 1"
        );
    }
}

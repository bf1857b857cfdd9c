//! Resource slots: what a session asks for and what an agent has.
//!
//! CPU is kept in milli-cores, memory and shared memory in bytes, accelerators in
//! milli-shares, so arithmetic is exact and comparisons never suffer float error.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A set of resource amounts. Missing keys mean zero.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceSlots {
    /// CPU in milli-cores (1000 = one core).
    pub cpu_milli: u64,
    /// Memory in bytes.
    pub mem: u64,
    /// Accelerator shares in milli-units, by slot name (e.g. `mock.shares`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub accel: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResourceError {
    #[error("{slot}={value:?} is not a valid amount: {hint}")]
    Invalid {
        slot: String,
        value: String,
        hint: &'static str,
    },
    #[error("unknown resource slot {0:?}: use cpu, mem, shmem{1}")]
    UnknownSlot(String, String),
    #[error(
        "memory ({mem}) must be larger than the shared memory ({shmem}) it holds: ask for more mem or less shmem"
    )]
    ShmemOverMem { shmem: String, mem: String },
    #[error("{slot}={value}: {slot} counts whole devices{hint}")]
    WholeDevices {
        slot: String,
        value: String,
        hint: String,
    },
    #[error(
        "{slot}={value} is not a multiple of {quantum}, the smallest step this cluster hands {slot} out in"
    )]
    Quantum {
        slot: String,
        value: String,
        quantum: String,
    },
    #[error(
        "a kernel takes one kind of GPU, but this asks for both {first} and {second}: whole GPUs, \
         fractional shares and each MIG profile's instances are handed out apart; ask for one of them"
    )]
    MixedGpus { first: String, second: String },
    #[error(
        "{slot}={value}: a kernel takes one MIG instance at most (CUDA sees one MIG instance in a \
         process); ask for 1, or for a cluster session with a kernel for each instance"
    )]
    ManyMig { slot: String, value: String },
    #[error("{slot}={value} is too small: at least {min} is needed")]
    TooSmall {
        slot: &'static str,
        value: String,
        min: String,
    },
}

impl ResourceSlots {
    pub fn fits_in(&self, avail: &ResourceSlots) -> bool {
        self.cpu_milli <= avail.cpu_milli
            && self.mem <= avail.mem
            && self
                .accel
                .iter()
                .all(|(k, v)| *v == 0 || avail.accel.get(k).copied().unwrap_or(0) >= *v)
    }

    pub fn checked_sub(&self, other: &ResourceSlots) -> ResourceSlots {
        let mut accel = self.accel.clone();
        for (k, v) in &other.accel {
            let e = accel.entry(k.clone()).or_insert(0);
            *e = e.saturating_sub(*v);
        }
        ResourceSlots {
            cpu_milli: self.cpu_milli.saturating_sub(other.cpu_milli),
            mem: self.mem.saturating_sub(other.mem),
            accel,
        }
    }

    pub fn add(&self, other: &ResourceSlots) -> ResourceSlots {
        let mut accel = self.accel.clone();
        for (k, v) in &other.accel {
            *accel.entry(k.clone()).or_insert(0) += *v;
        }
        ResourceSlots {
            cpu_milli: self.cpu_milli + other.cpu_milli,
            mem: self.mem + other.mem,
            accel,
        }
    }

    /// `n` times these slots (a cluster session's total from one kernel's).
    pub fn times(&self, n: u64) -> ResourceSlots {
        ResourceSlots {
            cpu_milli: self.cpu_milli.saturating_mul(n),
            mem: self.mem.saturating_mul(n),
            accel: self
                .accel
                .iter()
                .map(|(k, v)| (k.clone(), v.saturating_mul(n)))
                .collect(),
        }
    }

    /// One `n`-th of these slots (one kernel's from a cluster session's total).
    pub fn divided(&self, n: u64) -> ResourceSlots {
        let n = n.max(1);
        ResourceSlots {
            cpu_milli: self.cpu_milli / n,
            mem: self.mem / n,
            accel: self.accel.iter().map(|(k, v)| (k.clone(), v / n)).collect(),
        }
    }

    /// Names of the slots in which `self` exceeds `avail` (for "why can't this fit").
    pub fn short_of(&self, avail: &ResourceSlots) -> Vec<String> {
        let mut out = Vec::new();
        if self.cpu_milli > avail.cpu_milli {
            out.push("cpu".to_string());
        }
        if self.mem > avail.mem {
            out.push("mem".to_string());
        }
        for (k, v) in &self.accel {
            if *v > avail.accel.get(k).copied().unwrap_or(0) {
                out.push(k.clone());
            }
        }
        out
    }

    /// Backend.AI's string-valued slot map, e.g. `{"cpu": "2", "mem": "1073741824"}`.
    pub fn to_wire(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("cpu".into(), format_cpu(self.cpu_milli).into());
        m.insert("mem".into(), self.mem.to_string().into());
        for (k, v) in &self.accel {
            m.insert(k.clone(), format_cpu(*v).into());
        }
        serde_json::Value::Object(m)
    }
}

/// `2000` → `"2"`, `1500` → `"1.5"`.
pub fn format_cpu(milli: u64) -> String {
    if milli.is_multiple_of(1000) {
        (milli / 1000).to_string()
    } else {
        let s = format!("{}.{:03}", milli / 1000, milli % 1000);
        s.trim_end_matches('0').to_string()
    }
}

/// Human form of a byte count: `1073741824` → `1 GiB`.
pub fn format_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if (v - v.round()).abs() < 0.005 {
        format!("{} {}", v.round() as u64, UNITS[u])
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

/// Parses a decimal amount of cores (`"2"`, `"0.5"`, `1`) into milli-cores.
pub fn parse_cpu(slot: &str, text: &str) -> Result<u64, ResourceError> {
    let bad = || ResourceError::Invalid {
        slot: slot.to_string(),
        value: text.to_string(),
        hint: "give a positive number of cores, like 1, 2 or 0.5",
    };
    let f: f64 = text.trim().parse().map_err(|_| bad())?;
    if !f.is_finite() || f <= 0.0 || f > 1_000_000.0 {
        return Err(bad());
    }
    Ok((f * 1000.0).round() as u64)
}

/// Parses a memory size: `"1g"`, `"512m"`, `"512mb"`, `"4096m"`, `"1.5GiB"`, `1073741824`.
/// A bare number is bytes, as in Backend.AI (the CLI appends `m` when no unit is given).
pub fn parse_mem(slot: &str, text: &str) -> Result<u64, ResourceError> {
    let bad = || ResourceError::Invalid {
        slot: slot.to_string(),
        value: text.to_string(),
        hint: "give a size like 512m, 1g or 2GiB",
    };
    let bytes = crate::units::parse_size(text).map_err(|_| bad())?;
    if bytes == 0 || bytes > 1_000_000_000_000_000_000 {
        return Err(bad());
    }
    Ok(bytes)
}

/// The text of an amount given in JSON: a string as it is, a number as written.
pub fn amount_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A resource request as the user gave it, before parsing: each slot's amount as text
/// (`"2"`, `"0.5"`, `"1g"`), keyed by the name used (`cpu`, `mem`, `gpu`, `cuda.shares`, …),
/// and the shared memory. [`ResourceRequest::parse`] reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceAsk {
    pub slots: BTreeMap<String, String>,
    pub shmem: Option<String>,
}

impl ResourceAsk {
    /// What a resource preset adds: each of its slots that the request does not give itself
    /// (under any name of that slot, `gpu` included; none of its CUDA slots where the request
    /// names a CUDA slot of its own), and its shared memory when the request gives none.
    pub fn with_preset(
        mut self,
        preset: &ResourceSlots,
        shmem: Option<u64>,
        accel_slots: &[crate::accel::AccelSlot],
    ) -> ResourceAsk {
        let given = |ask: &ResourceAsk, name: &str| {
            ask.slots.keys().any(|k| {
                k == name || crate::accel::resolve(k, accel_slots).is_some_and(|s| s.name == name)
            })
        };
        let mut add = Vec::new();
        if !given(&self, "cpu") {
            add.push(("cpu".to_string(), format_cpu(preset.cpu_milli)));
        }
        if !given(&self, "mem") {
            add.push(("mem".to_string(), preset.mem.to_string()));
        }
        // A kernel takes one kind of GPU: a request that names one keeps the preset's out.
        let names_cuda = self.slots.keys().any(|k| {
            crate::accel::resolve(k, accel_slots).is_some_and(|s| crate::accel::is_cuda(&s.name))
        });
        for (name, amount) in &preset.accel {
            let other_kind = names_cuda && crate::accel::is_cuda(name);
            if !given(&self, name) && !other_kind {
                add.push((name.clone(), format_cpu(*amount)));
            }
        }
        self.slots.extend(add);
        if self.shmem.is_none() && !self.slots.contains_key("shmem") {
            self.shmem = shmem.map(|b| b.to_string());
        }
        self
    }
}

/// What a session asks for, after parsing and defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceRequest {
    pub slots: ResourceSlots,
    /// Shared memory (`/dev/shm`) in bytes; part of `mem`, so never larger.
    pub shmem: u64,
}

pub const DEFAULT_CPU_MILLI: u64 = 1000;
pub const DEFAULT_MEM: u64 = 1024 * 1024 * 1024;
pub const DEFAULT_SHMEM: u64 = 64 * 1024 * 1024;
/// Below this a Python kernel cannot even start.
pub const MIN_MEM: u64 = 64 * 1024 * 1024;

impl ResourceRequest {
    /// Parses what a create request asks for (`{"cpu": "2", "mem": "1g"}` and shared memory
    /// `64m`); `accel_slots` are the accelerator slots the
    /// cluster offers (`gpu` and `fgpu` name them as [`crate::accel::resolve`] says). Whole
    /// device slots take whole numbers, shares multiples of their quantum.
    pub fn parse(
        ask: &ResourceAsk,
        accel_slots: &[crate::accel::AccelSlot],
    ) -> Result<ResourceRequest, ResourceError> {
        let mut slots = ResourceSlots {
            cpu_milli: DEFAULT_CPU_MILLI,
            mem: DEFAULT_MEM,
            accel: BTreeMap::new(),
        };
        let mut shmem = None;
        let mut mem_given = false;
        let all = ask
            .slots
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain(ask.shmem.as_deref().map(|v| ("shmem", v)));
        for (k, v) in all {
            match k {
                "cpu" => slots.cpu_milli = parse_cpu(k, v)?,
                "mem" => {
                    slots.mem = parse_mem(k, v)?;
                    mem_given = true;
                }
                "shmem" => shmem = Some(parse_mem(k, v)?),
                other => match crate::accel::resolve(other, accel_slots) {
                    Some(slot) => {
                        let amount = parse_cpu(other, v)?;
                        check_step(other, slot, amount)?;
                        slots.accel.insert(slot.name.clone(), amount);
                    }
                    None => {
                        let names: Vec<&str> =
                            accel_slots.iter().map(|s| s.name.as_str()).collect();
                        let extra = if names.is_empty() {
                            " (this cluster has no accelerators)".to_string()
                        } else {
                            format!(", {}", names.join(", "))
                        };
                        return Err(ResourceError::UnknownSlot(other.to_string(), extra));
                    }
                },
            }
        }
        check_one_gpu_kind(&slots.accel)?;
        if mem_given && slots.mem < MIN_MEM {
            return Err(ResourceError::TooSmall {
                slot: "mem",
                value: format_bytes(slots.mem),
                min: format_bytes(MIN_MEM),
            });
        }
        // Shared memory is part of the memory, and leaves some of it (as Backend.AI: `mem`
        // not larger than the shared memory is refused).
        let shmem = shmem.unwrap_or(DEFAULT_SHMEM);
        if shmem >= slots.mem {
            return Err(ResourceError::ShmemOverMem {
                shmem: format_bytes(shmem),
                mem: format_bytes(slots.mem),
            });
        }
        Ok(ResourceRequest { slots, shmem })
    }
}

/// A kernel takes one kind of CUDA device (Backend.AI's rule: `cuda.device`, `cuda.shares`
/// and the MIG slots exclude each other in one session), and one MIG instance at most (a
/// CUDA process enumerates only one MIG instance, so a second would be idle).
fn check_one_gpu_kind(accel: &BTreeMap<String, u64>) -> Result<(), ResourceError> {
    let mut cuda = accel
        .iter()
        .filter(|(name, amount)| crate::accel::is_cuda(name) && **amount > 0);
    if let Some((first, amount)) = cuda.next() {
        if let Some((second, _)) = cuda.next() {
            return Err(ResourceError::MixedGpus {
                first: first.clone(),
                second: second.clone(),
            });
        }
        if crate::accel::is_mig(first) && *amount > 1000 {
            return Err(ResourceError::ManyMig {
                slot: first.clone(),
                value: format_cpu(*amount),
            });
        }
    }
    Ok(())
}

/// Whole-device slots take whole numbers; shares come in steps of the slot's quantum.
fn check_step(key: &str, slot: &crate::accel::AccelSlot, amount: u64) -> Result<(), ResourceError> {
    let value = format_cpu(amount);
    if crate::accel::is_whole(&slot.name) {
        if !amount.is_multiple_of(1000) {
            let hint = if key == slot.name {
                String::new()
            } else {
                format!(" ({key} is {} here)", slot.name)
            };
            return Err(ResourceError::WholeDevices {
                slot: slot.name.clone(),
                value,
                hint: if crate::accel::is_mig(&slot.name) {
                    format!("{hint}: each is one MIG instance of a GPU, ask for 1")
                } else {
                    format!("{hint}: the GPUs of this cluster are not shared, ask for 1, 2, …")
                },
            });
        }
    } else if slot.quantum_milli > 1 && !amount.is_multiple_of(slot.quantum_milli) {
        return Err(ResourceError::Quantum {
            slot: slot.name.clone(),
            value,
            quantum: format_cpu(slot.quantum_milli),
        });
    }
    Ok(())
}

#[cfg(test)]
#[path = "resources_tests.rs"]
mod tests;

//! Which part of which device each kernel holds. Discrete: whole devices. Fractional:
//! shares in steps of the quantum, packed onto as few devices as fit (best fit on one
//! device when one has room, else the emptiest devices first). A device's parts are never
//! given twice: every allocation is checked against what the map already holds.

use super::DeviceAlloc;
use bai_core::accel::{AllocMode, DeviceInfo};
use std::collections::HashMap;
use uuid::Uuid;

#[derive(Debug)]
pub struct AllocMap {
    mode: AllocMode,
    quantum: u64,
    /// (device id, capacity in milli-units), in the plugin's order.
    devices: Vec<(String, u64)>,
    held: HashMap<Uuid, DeviceAlloc>,
}

impl AllocMap {
    pub fn new(mode: AllocMode, devices: &[DeviceInfo]) -> AllocMap {
        let quantum = match mode {
            AllocMode::Discrete => 1000,
            AllocMode::Fractional => devices
                .iter()
                .map(|d| d.quantum_milli)
                .max()
                .unwrap_or(1)
                .max(1),
        };
        AllocMap {
            mode,
            quantum,
            devices: devices
                .iter()
                .map(|d| (d.id.clone(), d.capacity_milli))
                .collect(),
            held: HashMap::new(),
        }
    }

    fn used(&self, device: &str) -> u64 {
        self.held.values().filter_map(|a| a.get(device)).sum()
    }

    /// Free milli-units of each device, in order.
    pub fn free(&self) -> Vec<(String, u64)> {
        self.devices
            .iter()
            .map(|(d, cap)| (d.clone(), cap.saturating_sub(self.used(d))))
            .collect()
    }

    /// Gives `kernel` `amount` milli-units (a kernel asking again gets what it holds).
    pub fn allocate(&mut self, kernel: Uuid, amount: u64) -> Result<DeviceAlloc, String> {
        if let Some(a) = self.held.get(&kernel) {
            return Ok(a.clone());
        }
        if amount == 0 {
            return Ok(DeviceAlloc::new());
        }
        if !amount.is_multiple_of(self.quantum) {
            return Err(match self.mode {
                AllocMode::Discrete => format!(
                    "{} GPUs asked for, but this node hands out whole GPUs only",
                    bai_core::resources::format_cpu(amount)
                ),
                AllocMode::Fractional => format!(
                    "{} is not a multiple of this node's quantum {}",
                    bai_core::resources::format_cpu(amount),
                    bai_core::resources::format_cpu(self.quantum)
                ),
            });
        }
        let free = self.free();
        let alloc = match self.mode {
            AllocMode::Discrete => {
                let want = (amount / 1000) as usize;
                let whole: Vec<&(String, u64)> = free
                    .iter()
                    .filter(|(d, f)| *f > 0 && self.used(d) == 0)
                    .collect();
                if whole.len() < want {
                    return Err(format!(
                        "{want} whole GPUs asked for, {} free on this node",
                        whole.len()
                    ));
                }
                whole
                    .into_iter()
                    .take(want)
                    .map(|(d, f)| (d.clone(), *f))
                    .collect()
            }
            AllocMode::Fractional => pack(&free, amount)?,
        };
        self.held.insert(kernel, alloc.clone());
        Ok(alloc)
    }

    /// Takes back what a kernel held after an agent restart (from its container's label).
    pub fn restore(&mut self, kernel: Uuid, alloc: DeviceAlloc) {
        self.held.insert(kernel, alloc);
    }

    pub fn held(&self, kernel: Uuid) -> Option<DeviceAlloc> {
        self.held.get(&kernel).filter(|a| !a.is_empty()).cloned()
    }

    pub fn release(&mut self, kernel: Uuid) -> Option<DeviceAlloc> {
        self.held.remove(&kernel)
    }
}

/// Fractional packing: one device when one has room (the fullest that fits), else the
/// emptiest devices first so the share spans as few devices as possible.
fn pack(free: &[(String, u64)], amount: u64) -> Result<DeviceAlloc, String> {
    let total: u64 = free.iter().map(|(_, f)| f).sum();
    if total < amount {
        return Err(format!(
            "{} shares asked for, {} free on this node",
            bai_core::resources::format_cpu(amount),
            bai_core::resources::format_cpu(total)
        ));
    }
    if let Some((d, _)) = free
        .iter()
        .filter(|(_, f)| *f >= amount)
        .min_by_key(|(_, f)| *f)
    {
        return Ok(DeviceAlloc::from([(d.clone(), amount)]));
    }
    let mut by_free: Vec<&(String, u64)> = free.iter().filter(|(_, f)| *f > 0).collect();
    by_free.sort_by_key(|d| std::cmp::Reverse(d.1));
    let mut left = amount;
    let mut out = DeviceAlloc::new();
    for (d, f) in by_free {
        if left == 0 {
            break;
        }
        let take = left.min(*f);
        out.insert(d.clone(), take);
        left -= take;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn devices(n: usize, quantum: u64) -> Vec<DeviceInfo> {
        (0..n)
            .map(|i| DeviceInfo {
                slot: "cuda.shares".into(),
                id: i.to_string(),
                plugin: "mock".into(),
                model: "test".into(),
                memory: 8 << 30,
                numa_node: None,
                capacity_milli: 1000,
                quantum_milli: quantum,
            })
            .collect()
    }

    #[test]
    fn four_halves_fit_two_devices_and_a_fifth_does_not() {
        let mut m = AllocMap::new(AllocMode::Fractional, &devices(2, 100));
        let ids: Vec<Uuid> = (0..5).map(|_| Uuid::new_v4()).collect();
        let mut per_device = HashMap::<String, u64>::new();
        for k in &ids[..4] {
            let a = m.allocate(*k, 500).unwrap();
            assert_eq!(a.len(), 1, "a half fits on one device: {a:?}");
            for (d, v) in a {
                *per_device.entry(d).or_default() += v;
            }
        }
        assert_eq!(per_device["0"], 1000);
        assert_eq!(per_device["1"], 1000);
        assert!(m.allocate(ids[4], 500).is_err());
        m.release(ids[0]);
        assert!(m.allocate(ids[4], 500).is_ok());
    }

    #[test]
    fn one_and_a_half_spans_two_devices_and_packing_prefers_one() {
        let mut m = AllocMap::new(AllocMode::Fractional, &devices(3, 100));
        let a = m.allocate(Uuid::new_v4(), 1500).unwrap();
        assert_eq!(a.values().sum::<u64>(), 1500);
        assert_eq!(a.len(), 2, "{a:?}");
        // 0.3 goes onto the half-used device (best fit), not a fresh one.
        let b = m.allocate(Uuid::new_v4(), 300).unwrap();
        let half_used = a.iter().find(|(_, v)| **v == 500).unwrap().0.clone();
        assert_eq!(b, DeviceAlloc::from([(half_used, 300)]));
        assert!(
            m.allocate(Uuid::new_v4(), 250).is_err(),
            "not a quantum multiple"
        );
    }

    #[test]
    fn discrete_gives_whole_free_devices_only() {
        let mut m = AllocMap::new(AllocMode::Discrete, &devices(2, 1000));
        assert!(m.allocate(Uuid::new_v4(), 500).is_err());
        let a = m.allocate(Uuid::new_v4(), 1000).unwrap();
        assert_eq!(a.len(), 1);
        let k = Uuid::new_v4();
        assert!(m.allocate(k, 2000).is_err());
        let b = m.allocate(k, 1000).unwrap();
        assert_ne!(a.keys().next(), b.keys().next());
        // Restored allocations count as held.
        let mut again = AllocMap::new(AllocMode::Discrete, &devices(2, 1000));
        again.restore(Uuid::new_v4(), a);
        again.restore(k, b);
        assert!(again.allocate(Uuid::new_v4(), 1000).is_err());
    }
}

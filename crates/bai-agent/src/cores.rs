//! Which CPU cores each kernel is pinned to. A whole-core request (`cpu=2`) gets that many
//! cores of its own as a cpuset, so `nproc` and `sched_getaffinity` inside show them; a
//! fraction (`cpu=0.5`) keeps a CFS quota over all cores. Cores are chosen on one NUMA node
//! when one has enough, and least-pinned first, so two kernels share a core only when the
//! node is full of pinned kernels.

use std::collections::HashMap;
use uuid::Uuid;

#[derive(Debug, Clone)]
pub struct CoreMap {
    /// (core, NUMA node), ascending by core.
    cores: Vec<(u32, u32)>,
    held: HashMap<Uuid, Vec<u32>>,
}

impl CoreMap {
    /// The cores this process may run on, with their NUMA nodes (one node 0 when the
    /// kernel does not say).
    pub fn detect() -> CoreMap {
        let allowed = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                    .and_then(|v| parse_cpulist(v.trim()))
            })
            .unwrap_or_else(|| (0..crate::host::cores() as u32).collect());
        let mut nodes = Vec::new();
        if let Ok(rd) = std::fs::read_dir("/sys/devices/system/node") {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                let Some(n) = name
                    .strip_prefix("node")
                    .and_then(|n| n.parse::<u32>().ok())
                else {
                    continue;
                };
                if let Some(list) = std::fs::read_to_string(e.path().join("cpulist"))
                    .ok()
                    .and_then(|s| parse_cpulist(s.trim()))
                {
                    nodes.push((n, list));
                }
            }
        }
        CoreMap::new(allowed, &nodes)
    }

    pub fn new(allowed: Vec<u32>, nodes: &[(u32, Vec<u32>)]) -> CoreMap {
        let mut cores: Vec<(u32, u32)> = allowed
            .into_iter()
            .map(|c| {
                let node = nodes
                    .iter()
                    .find(|(_, list)| list.contains(&c))
                    .map(|(n, _)| *n)
                    .unwrap_or(0);
                (c, node)
            })
            .collect();
        cores.sort_unstable();
        cores.dedup();
        CoreMap {
            cores,
            held: HashMap::new(),
        }
    }

    fn pins(&self, core: u32) -> usize {
        self.held.values().filter(|c| c.contains(&core)).count()
    }

    /// Pins `n` cores for `kernel` (a kernel asking again gets what it holds).
    pub fn allocate(&mut self, kernel: Uuid, n: usize) -> Result<Vec<u32>, String> {
        if let Some(c) = self.held.get(&kernel) {
            return Ok(c.clone());
        }
        if n == 0 || n > self.cores.len() {
            return Err(format!(
                "{n} cores asked for, this node has {}",
                self.cores.len()
            ));
        }
        // Cheapest first: fewest pins, then lowest number.
        let ranked = |node: Option<u32>| {
            let mut c: Vec<(usize, u32)> = self
                .cores
                .iter()
                .filter(|(_, nd)| node.is_none_or(|x| x == *nd))
                .map(|(c, _)| (self.pins(*c), *c))
                .collect();
            c.sort_unstable();
            c
        };
        let mut nodes: Vec<u32> = self.cores.iter().map(|(_, n)| *n).collect();
        nodes.sort_unstable();
        nodes.dedup();
        let best_node = nodes
            .iter()
            .map(|n| ranked(Some(*n)))
            .filter(|c| c.len() >= n)
            .min_by_key(|c| c.iter().take(n).map(|(p, _)| *p).sum::<usize>());
        let mut pick: Vec<u32> = best_node
            .unwrap_or_else(|| ranked(None))
            .into_iter()
            .take(n)
            .map(|(_, c)| c)
            .collect();
        pick.sort_unstable();
        self.held.insert(kernel, pick.clone());
        Ok(pick)
    }

    pub fn restore(&mut self, kernel: Uuid, cores: Vec<u32>) {
        self.held.insert(kernel, cores);
    }

    pub fn release(&mut self, kernel: Uuid) {
        self.held.remove(&kernel);
    }

    /// The cores a kernel holds.
    pub fn held(&self, kernel: Uuid) -> Option<Vec<u32>> {
        self.held.get(&kernel).cloned()
    }
}

/// `0-3,8,10-11` → `[0, 1, 2, 3, 8, 10, 11]`; None when malformed.
pub fn parse_cpulist(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                if b < a || b - a > 65536 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

/// `[0, 2]` → `0,2` (Docker's `--cpuset-cpus`).
pub fn format_cpulist(cores: &[u32]) -> String {
    cores
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpulists_parse_and_print() {
        assert_eq!(
            parse_cpulist("0-3,8,10-11"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpulist("0"), Some(vec![0]));
        assert_eq!(parse_cpulist("3-1"), None);
        assert_eq!(parse_cpulist("x"), None);
        assert_eq!(format_cpulist(&[0, 2]), "0,2");
    }

    #[test]
    fn kernels_get_different_cores_until_the_node_is_full() {
        let mut m = CoreMap::new(vec![0, 1], &[]);
        let a = m.allocate(Uuid::new_v4(), 1).unwrap();
        let b = m.allocate(Uuid::new_v4(), 1).unwrap();
        assert_ne!(a, b);
        assert!(m.allocate(Uuid::new_v4(), 3).is_err());
        let k = Uuid::new_v4();
        m.release(k);
        assert_eq!(m.allocate(k, 2).unwrap(), vec![0, 1]);
    }

    #[test]
    fn numa_nodes_are_kept_whole_when_they_can_be() {
        let nodes = [(0, vec![0, 1, 2, 3]), (1, vec![4, 5, 6, 7])];
        let mut m = CoreMap::new((0..8).collect(), &nodes);
        assert_eq!(m.allocate(Uuid::new_v4(), 3).unwrap(), vec![0, 1, 2]);
        // Node 0 has one free core left; three cores fit on node 1 without sharing.
        assert_eq!(m.allocate(Uuid::new_v4(), 3).unwrap(), vec![4, 5, 6]);
        assert_eq!(m.allocate(Uuid::new_v4(), 1).unwrap(), vec![3]);
    }
}

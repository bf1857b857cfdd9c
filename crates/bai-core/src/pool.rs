//! Warm pools: kernels an agent keeps started for the shapes people launch, so a create that
//! matches one is handed a running container instead of waiting for the engine.
//!
//! A [`PoolTarget`] is written `IMAGE[,cpu=N][,mem=SIZE][,shm=SIZE][,count=N]`, e.g.
//! `bai/python:3.11-bookworm,cpu=1,mem=1g,count=2`; what it leaves out is a session's
//! default (1 core, 1 GiB, 64 MiB of shared memory) and one kernel.

use crate::resources::{DEFAULT_CPU_MILLI, DEFAULT_MEM, DEFAULT_SHMEM, parse_cpu, parse_mem};
use serde::{Deserialize, Serialize};

/// What a pool kernel is made for: a create of exactly this image and these resources (and
/// nothing that only a container made for it could have) can take it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PoolShape {
    /// The canonical image reference, as the manager resolves it.
    pub image: String,
    pub cpu_milli: u64,
    pub mem: u64,
    pub shmem: u64,
}

impl PoolShape {
    /// A short label value: `IMAGE|cpu|mem|shm`.
    pub fn key(&self) -> String {
        format!(
            "{}|{}|{}|{}",
            self.image, self.cpu_milli, self.mem, self.shmem
        )
    }
}

impl std::fmt::Display for PoolShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mib = |b: u64| format!("{}m", b >> 20);
        write!(
            f,
            "{},cpu={},mem={},shm={}",
            self.image,
            crate::resources::format_cpu(self.cpu_milli),
            mib(self.mem),
            mib(self.shmem)
        )
    }
}

/// How many kernels of a shape an agent keeps started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolTarget {
    pub shape: PoolShape,
    pub count: u32,
}

/// The most kernels one pool target may ask for.
pub const MAX_POOL_COUNT: u32 = 64;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PoolError {
    #[error("a warm pool entry needs an image first: {0:?}")]
    NoImage(String),
    #[error("warm pool entry {entry:?}: {why}")]
    Bad { entry: String, why: String },
}

impl std::str::FromStr for PoolTarget {
    type Err = PoolError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut parts = s.split(',').map(str::trim);
        let image = parts
            .next()
            .filter(|i| !i.is_empty() && !i.contains('='))
            .ok_or_else(|| PoolError::NoImage(s.to_string()))?;
        let bad = |why: String| PoolError::Bad {
            entry: s.to_string(),
            why,
        };
        let mut t = PoolTarget {
            shape: PoolShape {
                image: image.to_string(),
                cpu_milli: DEFAULT_CPU_MILLI,
                mem: DEFAULT_MEM,
                shmem: DEFAULT_SHMEM,
            },
            count: 1,
        };
        for part in parts {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| bad(format!("{part:?} is not KEY=VALUE")))?;
            match k.trim() {
                "cpu" => t.shape.cpu_milli = parse_cpu(k, v).map_err(|e| bad(e.to_string()))?,
                "mem" => t.shape.mem = parse_mem(k, v).map_err(|e| bad(e.to_string()))?,
                "shm" | "shmem" => {
                    t.shape.shmem = parse_mem(k, v).map_err(|e| bad(e.to_string()))?
                }
                "count" => {
                    t.count = v
                        .trim()
                        .parse()
                        .ok()
                        .filter(|n| (1..=MAX_POOL_COUNT).contains(n))
                        .ok_or_else(|| {
                            bad(format!("count must be 1 to {MAX_POOL_COUNT}, not {v:?}"))
                        })?
                }
                other => return Err(bad(format!("unknown key {other:?} (cpu, mem, shm, count)"))),
            }
        }
        if t.shape.cpu_milli == 0 {
            return Err(bad("cpu must be more than 0".into()));
        }
        if t.shape.shmem > t.shape.mem {
            return Err(bad("shm must not be larger than mem".into()));
        }
        Ok(t)
    }
}

/// The targets as text, `;` between them (what [`parse_targets`] reads).
pub fn format_targets(targets: &[PoolTarget]) -> String {
    targets
        .iter()
        .map(|t| format!("{},count={}", t.shape, t.count))
        .collect::<Vec<_>>()
        .join(";")
}

/// Kernels per shape the automatic mode keeps by default.
pub const DEFAULT_AUTO: u32 = 1;
/// The most shapes the automatic mode keeps (the most launched ones of the last hour).
pub const AUTO_SHAPES: usize = 2;
/// The most kernels per shape the automatic mode may be set to.
pub const MAX_AUTO: u32 = 8;

fn default_auto() -> u32 {
    DEFAULT_AUTO
}

/// A resource group's warm pools: the shapes an admin asked for, and how many kernels of
/// each of the group's most launched recent shapes the automatic mode keeps (0: off).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarmPoolPolicy {
    #[serde(default)]
    pub targets: Vec<PoolTarget>,
    #[serde(default = "default_auto")]
    pub auto: u32,
}

impl Default for WarmPoolPolicy {
    fn default() -> Self {
        WarmPoolPolicy {
            targets: Vec::new(),
            auto: DEFAULT_AUTO,
        }
    }
}

/// What the pools did since their agent started.
#[derive(Debug, Default, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct PoolCounters {
    /// Creates that took a pool kernel.
    pub hits: u64,
    /// Creates of a pooled shape that found none ready (or whose binding failed).
    pub misses: u64,
    /// Pool kernels made.
    pub refills: u64,
    /// Pool kernels whose binding failed (destroyed; their create went cold).
    pub bind_failures: u64,
    /// Pool kernels given up for room.
    pub evictions: u64,
}

// As the agent reports it and as the API shows it (`AgentPool`): one spelling.
/// One shape's pool on an agent.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(rename = "AgentPool")
)]
pub struct PoolStatus {
    /// The shape, as a warm pool entry is written: `IMAGE,cpu=…,mem=…,shm=…`.
    pub shape: String,
    /// How many it should keep.
    pub target: u32,
    /// How many it keeps now: `target`, or 1 while no session of its shape started lately
    /// (an idle pool shrinks; the next start of its shape grows it back).
    #[serde(default)]
    pub kept: u32,
    /// How many are started and unclaimed.
    pub ready: u32,
    /// How many are being made.
    pub making: u32,
}

/// An agent's pools and what they did.
#[derive(Debug, Default, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct PoolReport {
    pub pools: Vec<PoolStatus>,
    pub counters: PoolCounters,
}

/// A list of targets separated by `;` (empty: no pool).
pub fn parse_targets(s: &str) -> Result<Vec<PoolTarget>, PoolError> {
    s.split(';')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::parse)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_with_defaults() {
        let t: PoolTarget = "bai/python:3.11-bookworm,cpu=0.5,mem=512m,count=3"
            .parse()
            .unwrap();
        assert_eq!(t.shape.image, "bai/python:3.11-bookworm");
        assert_eq!(t.shape.cpu_milli, 500);
        assert_eq!(t.shape.mem, 512 << 20);
        assert_eq!(t.shape.shmem, DEFAULT_SHMEM);
        assert_eq!(t.count, 3);
        let d: PoolTarget = "img".parse().unwrap();
        assert_eq!(
            (d.shape.cpu_milli, d.shape.mem, d.count),
            (1000, 1 << 30, 1)
        );
        let two = parse_targets("a,count=2; b,shm=128m ;").unwrap();
        assert_eq!(two.len(), 2);
        assert_eq!(two[1].shape.shmem, 128 << 20);
        assert_eq!(parse_targets(&format_targets(&two)).unwrap(), two);
        let p: WarmPoolPolicy = serde_json::from_str("{}").unwrap();
        assert_eq!(p, WarmPoolPolicy::default());
        assert_eq!(p.auto, DEFAULT_AUTO);
    }

    #[test]
    fn bad_targets_say_why() {
        for (bad, says) in [
            ("", "needs an image"),
            ("cpu=1", "needs an image"),
            ("img,cpu", "not KEY=VALUE"),
            ("img,gpu=1", "unknown key"),
            ("img,count=0", "count must be 1 to 64"),
            ("img,count=65", "count must be 1 to 64"),
            ("img,mem=lots", "mem"),
            ("img,mem=128m,shm=256m", "shm must not be larger"),
            ("img,cpu=0", "cpu"),
        ] {
            let e = bad.parse::<PoolTarget>().unwrap_err().to_string();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }
}

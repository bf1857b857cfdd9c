//! The warm pool: kernels started ahead of time for the shapes an admin configured
//! ([`PoolTarget`]), each a container `bai-pool-<id>` whose runner waits to be bound to a
//! session (`bai-krunner`'s pool mode). A pool kernel is nobody's: it is in no listing of
//! kernels, the manager does not know it, it sits on the shared kernel bridge (no traffic
//! between containers there) and holds no user data.
//!
//! A create whose kernel fits a ready pool kernel ([`claim::fits`]) takes it ([`claim`]):
//! the container and its directory are renamed to the kernel's, its held cores move to the
//! kernel, the owner's dotfiles are written, and the runner is given the session's whole
//! environment and starts again under it. A create that finds none ready while one of its
//! shape is being made may take that one when it is ready ([`wait`]). Anything failing there destroys the pool kernel
//! and the create goes the cold way. [`fill`] makes pool kernels again in the background,
//! one at a time, never past the node's free capacity, and gives them up when a session
//! needs the room.

pub mod busy;
pub mod claim;
pub mod fill;
pub mod inject;
pub(crate) mod make;
pub mod room;
pub mod wait;

use super::Inner;
use super::place::Placement;
use bai_core::pool::{PoolShape, PoolTarget};
use uuid::Uuid;

/// Label on a pool kernel's container: its shape's key.
pub const LABEL_POOL: &str = "ai.bai.pool";
/// Name prefix of a pool kernel's container (a claimed one is renamed `bai-k-<kernel>`).
pub const NAME_PREFIX: &str = "bai-pool-";

/// A started pool kernel, ready to be claimed.
#[derive(Debug, Clone)]
pub struct Ready {
    pub id: Uuid,
    pub shape: PoolShape,
    pub container_id: String,
    /// What it holds on this node (pinned cores) and what its environment was made from.
    pub placement: Placement,
}

/// The pools of one agent: what it should keep, what it has, what happened.
#[derive(Debug, Default)]
pub struct Pools {
    /// What the node's configuration asks for, what the manager asks for, and both.
    pub node: Vec<PoolTarget>,
    pub managed: Vec<PoolTarget>,
    pub targets: Vec<PoolTarget>,
    pub ready: Vec<Ready>,
    /// Pool kernels being made, by shape.
    pub making: Vec<PoolShape>,
    /// Pool kernels taken out of the pools and not yet removed (unwanted, idle, evicted):
    /// [`fill::stop`] waits for them as for those being made.
    pub removing: usize,
    /// Creates waiting for a kernel being made ([`wait`]), at most one per kernel.
    pub waiting: Vec<wait::Waiting>,
    /// The demand for each shape: how many each pool keeps now (bursts, idle shrinking).
    pub demand: Demand,
    pub counters: Counters,
    /// The agent is stopping ([`fill::stop`]): nothing more is made.
    pub stopping: bool,
}

pub use crate::pool_demand::Demand;
pub use bai_core::pool::{PoolCounters as Counters, PoolReport, PoolStatus};

impl Pools {
    /// How many of its shape `target` keeps now ([`Demand::kept`]).
    pub fn kept(&self, target: &PoolTarget) -> u32 {
        self.demand.kept(target)
    }

    /// One kernel of `shape` is no longer being made (made, failed or removed).
    pub fn no_longer_making(&mut self, shape: &PoolShape) {
        if let Some(i) = self.making.iter().position(|m| m == shape) {
            self.making.swap_remove(i);
        }
    }

    /// Whether a pool kernel is being made or being removed: neither is in `ready`, and
    /// either would outlive an agent that ended now.
    pub fn in_hand(&self) -> bool {
        !self.making.is_empty() || self.removing > 0
    }

    /// How many of `shape` are ready or being made.
    pub fn have(&self, shape: &PoolShape) -> usize {
        self.ready.iter().filter(|r| &r.shape == shape).count()
            + self.making.iter().filter(|m| *m == shape).count()
    }

    /// Each target's pool.
    pub fn status(&self) -> Vec<PoolStatus> {
        self.targets
            .iter()
            .map(|t| PoolStatus {
                shape: t.shape.to_string(),
                target: t.count,
                kept: self.kept(t),
                ready: self.ready.iter().filter(|r| r.shape == t.shape).count() as u32,
                making: self.making.iter().filter(|m| **m == t.shape).count() as u32,
            })
            .collect()
    }
}

/// The pools' status and counters.
pub fn report(inner: &Inner) -> PoolReport {
    let p = inner.pools();
    PoolReport {
        pools: p.status(),
        counters: p.counters,
    }
}

/// Shapes and ready kernels for the pools' unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// A shape of the python image with `mem` bytes (a quarter core, 64 MiB of /dev/shm).
    pub fn shape(mem: u64) -> PoolShape {
        PoolShape {
            image: "bai/python:3.11-bookworm".into(),
            cpu_milli: 250,
            mem,
            shmem: 64 << 20,
        }
    }

    /// A ready pool kernel of `shape`, with no container behind it.
    pub fn kernel(shape: &PoolShape) -> Ready {
        Ready {
            id: Uuid::new_v4(),
            shape: shape.clone(),
            container_id: "c".into(),
            placement: Default::default(),
        }
    }
}

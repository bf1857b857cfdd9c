//! How many kernels a warm pool keeps for its shape, from the demand for it, on both
//! backends: its target's count while creates ask for the shape, plus one more for each
//! create that found the pool empty (a burst of starts), at most [`BURST_MAX`] more; once
//! nobody asked for [`Demand::idle_after`], [`IDLE_KEEPS`], and what a burst added is
//! forgotten. Pure: the pools ask it, and remove or make kernels by its answer.

use bai_core::pool::{PoolShape, PoolTarget};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// What an idle pool shrinks to: one kernel, so the next start of its shape is still instant.
pub const IDLE_KEEPS: u32 = 1;
/// How long a pool keeps its whole count after the last create of its shape.
pub const IDLE_AFTER: Duration = Duration::from_secs(15 * 60);
/// Most kernels a burst of starts adds to a shape's pool.
pub const BURST_MAX: u32 = 4;

/// The demand for each pool's shape.
#[derive(Debug)]
pub struct Demand {
    /// When a create last asked for each shape (or its target was set).
    asked: HashMap<PoolShape, Instant>,
    /// Kernels a shape keeps beyond its target after creates found its pool empty.
    burst: HashMap<PoolShape, u32>,
    /// How long a shape nobody asks for keeps its whole count.
    pub idle_after: Duration,
}

impl Default for Demand {
    fn default() -> Self {
        Demand {
            asked: HashMap::new(),
            burst: HashMap::new(),
            idle_after: IDLE_AFTER,
        }
    }
}

impl Demand {
    /// A create asked for `shape` (a hit or a miss): its pool keeps its whole count again.
    pub fn asked(&mut self, shape: &PoolShape) {
        self.asked.insert(shape.clone(), Instant::now());
    }

    /// The pools' targets are now `targets`: a shape just set is one somebody wants, so it
    /// starts with its whole count; shapes no target names are forgotten.
    pub fn targets_set(&mut self, targets: &[PoolTarget]) {
        let now = Instant::now();
        for t in targets {
            self.asked.entry(t.shape.clone()).or_insert(now);
        }
        let named = |s: &PoolShape| targets.iter().any(|t| t.shape == *s);
        self.asked.retain(|s, _| named(s));
        self.burst.retain(|s, _| named(s));
    }

    /// A create found `shape`'s pool empty: the pool keeps one more (up to [`BURST_MAX`]
    /// more) while the shape is asked for.
    pub fn grow(&mut self, shape: &PoolShape) {
        let n = self.burst.entry(shape.clone()).or_insert(0);
        *n = (*n + 1).min(BURST_MAX);
    }

    fn lately(&self, shape: &PoolShape) -> bool {
        self.asked
            .get(shape)
            .is_some_and(|t| t.elapsed() < self.idle_after)
    }

    /// How many of its shape `target` keeps now: its count and the burst's, or
    /// [`IDLE_KEEPS`] (at most its count) once nobody asked for the shape lately.
    pub fn kept(&self, target: &PoolTarget) -> u32 {
        if self.lately(&target.shape) {
            target.count + self.burst.get(&target.shape).copied().unwrap_or(0)
        } else {
            target.count.min(IDLE_KEEPS)
        }
    }

    /// What a burst added to shapes nobody asked for lately is forgotten.
    pub fn forget_idle(&mut self) {
        let idle: Vec<PoolShape> = self
            .burst
            .keys()
            .filter(|s| !self.lately(s))
            .cloned()
            .collect();
        for s in idle {
            self.burst.remove(&s);
        }
    }

    /// How often idle pools should be looked for: every `at_most`, sooner when the idle
    /// time is shorter.
    pub fn check_every(&self, at_most: Duration) -> Duration {
        self.idle_after.min(at_most)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(mem: u64, count: u32) -> PoolTarget {
        PoolTarget {
            shape: PoolShape {
                image: "bai/python:3.11-bookworm".into(),
                cpu_milli: 1000,
                mem,
                shmem: 64 << 20,
            },
            count,
        }
    }

    #[test]
    fn a_burst_of_misses_grows_a_pool_until_the_shape_idles() {
        let t = target(1 << 30, 1);
        let mut d = Demand::default();
        d.targets_set(std::slice::from_ref(&t));
        assert_eq!(d.kept(&t), 1, "a shape just set keeps its count");
        d.grow(&t.shape);
        d.grow(&t.shape);
        assert_eq!(d.kept(&t), 3);
        for _ in 0..10 {
            d.grow(&t.shape);
        }
        assert_eq!(d.kept(&t), 1 + BURST_MAX);
        // Nobody asks any more: the idle pool keeps one, and the burst is forgotten.
        d.idle_after = Duration::ZERO;
        assert_eq!(d.kept(&t), IDLE_KEEPS);
        d.forget_idle();
        d.idle_after = IDLE_AFTER;
        d.asked(&t.shape);
        assert_eq!(
            d.kept(&t),
            1,
            "asked again: the count, without the old burst"
        );
    }

    #[test]
    fn an_idle_pool_keeps_one_and_a_shape_no_target_names_is_forgotten() {
        let (a, b) = (target(1 << 30, 3), target(1 << 29, 2));
        let mut d = Demand {
            idle_after: Duration::ZERO,
            ..Default::default()
        };
        d.targets_set(&[a.clone(), b.clone()]);
        assert_eq!((d.kept(&a), d.kept(&b)), (IDLE_KEEPS, IDLE_KEEPS));
        assert_eq!(d.kept(&target(1 << 28, 0)), 0, "never more than the count");
        d.idle_after = IDLE_AFTER;
        d.grow(&b.shape);
        d.targets_set(std::slice::from_ref(&a));
        assert!(!d.asked.contains_key(&b.shape) && !d.burst.contains_key(&b.shape));
        assert_eq!(d.kept(&a), 3);
        assert_eq!(
            d.check_every(Duration::from_secs(60)),
            Duration::from_secs(60)
        );
    }
}

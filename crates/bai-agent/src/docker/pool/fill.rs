//! Keeping the pools full: one task per agent makes the missing pool kernels one at a time
//! (low priority: a create never waits behind it; one starts only while no create is in
//! flight, and runs at the lowest CPU weight until ready: [`super::busy`]), only where the node's free capacity
//! holds one more, and wakes when a kernel is claimed or the targets change. A kernel made
//! while a create waits for its shape is that create's ([`super::wait`]). A pool whose
//! shape nobody launched for a while shrinks to one kernel ([`super::Pools::kept`]); checked
//! every [`CHECK_IDLE`].

use super::{make, wait};
use crate::docker::Inner;
use bai_core::pool::{PoolShape, PoolTarget};
use std::sync::Arc;
use std::time::Duration;

/// Pause after a pool kernel could not be made (a missing image, a full node).
const AFTER_FAILURE: Duration = Duration::from_secs(10);
/// How often idle pools are looked for, at most.
const CHECK_IDLE: Duration = Duration::from_secs(60);

/// Who set a list of targets: the node's own configuration (`baid --warm-pool`) or the
/// manager (its resource group's pools). The pools keep both; the node's count wins for a
/// shape in both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Node,
    Manager,
}

/// Sets what the pools should keep for `source`; pool kernels of shapes no longer wanted,
/// or past their count, go.
pub async fn set_targets(inner: &Arc<Inner>, source: Source, targets: Vec<PoolTarget>) {
    let extra: Vec<_> = {
        let mut pools = inner.pools();
        match source {
            Source::Node => pools.node = targets,
            Source::Manager => pools.managed = targets,
        }
        let mut all = pools.node.clone();
        for t in &pools.managed {
            if !all.iter().any(|n| n.shape == t.shape) {
                all.push(t.clone());
            }
        }
        // A shape just set is one somebody wants: it starts with its whole count.
        pools.demand.targets_set(&all);
        pools.targets = all;
        beyond_kept(&mut pools)
    };
    make::remove_taken(inner, extra).await;
    inner.pool_wake.notify_one();
}

/// Takes the ready pool kernels past what their pools keep now out of the pools (shapes
/// no longer wanted, counts lowered, idle pools); returns them for removal
/// ([`make::remove_taken`]), counted as being removed.
fn beyond_kept(pools: &mut super::Pools) -> Vec<uuid::Uuid> {
    let mut keep: Vec<(PoolShape, u32)> = pools
        .targets
        .iter()
        .map(|t| (t.shape.clone(), pools.kept(t)))
        .collect();
    let mut extra = Vec::new();
    pools
        .ready
        .retain(|r| match keep.iter_mut().find(|(s, _)| *s == r.shape) {
            Some((_, n)) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => {
                extra.push(r.id);
                false
            }
        });
    pools.removing += extra.len();
    extra
}

/// A create asked for `shape` (a hit or a miss): its pool keeps its whole count again.
pub fn asked(pools: &mut super::Pools, shape: &PoolShape) {
    pools.demand.asked(shape);
}

/// Shrinks the pools nobody asked for lately (what a burst added goes with it).
async fn shrink_idle(inner: &Arc<Inner>) {
    let extra = {
        let mut pools = inner.pools();
        pools.demand.forget_idle();
        beyond_kept(&mut pools)
    };
    for id in &extra {
        tracing::info!(pool_kernel = %id, "an idle pool shrinks");
    }
    make::remove_taken(inner, extra).await;
}

/// Starts the task that keeps the pools full.
pub fn spawn(inner: &Arc<Inner>) {
    let inner = inner.clone();
    tokio::spawn(async move {
        loop {
            shrink_idle(&inner).await;
            // A create in flight goes first: a refill beside it would slow it.
            inner.creates.quiet().await;
            let check = inner.pools().demand.check_every(CHECK_IDLE);
            let Some(shape) = next(&inner).await else {
                let _ = tokio::time::timeout(check, inner.pool_wake.notified()).await;
                continue;
            };
            let made = make::make(&inner, &shape).await;
            if inner.pools().stopping {
                // Made while the agent stops: removed before it counts as made, so `stop`,
                // which waits for nothing to be in the making, never leaves it behind.
                if let Ok(r) = &made {
                    make::remove(&inner, r.id).await;
                }
                let mut pools = inner.pools();
                wait::failed(&mut pools, &shape);
                pools.no_longer_making(&shape);
                continue;
            }
            let (failed, unwanted) = {
                let mut pools = inner.pools();
                pools.no_longer_making(&shape);
                let wanted = pools
                    .targets
                    .iter()
                    .find(|t| t.shape == shape)
                    .map_or(0, |t| pools.kept(t) as usize);
                let ready = pools.ready.iter().filter(|r| r.shape == shape).count();
                match made {
                    // A create waiting for it takes it first, wanted or not.
                    Ok(r) => match wait::made(&mut pools, r) {
                        None => {
                            pools.counters.refills += 1;
                            (None, None)
                        }
                        // The targets changed while it was made: not wanted any more.
                        Some(r) if ready >= wanted => {
                            pools.removing += 1;
                            (None, Some(r.id))
                        }
                        Some(r) => {
                            pools.counters.refills += 1;
                            tracing::debug!(pool_kernel = %r.id, shape = %shape, "pool kernel ready");
                            pools.ready.push(r);
                            (None, None)
                        }
                    },
                    Err(e) => {
                        wait::failed(&mut pools, &shape);
                        (Some(e), None)
                    }
                }
            };
            make::remove_taken(&inner, unwanted).await;
            if let Some(e) = failed {
                tracing::warn!(shape = %shape, error = %e, "cannot make a pool kernel");
                tokio::time::sleep(AFTER_FAILURE).await;
            }
        }
    });
}

/// Before the process ends: nothing more is made, a kernel being made is removed once made,
/// kernels already taken out of the pools are removed (both waited for, [`STOP_WAIT`] at
/// most), and the ready ones are given up. A pool kernel
/// outlives no agent: the next start would remove it, but until then it would hold its
/// share of the node.
pub async fn stop(inner: &Arc<Inner>) {
    inner.pools().stopping = true;
    let started = std::time::Instant::now();
    while inner.pools().in_hand() {
        if started.elapsed() > STOP_WAIT {
            tracing::warn!("a pool kernel was still being made or removed when the agent stopped");
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    super::room::evict(inner).await;
}

/// How long [`stop`] waits for a pool kernel being made (a container create and start).
const STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// The next shape to make a pool kernel of (marked as being made), if any is missing and
/// the node has room for it; none once the agent stops.
async fn next(inner: &Arc<Inner>) -> Option<PoolShape> {
    let wanted: Vec<PoolShape> = {
        let pools = inner.pools();
        if pools.stopping {
            return None;
        }
        pools
            .targets
            .iter()
            .filter(|t| pools.have(&t.shape) < pools.kept(t) as usize)
            .map(|t| t.shape.clone())
            .collect()
    };
    if wanted.is_empty() {
        return None;
    }
    let free = super::room::free(inner).await;
    let shape = wanted
        .into_iter()
        .find(|s| s.cpu_milli <= free.cpu_milli && s.mem <= free.mem)?;
    inner.pools().making.push(shape.clone());
    Some(shape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::docker::pool::Pools;
    use crate::docker::pool::testing::{kernel, shape};

    #[test]
    fn kernels_taken_out_of_the_pools_count_as_in_hand_until_removed() {
        let (kept, dropped) = (shape(256 << 20), shape(1 << 30));
        let mut pools = Pools {
            targets: vec![PoolTarget {
                shape: kept.clone(),
                count: 1,
            }],
            ..Default::default()
        };
        pools.demand.asked(&kept);
        let ready = [kernel(&kept), kernel(&kept), kernel(&dropped)];
        pools.ready = ready.to_vec();
        assert!(!pools.in_hand());
        // One of the kept shape past its count, and the shape no longer wanted, go.
        let extra = beyond_kept(&mut pools);
        assert_eq!(extra, vec![ready[1].id, ready[2].id]);
        assert_eq!(pools.ready.len(), 1);
        // Out of `ready` but not removed yet: a stopping agent must wait for them.
        assert_eq!(pools.removing, 2);
        assert!(pools.in_hand());
        // Nothing more is past its count: nothing more is counted.
        assert!(beyond_kept(&mut pools).is_empty());
        assert_eq!(pools.removing, 2);
    }
}

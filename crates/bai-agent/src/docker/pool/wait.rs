//! A create that finds its shape's pool empty while a pool kernel of that shape is being
//! made takes that kernel when it is ready instead of starting a second container beside
//! it: the refill is ahead of a cold start, and two container starts at once would share
//! the node's CPUs (issue 56). Each kernel being made serves at most one waiting create.
//!
//! The hand-over is one door ([`made`], under the pools' lock): a made kernel goes to the
//! first create still waiting for its shape, else to the ready list. A refill that fails
//! lets its waiting create go ([`failed`]); that create starts cold. A create that stops
//! waiting (it was cancelled) drops its [`Coming`], which puts a kernel handed to it
//! meanwhile back into the pool, so no kernel is lost or used twice.

use super::{Pools, Ready};
use crate::docker::Inner;
use bai_core::agent::KernelSpec;
use bai_core::pool::PoolShape;
use bai_core::status::SessionType;
use std::sync::Arc;
use tokio::sync::oneshot;

/// Below this memory limit a pool kernel does not pre-start Jupyter (`bai-krunner`'s
/// `zygote::MIN_MEMORY`, the same number): it is ready as soon as its runner answers.
pub const PRESTART_MIN_MEMORY: u64 = 512 << 20;

/// A create waiting for a pool kernel being made.
#[derive(Debug)]
pub struct Waiting {
    pub shape: PoolShape,
    tx: oneshot::Sender<Ready>,
}

/// What a create finds for its shape.
pub enum Found {
    /// A ready kernel, now the create's.
    Ready(Box<Ready>),
    /// A kernel being made, the create's once it is ready.
    Coming(oneshot::Receiver<Ready>),
    /// Nothing: the create starts cold.
    Nothing,
}

/// Whether a create of `spec` should wait for a pool kernel being made rather than start
/// cold: when that kernel is a bare container start ahead of the cold one (its shape below
/// the pre-start's memory floor), or when it brings a pre-started Jupyter that this session
/// keeps (an interactive one without a bootstrap script), which a cold start cannot have.
pub fn may_wait(spec: &KernelSpec, shape: &PoolShape) -> bool {
    shape.mem < PRESTART_MIN_MEMORY
        || (spec.session_type == SessionType::Interactive && spec.bootstrap_script.is_none())
}

/// Takes a ready kernel of `shape`, or, when `wait` and a kernel of it is being made that no
/// other create waits for, a place in line for it.
pub fn take(pools: &mut Pools, shape: &PoolShape, wait: bool) -> Found {
    if let Some(i) = pools.ready.iter().position(|r| r.shape == *shape) {
        return Found::Ready(Box::new(pools.ready.swap_remove(i)));
    }
    pools.waiting.retain(|w| !w.tx.is_closed());
    let making = pools.making.iter().filter(|m| *m == shape).count();
    let waiting = pools.waiting.iter().filter(|w| w.shape == *shape).count();
    if !wait || waiting >= making {
        return Found::Nothing;
    }
    let (tx, rx) = oneshot::channel();
    pools.waiting.push(Waiting {
        shape: shape.clone(),
        tx,
    });
    Found::Coming(rx)
}

/// A kernel of `r.shape` was made: it goes to the first create still waiting for its shape
/// (`None`), or comes back for the ready list.
pub fn made(pools: &mut Pools, mut r: Ready) -> Option<Ready> {
    while let Some(i) = pools.waiting.iter().position(|w| w.shape == r.shape) {
        let w = pools.waiting.remove(i);
        match w.tx.send(r) {
            Ok(()) => return None,
            // That create stopped waiting: the next one, or the pool.
            Err(back) => r = back,
        }
    }
    Some(r)
}

/// A kernel of `shape` could not be made: the first create waiting for it goes cold.
pub fn failed(pools: &mut Pools, shape: &PoolShape) {
    if let Some(i) = pools.waiting.iter().position(|w| w.shape == *shape) {
        pools.waiting.remove(i);
    }
}

/// How many creates wait for kernels of `shape`.
pub fn waiters(pools: &Pools, shape: &PoolShape) -> usize {
    pools
        .waiting
        .iter()
        .filter(|w| w.shape == *shape && !w.tx.is_closed())
        .count()
}

/// A create's place in line. Dropped before the kernel arrived was received (the create was
/// cancelled), it puts a kernel already handed to it back into the pool.
pub struct Coming {
    inner: Arc<Inner>,
    rx: Option<oneshot::Receiver<Ready>>,
}

impl Coming {
    pub fn new(inner: &Arc<Inner>, rx: oneshot::Receiver<Ready>) -> Coming {
        Coming {
            inner: inner.clone(),
            rx: Some(rx),
        }
    }

    /// The kernel, once made; `None` if it could not be made.
    pub async fn arrive(mut self) -> Option<Ready> {
        let rx = self.rx.as_mut()?;
        let r = rx.await.ok();
        self.rx = None;
        r
    }
}

impl Drop for Coming {
    fn drop(&mut self) {
        let Some(mut rx) = self.rx.take() else { return };
        rx.close();
        if let Ok(r) = rx.try_recv() {
            tracing::debug!(pool_kernel = %r.id, "a create stopped waiting; its pool kernel goes back to the pool");
            self.inner.pools().ready.push(r);
            self.inner.pool_wake.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::docker::pool::testing::{kernel, shape};

    #[tokio::test]
    async fn a_create_during_a_refill_gets_the_refilling_kernel_and_the_counts_stay_right() {
        let s = shape(256 << 20);
        let mut pools = Pools::default();
        // Nothing ready, nothing being made: cold.
        assert!(matches!(take(&mut pools, &s, true), Found::Nothing));
        pools.making.push(s.clone());
        let Found::Coming(rx) = take(&mut pools, &s, true) else {
            panic!("a kernel of the shape is being made")
        };
        // One kernel being made serves one create: the next goes cold.
        assert!(matches!(take(&mut pools, &s, true), Found::Nothing));
        assert_eq!(waiters(&pools, &s), 1);
        // The refill ends (fill.rs takes it out of `making`, then hands it over).
        pools.making.clear();
        let k = kernel(&s);
        assert!(
            made(&mut pools, k.clone()).is_none(),
            "the waiting create takes it"
        );
        assert_eq!(rx.await.unwrap().id, k.id);
        assert!(pools.ready.is_empty() && pools.waiting.is_empty());
        // Nobody waits: the next kernel made is ready for the next create.
        assert!(made(&mut pools, kernel(&s)).is_some());
    }

    #[tokio::test]
    async fn a_create_that_stopped_waiting_leaves_the_kernel_to_the_pool() {
        let s = shape(256 << 20);
        let mut pools = Pools::default();
        pools.making.push(s.clone());
        let Found::Coming(rx) = take(&mut pools, &s, true) else {
            panic!("a kernel of the shape is being made")
        };
        drop(rx);
        // Its place is free again for another create.
        let Found::Coming(rx2) = take(&mut pools, &s, true) else {
            panic!("the first create's place was given up")
        };
        drop(rx2);
        let k = kernel(&s);
        let back = made(&mut pools, k.clone()).expect("nobody takes it");
        assert_eq!(back.id, k.id);
    }

    #[tokio::test]
    async fn a_failed_refill_sends_its_create_the_cold_way() {
        let s = shape(256 << 20);
        let other = shape(1 << 30);
        let mut pools = Pools::default();
        pools.making.push(s.clone());
        pools.making.push(other.clone());
        let Found::Coming(rx) = take(&mut pools, &s, true) else {
            panic!("a kernel of the shape is being made")
        };
        // A create that may not wait, or of another shape than the one that failed.
        assert!(matches!(take(&mut pools, &other, false), Found::Nothing));
        let Found::Coming(rx_other) = take(&mut pools, &other, true) else {
            panic!("a kernel of the other shape is being made")
        };
        failed(&mut pools, &s);
        assert!(rx.await.is_err());
        assert_eq!(waiters(&pools, &other), 1);
        drop(rx_other);
    }

    #[test]
    fn only_sessions_a_refill_serves_sooner_wait_for_it() {
        let spec = |t: SessionType, bootstrap: Option<&str>| KernelSpec {
            session_type: t,
            bootstrap_script: bootstrap.map(String::from),
            ..crate::pool_kernel::spec(&shape(1 << 30), uuid::Uuid::nil())
        };
        let big = shape(1 << 30);
        let small = shape(256 << 20);
        assert!(may_wait(&spec(SessionType::Interactive, None), &big));
        assert!(!may_wait(&spec(SessionType::Batch, None), &big));
        assert!(!may_wait(&spec(SessionType::Interactive, Some("x")), &big));
        assert!(may_wait(&spec(SessionType::Batch, None), &small));
    }
}

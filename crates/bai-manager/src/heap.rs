//! Giving memory back after a burst: a walk through a long history (or any burst of queries)
//! leaves glibc's arenas holding tens of MB the manager no longer uses. Every
//! [`TICK`], the store's use counter (each query and transaction on any connection) is
//! read; after at least [`MIN_WORK`] uses since the last release, once a tick saw fewer than
//! [`IDLE_BELOW`] (the burst ended) or while baid is resident past [`HIGH_WATER`] (a long
//! burst), the free pages are handed back ([`bai_heap::release`], on a blocking thread).
//! At a burst's end the store's SQLite connections first give back their page caches
//! ([`bai_store::Store::release_memory`]): a history written through this manager (20,000
//! sessions run on its agents) fills the writer's 32 MiB, which an idle manager would
//! otherwise keep; the next queries read their pages again from the kernel's page cache.

use crate::state::Manager;
use std::sync::Arc;
use std::time::Duration;

/// How often the store's use counter is read.
pub const TICK: Duration = Duration::from_secs(2);
/// Store uses since the last release that make a burst worth releasing after (a page of the
/// web UI is a handful).
pub const MIN_WORK: u64 = 2_000;
/// Fewer store uses than this in a tick is an idle manager (its loops' own reads).
pub const IDLE_BELOW: u64 = 100;
/// Resident bytes past which a busy manager releases every tick it worked enough (twice an
/// idle manager's size; docs/RELIABILITY.md promises at most 100 MB with any history).
pub const HIGH_WATER: u64 = 64 << 20;

/// Starts the loop; it ends with the runtime.
pub fn spawn(m: &Arc<Manager>) {
    let metrics = m.metrics.clone();
    let store = m.store.clone();
    tokio::spawn(async move {
        let mut quiet = bai_heap::Quiet::new(MIN_WORK, IDLE_BELOW, HIGH_WATER);
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let work = metrics.store_read.count() + metrics.store_write.count();
            let before = bai_heap::resident_bytes();
            let Some(why) = quiet.tick(work, before) else {
                continue;
            };
            let store = store.clone();
            let (caches, released) = tokio::task::spawn_blocking(move || {
                let caches = match why {
                    bai_heap::Why::Ended => store.release_memory(),
                    bai_heap::Why::HighWater => 0,
                };
                (caches, bai_heap::release())
            })
            .await
            .unwrap_or((0, false));
            tracing::debug!(
                ?why,
                caches,
                released,
                before_mib = before.map(|b| b >> 20),
                after_mib = bai_heap::resident_bytes().map(|b| b >> 20),
                "gave the allocator's free pages back after a burst"
            );
        }
    });
}

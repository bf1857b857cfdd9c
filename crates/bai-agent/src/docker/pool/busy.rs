//! Creates in flight, which the pools give way to: a refill starts only while no create is
//! in flight ([`Creates::quiet`]), and a pool kernel is made at the lowest CPU weight until
//! it is ready ([`LOW_CPU_SHARES`]), so one that a create finds being made takes what the
//! create leaves. The weight goes back to a cold kernel's when the pool kernel is ready.

use tokio::sync::watch;

/// A pool kernel's CPU shares while it is made (the engine's least).
pub const LOW_CPU_SHARES: i64 = 2;

/// The CPU shares a container made without any has: cgroup v1's 1024; on cgroup v2 the
/// engine maps shares to a weight (`1 + (shares - 2) * 9999 / 262142`), and 2598 is the
/// default weight of 100.
pub fn default_cpu_shares(cgroup_v2: bool) -> i64 {
    if cgroup_v2 { 2598 } else { 1024 }
}

/// How many creates are in flight on this agent.
pub struct Creates {
    count: watch::Sender<usize>,
}

impl Default for Creates {
    fn default() -> Self {
        Creates {
            count: watch::Sender::new(0),
        }
    }
}

/// One create in flight, until dropped.
pub struct InFlight<'a>(&'a Creates);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.count.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Creates {
    /// Counts a create until the returned guard drops.
    pub fn enter(&self) -> InFlight<'_> {
        self.count.send_modify(|n| *n += 1);
        InFlight(self)
    }

    /// Returns once no create is in flight.
    pub async fn quiet(&self) {
        let mut rx = self.count.subscribe();
        let _ = rx.wait_for(|n| *n == 0).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_refill_waits_until_the_last_create_in_flight_is_done() {
        let c = std::sync::Arc::new(Creates::default());
        c.quiet().await; // none in flight: at once
        let first = c.enter();
        let second = c.enter();
        let waiter = {
            let c = c.clone();
            tokio::spawn(async move { c.quiet().await })
        };
        drop(first);
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "one create is still in flight");
        drop(second);
        waiter.await.unwrap();
    }

    #[test]
    fn the_default_weight_is_restored_on_either_cgroup_version() {
        assert_eq!(default_cpu_shares(false), 1024);
        let v2 = |shares: i64| 1 + (shares - 2) * 9999 / 262142;
        assert_eq!(v2(default_cpu_shares(true)), 100);
        assert_eq!(v2(LOW_CPU_SHARES), 1);
    }
}

//! The multifactor priority of a pending session: fair share, age, requested size and the
//! session's own priority, weighted into one number (higher goes first).
//!
//! Burst penalty: usage is recorded as sessions run, so between two recomputations a user's
//! new submissions would all carry the same factor. Each pending session of an account is
//! therefore ranked as if the account's earlier pending sessions (by submission) had already
//! run for `burst_window_secs`: the k-th one's usage, and that of each node above it, grows by
//! what the k−1 before it would add, each level's fraction taken against its parent's usage
//! (at least the group's capacity over the window; [`ShareTree::factor_with`]). Submitting
//! 500 at once lowers the factor of the later ones and does not beat the share.

use super::policy::Policy;
use super::tree::{Account, ShareTree};
use crate::types::Workload;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One pending session's factors and priority.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Factors {
    /// The fair-share factor used (after the burst penalty).
    pub fairshare: f64,
    /// The account's factor in the tree, before the burst penalty.
    pub fairshare_base: f64,
    /// Earlier pending sessions of the same account (the burst).
    pub earlier: usize,
    pub age: f64,
    pub size: f64,
    pub own: f64,
    pub priority: f64,
}

impl Factors {
    /// `priority 5123: fair-share 0.500 (0.500 in the tree, 0 earlier pending), age 0.001, size 0.125, own 0.100`.
    pub fn describe(&self) -> String {
        format!(
            "priority {:.0}: fair-share factor {:.3} ({:.3} in the tree, {} earlier pending), age {:.3}, size {:.3}, own {:.2}",
            self.priority,
            self.fairshare,
            self.fairshare_base,
            self.earlier,
            self.age,
            self.size,
            self.own
        )
    }
}

/// The pending sessions' indexes, highest priority first (ties: older first), with their
/// factors. `capacity_rate`: the group's capacity in weighted units per second.
pub fn rank(
    pending: &[Workload],
    tree: &ShareTree,
    policy: &Policy,
    capacity_rate: f64,
    now: DateTime<Utc>,
) -> Vec<(usize, Factors)> {
    let w = &policy.priority;
    let window = w.burst_window_secs as f64;
    let floor = capacity_rate * window;
    let nobody = Account::default();

    // Each account's sessions in submission order.
    let mut by_account: HashMap<&Account, Vec<usize>> = HashMap::new();
    for (i, p) in pending.iter().enumerate() {
        by_account
            .entry(p.account.as_ref().unwrap_or(&nobody))
            .or_default()
            .push(i);
    }
    let mut out: Vec<Option<Factors>> = vec![None; pending.len()];
    for (account, mut list) in by_account {
        list.sort_by(|&x, &y| {
            pending[x]
                .enqueued_at
                .cmp(&pending[y].enqueued_at)
                .then(x.cmp(&y))
        });
        let base = tree.factor(account);
        let mut extra = 0.0;
        for (k, &i) in list.iter().enumerate() {
            let p = &pending[i];
            let rate = policy.weights.rate(&p.slots);
            let fs = if extra > 0.0 {
                tree.factor_with(account, extra, floor)
            } else {
                base
            };
            extra += rate * window;
            let age = if w.max_age_secs == 0 {
                1.0
            } else {
                ((now - p.enqueued_at).num_seconds().max(0) as f64 / w.max_age_secs as f64).min(1.0)
            };
            let size = if capacity_rate > 0.0 {
                (rate / capacity_rate).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let own = (p.priority.clamp(0, 100) as f64) / 100.0;
            let priority = w.fairshare * fs + w.age * age + w.size * size + w.priority * own;
            out[i] = Some(Factors {
                fairshare: fs,
                fairshare_base: base,
                earlier: k,
                age,
                size,
                own,
                priority,
            });
        }
    }
    let mut ranked: Vec<(usize, Factors)> = out
        .into_iter()
        .enumerate()
        .filter_map(|(i, f)| f.map(|f| (i, f)))
        .collect();
    ranked.sort_by(|(x, fx), (y, fy)| {
        fy.priority
            .total_cmp(&fx.priority)
            .then_with(|| pending[*x].enqueued_at.cmp(&pending[*y].enqueued_at))
            .then(x.cmp(y))
    });
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fairshare::decay::decayed;
    use crate::fairshare::tree::Shares;
    use bai_core::resources::ResourceSlots;
    use chrono::Duration;
    use uuid::Uuid;

    const DAY: f64 = 86_400.0;

    fn gpu(n: u64) -> ResourceSlots {
        ResourceSlots {
            cpu_milli: 1000 * n,
            mem: n << 30,
            accel: [("cuda.device".to_string(), 1000 * n)].into(),
        }
    }

    fn w(user: &str, age_s: i64, now: DateTime<Utc>) -> Workload {
        Workload {
            id: Uuid::new_v4(),
            owner: format!("AK-{user}"),
            priority: 10,
            enqueued_at: now - Duration::seconds(age_s),
            slots: gpu(1),
            kernels: 1,
            starts_at: None,
            designated_agent: None,
            eligible: None,
            dependencies: vec![],
            account: Some(acct(user)),
            max_runtime: None,
        }
    }

    fn acct(user: &str) -> Account {
        Account::new("default", "default", user)
    }

    fn capacity(policy: &Policy) -> f64 {
        policy.weights.rate(&gpu(8))
    }

    fn order(
        pending: &[Workload],
        usage: &[(&str, f64)],
        policy: &Policy,
        now: DateTime<Utc>,
    ) -> Vec<usize> {
        let tree = ShareTree::build(usage.iter().map(|(u, x)| (acct(u), *x)), &Shares::default());
        rank(pending, &tree, policy, capacity(policy), now)
            .into_iter()
            .map(|(i, _)| i)
            .collect()
    }

    #[test]
    fn heavy_past_usage_goes_after_light() {
        let now = Utc::now();
        let policy = Policy::default();
        // The heavy user submitted first: FIFO would start it first.
        let p = vec![w("heavy", 60, now), w("light", 10, now)];
        let got = order(&p, &[("heavy", 5.0e6), ("light", 1.0e4)], &policy, now);
        assert_eq!(got, vec![1, 0]);
        // Without usage the older one wins (age).
        assert_eq!(
            order(&p, &[("heavy", 0.0), ("light", 0.0)], &policy, now),
            vec![0, 1]
        );
    }

    #[test]
    fn decay_makes_old_usage_matter_less() {
        let now = Utc::now();
        let policy = Policy::default();
        let h = policy.half_life_secs as f64;
        // "old" used 4× as much as "recent", but three weeks ago (three half-lives: ÷8).
        let old_usage = decayed(4.0e6, 21.0 * DAY, h);
        let p = vec![w("recent", 60, now), w("old", 10, now)];
        assert_eq!(
            order(&p, &[("old", old_usage), ("recent", 1.0e6)], &policy, now),
            vec![1, 0]
        );
        // Undecayed, the same numbers put "old" last.
        assert_eq!(
            order(&p, &[("old", 4.0e6), ("recent", 1.0e6)], &policy, now),
            vec![0, 1]
        );
    }

    #[test]
    fn a_burst_of_500_does_not_beat_the_share() {
        let now = Utc::now();
        let policy = Policy::default();
        // "burst" has used nothing and submits 500 at once; "steady" used a little and
        // submits one after them.
        let mut p: Vec<Workload> = (0..500).map(|_| w("burst", 30, now)).collect();
        p.push(w("steady", 5, now));
        let usage = [("burst", 0.0), ("steady", 1.0e5)];
        let got = order(&p, &usage, &policy, now);
        let at = got.iter().position(|&i| i == 500).unwrap();
        assert!(at < 10, "steady's session is tried at position {at}");
        // Without the penalty it would wait behind all 500.
        let mut off = Policy::default();
        off.priority.burst_window_secs = 0;
        let got = order(&p, &usage, &off, now);
        assert_eq!(got.iter().position(|&i| i == 500), Some(500));
    }

    #[test]
    fn factors_are_described() {
        let now = Utc::now();
        let policy = Policy::default();
        let p = vec![w("x", 0, now)];
        let tree = ShareTree::build([(acct("x"), 0.0)], &Shares::default());
        let r = rank(&p, &tree, &policy, capacity(&policy), now);
        let f = &r[0].1;
        assert_eq!(f.fairshare, 1.0);
        assert!((f.size - 0.125).abs() < 1e-9);
        assert!((f.own - 0.1).abs() < 1e-9);
        assert!(f.describe().contains("fair-share factor 1.000"));
    }
}

//! The search for victims: the fewest, then the cheapest, then the latest started running
//! sessions whose end makes room, whatever "makes room" means for the head ([`super`]: one
//! agent for a session of one kernel, enough agents for every kernel of a multi-node one).

use super::Candidate;
use chrono::{DateTime, Utc};

/// At most this many allowed sessions are searched exhaustively for the fewest and cheapest
/// set; beyond, a greedy choice (largest first, then the unneeded dropped).
const EXHAUSTIVE: usize = 12;

/// A set of victims that makes room.
pub(super) struct Chosen<'a> {
    pub victims: Vec<&'a Candidate>,
    /// Their weighted size together.
    pub cost: f64,
    /// When the earliest started of them started (later is better: less work lost).
    pub latest: DateTime<Utc>,
}

impl<'a> Chosen<'a> {
    fn of(victims: Vec<&'a Candidate>, cost: &impl Fn(&Candidate) -> f64) -> Chosen<'a> {
        let total = victims.iter().map(|c| cost(c)).sum();
        let latest = victims
            .iter()
            .map(|c| c.running_since)
            .min()
            .unwrap_or(DateTime::<Utc>::MAX_UTC);
        Chosen {
            victims,
            cost: total,
            latest,
        }
    }

    /// Fewer victims, then cheaper ones, then later started ones.
    pub fn better_than(&self, other: &Chosen<'_>) -> bool {
        let (n, m) = (self.victims.len(), other.victims.len());
        n < m
            || (n == m && self.cost < other.cost)
            || (n == m && self.cost == other.cost && self.latest > other.latest)
    }
}

/// The best set of `pool` for which `fits` holds; None when even all of them would not make
/// room, or when none is needed (`fits` holds for the empty set: the head fits already).
pub(super) fn choose<'a>(
    pool: &[&'a Candidate],
    fits: impl Fn(&[&Candidate]) -> bool,
    cost: &impl Fn(&Candidate) -> f64,
) -> Option<Chosen<'a>> {
    if pool.is_empty() || fits(&[]) || !fits(pool) {
        return None;
    }
    if pool.len() <= EXHAUSTIVE {
        let mut best: Option<Chosen<'a>> = None;
        for mask in 1u32..(1 << pool.len()) {
            let n = mask.count_ones() as usize;
            if best.as_ref().is_some_and(|b| n > b.victims.len()) {
                continue;
            }
            let set: Vec<&'a Candidate> = (0..pool.len())
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| pool[i])
                .collect();
            if !fits(&set) {
                continue;
            }
            let this = Chosen::of(set, cost);
            if best.as_ref().is_none_or(|b| this.better_than(b)) {
                best = Some(this);
            }
        }
        return best;
    }
    // Greedy: the largest first until it fits, then drop what is no longer needed
    // (largest first again, so the cheap ones stay only when they suffice).
    let mut by_size: Vec<&'a Candidate> = pool.to_vec();
    by_size.sort_by(|a, b| cost(b).total_cmp(&cost(a)));
    let mut set = Vec::new();
    for c in by_size {
        set.push(c);
        if fits(&set) {
            break;
        }
    }
    let mut i = 0;
    while i < set.len() {
        let mut without = set.clone();
        without.remove(i);
        if fits(&without) {
            set = without;
        } else {
            i += 1;
        }
    }
    Some(Chosen::of(set, cost))
}

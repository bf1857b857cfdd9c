//! Sequencers: the order in which PENDING sessions of a group are tried.
//!
//! Priority bands come first (higher priority first); inside a band the group's sequencer
//! decides. DRF is dynamic: after every placement the owner with the smallest dominant share
//! (the largest fraction of any one resource of the group it holds) is served next.
//! The `fairshare` sequencer has no bands: its order comes from `fairshare::rank`
//! ([`Queue::ordered`]).

pub use crate::policy::Sequencer;
use crate::types::Workload;
use bai_core::resources::ResourceSlots;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

/// The largest share of any one resource of `total` that `held` is.
pub fn dominant_share(held: &ResourceSlots, total: &ResourceSlots) -> f64 {
    let frac = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let mut s = frac(held.cpu_milli, total.cpu_milli).max(frac(held.mem, total.mem));
    for (k, v) in &held.accel {
        s = s.max(frac(*v, total.accel.get(k).copied().unwrap_or(0)));
    }
    s
}

/// Hands out workload indexes in order; told about each placement.
pub struct Queue<'a> {
    pending: &'a [Workload],
    kind: Sequencer,
    /// Bands from the highest priority down; each a list of indexes in FIFO order.
    bands: Vec<Vec<usize>>,
    band: usize,
    cursor: usize,
    drf: Option<Drf>,
    total: ResourceSlots,
    held: HashMap<String, ResourceSlots>,
}

struct Drf {
    /// Per owner, its indexes in FIFO order and the next to hand out.
    owners: HashMap<String, (Vec<usize>, usize)>,
    heap: BinaryHeap<Entry>,
    last_owner: Option<String>,
}

#[derive(Debug)]
struct Entry {
    share: f64,
    head: usize,
    owner: String,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // A max-heap: the smallest share (then the oldest head) compares greatest.
    fn cmp(&self, o: &Self) -> Ordering {
        o.share
            .total_cmp(&self.share)
            .then_with(|| o.head.cmp(&self.head))
    }
}

impl<'a> Queue<'a> {
    /// `total`: the group's capacity; `held`: what each owner holds in the group now.
    pub fn new(
        kind: Sequencer,
        pending: &'a [Workload],
        total: ResourceSlots,
        held: HashMap<String, ResourceSlots>,
    ) -> Queue<'a> {
        let mut by_prio: BTreeMap<std::cmp::Reverse<i64>, Vec<usize>> = BTreeMap::new();
        for (i, w) in pending.iter().enumerate() {
            by_prio
                .entry(std::cmp::Reverse(w.priority))
                .or_default()
                .push(i);
        }
        let mut bands: Vec<Vec<usize>> = by_prio.into_values().collect();
        for b in &mut bands {
            b.sort_by(|&x, &y| {
                pending[x]
                    .enqueued_at
                    .cmp(&pending[y].enqueued_at)
                    .then_with(|| x.cmp(&y))
            });
            if kind == Sequencer::Lifo {
                b.reverse();
            }
        }
        let mut q = Queue {
            pending,
            kind,
            bands,
            band: 0,
            cursor: 0,
            drf: None,
            total,
            held,
        };
        q.start_band();
        q
    }

    /// A queue that hands out the workloads in the order given (the `fairshare` sequencer
    /// ranks them itself: its priority number already holds the session's own priority).
    pub fn ordered(pending: &'a [Workload], order: Vec<usize>) -> Queue<'a> {
        Queue {
            pending,
            kind: Sequencer::FairShare,
            bands: vec![order],
            band: 0,
            cursor: 0,
            drf: None,
            total: ResourceSlots::default(),
            held: HashMap::new(),
        }
    }

    fn start_band(&mut self) {
        if self.kind != Sequencer::Drf {
            return;
        }
        let Some(band) = self.bands.get(self.band) else {
            self.drf = None;
            return;
        };
        let mut owners: HashMap<String, (Vec<usize>, usize)> = HashMap::new();
        for &i in band {
            owners
                .entry(self.pending[i].owner.clone())
                .or_default()
                .0
                .push(i);
        }
        let mut heap = BinaryHeap::new();
        for (owner, (list, _)) in &owners {
            heap.push(Entry {
                share: self.share(owner),
                head: list[0],
                owner: owner.clone(),
            });
        }
        self.drf = Some(Drf {
            owners,
            heap,
            last_owner: None,
        });
    }

    fn share(&self, owner: &str) -> f64 {
        self.held
            .get(owner)
            .map(|h| dominant_share(h, &self.total))
            .unwrap_or(0.0)
    }

    /// The next workload to try, or None when all were handed out.
    pub fn next_index(&mut self) -> Option<usize> {
        loop {
            if self.band >= self.bands.len() {
                return None;
            }
            if self.drf.is_some() {
                self.requeue_last();
                let d = self.drf.as_mut()?;
                if let Some(e) = d.heap.pop() {
                    let (list, pos) = d.owners.get_mut(&e.owner)?;
                    let i = list[*pos];
                    *pos += 1;
                    d.last_owner = Some(e.owner);
                    return Some(i);
                }
            } else if let Some(&i) = self.bands[self.band].get(self.cursor) {
                self.cursor += 1;
                return Some(i);
            }
            self.band += 1;
            self.cursor = 0;
            self.start_band();
        }
    }

    /// Puts the owner served last back in the heap with its new share and next head.
    fn requeue_last(&mut self) {
        let Some(owner) = self.drf.as_mut().and_then(|d| d.last_owner.take()) else {
            return;
        };
        let share = self.share(&owner);
        if let Some(d) = self.drf.as_mut()
            && let Some((list, pos)) = d.owners.get(&owner)
            && let Some(&head) = list.get(*pos)
        {
            d.heap.push(Entry { share, head, owner });
        }
    }

    /// Tells the queue that workload `i` was placed (its owner now holds more).
    pub fn placed(&mut self, i: usize) {
        let w = &self.pending[i];
        let e = self.held.entry(w.owner.clone()).or_default();
        *e = e.add(&w.slots);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, Utc};
    use uuid::Uuid;

    fn w(owner: &str, prio: i64, age_s: i64, cpu: u64) -> Workload {
        Workload {
            id: Uuid::new_v4(),
            owner: owner.into(),
            priority: prio,
            enqueued_at: Utc::now() - Duration::seconds(age_s),
            slots: ResourceSlots {
                cpu_milli: cpu * 1000,
                mem: 1 << 30,
                accel: Default::default(),
            },
            kernels: 1,
            starts_at: None,
            designated_agent: None,
            eligible: None,
            dependencies: vec![],
            account: None,
            max_runtime: None,
        }
    }

    fn order(kind: Sequencer, p: &[Workload], held: HashMap<String, ResourceSlots>) -> Vec<usize> {
        let total = ResourceSlots {
            cpu_milli: 100_000,
            mem: 100 << 30,
            accel: Default::default(),
        };
        let mut q = Queue::new(kind, p, total, held);
        let mut out = Vec::new();
        while let Some(i) = q.next_index() {
            q.placed(i);
            out.push(i);
        }
        out
    }

    #[test]
    fn fifo_and_lifo_within_priority_bands() {
        let p = vec![
            w("a", 10, 30, 1),
            w("a", 10, 20, 1),
            w("a", 20, 10, 1),
            w("a", 10, 40, 1),
        ];
        assert_eq!(order(Sequencer::Fifo, &p, HashMap::new()), vec![2, 3, 0, 1]);
        assert_eq!(order(Sequencer::Lifo, &p, HashMap::new()), vec![2, 1, 0, 3]);
    }

    #[test]
    fn drf_serves_the_smaller_dominant_share_first() {
        // "big" already holds 40 cores of 100; "small" holds nothing. Both queued
        // oldest-first from "big": DRF serves "small" until its share passes big's.
        let p = vec![
            w("big", 10, 50, 10),
            w("big", 10, 40, 10),
            w("small", 10, 30, 10),
            w("small", 10, 20, 10),
            w("small", 10, 10, 10),
        ];
        let held = HashMap::from([(
            "big".to_string(),
            ResourceSlots {
                cpu_milli: 40_000,
                mem: 0,
                accel: Default::default(),
            },
        )]);
        let got = order(Sequencer::Drf, &p, held);
        // small goes 0 → 0.1 → 0.2 → 0.3, all below big's 0.4; then big.
        assert_eq!(got, vec![2, 3, 4, 0, 1]);
        assert_eq!(
            order(Sequencer::Fifo, &p, HashMap::new()),
            vec![0, 1, 2, 3, 4]
        );
    }

    #[test]
    fn dominant_share_is_the_largest_fraction() {
        let total = ResourceSlots {
            cpu_milli: 10_000,
            mem: 100,
            accel: Default::default(),
        };
        let held = ResourceSlots {
            cpu_milli: 1000,
            mem: 50,
            accel: Default::default(),
        };
        assert!((dominant_share(&held, &total) - 0.5).abs() < 1e-9);
    }
}

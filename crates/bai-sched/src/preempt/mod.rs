//! Preemption: ending running sessions to make room for a more urgent one.
//!
//! A resource group may allow it (`--preemption priority|fairshare`, default off). When the
//! head of its queue finds no agent with room, the planner looks for running sessions it may
//! end (the *victims*) on one agent, so that the head fits there once they are gone:
//! - only sessions the manager lists as preemptible ([`Candidate`]: batch sessions, and
//!   interactive ones where the group says so; never a model service's replicas) that have
//!   run at least the group's minimum run time;
//! - under `priority`, only sessions of a lower priority than the head's;
//! - under `fairshare`, only sessions of accounts over their share (fair-share factor below
//!   0.5) whose factor is below half the head's account's factor;
//! - the fewest victims, then the cheapest (their weighted size), then the latest started
//!   (the least work lost);
//! - none at all when even all the allowed ones would not make room: no session is ended for
//!   one that then does not start.
//!
//! The victims get SIGTERM and end after the group's grace; the head waits for them with a
//! reservation of that agent from the end of the grace, so nothing else takes the room
//! ([`crate::reserve`]). While a head's victims are ending it plans no more (no second round
//! of victims for the same session), and a victim sent back to the queue (`--requeue`) is
//! not started again before its preemptor has started (no flapping).

pub mod settings;

pub use settings::{Candidate, Config, Mode};

use crate::types::{AgentState, Workload};
use bai_core::resources::ResourceSlots;
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// The planner's answer: end `victims` on `agent` so that `preemptor` fits there.
#[derive(Debug, Clone, PartialEq)]
pub struct Preemption {
    pub preemptor: Uuid,
    pub agent: String,
    pub victims: Vec<Uuid>,
    /// Why the preemptor may take their place, in words (the victims' status info).
    pub why: String,
    /// When the victims will have ended at the latest.
    pub ends_by: DateTime<Utc>,
}

/// The best victims found so far: on `agent`, weighing `cost`, the earliest of them started
/// at `latest` (later is better: less work lost).
struct Choice<'a> {
    cost: f64,
    latest: DateTime<Utc>,
    agent: &'a AgentState,
    victims: Vec<&'a Candidate>,
}

/// At most this many allowed sessions on one agent are searched exhaustively for the fewest
/// and cheapest set; beyond, a greedy choice (largest first, then the unneeded dropped).
const EXHAUSTIVE: usize = 12;

/// Whether `c` may be ended for `head` (whose account's factor is `head_factor`).
fn allowed(
    cfg: &Config,
    head: &Workload,
    head_factor: f64,
    c: &Candidate,
    now: DateTime<Utc>,
) -> bool {
    if now - c.running_since < cfg.min_runtime {
        return false;
    }
    match cfg.mode {
        Mode::Off => false,
        Mode::Priority => c.priority < head.priority,
        Mode::FairShare => {
            let f = c.factor.unwrap_or(0.5);
            f < 0.5 && f < head_factor / 2.0
        }
    }
}

/// The victims for `head` (one kernel or a single-node cluster; a multi-node session is not
/// a preemptor), if some agent can be freed for it. `cost` weighs a session's slots.
pub fn plan(
    cfg: &Config,
    head: &Workload,
    head_factor: Option<f64>,
    agents: &[AgentState],
    candidates: &[Candidate],
    cost: impl Fn(&ResourceSlots) -> f64,
    now: DateTime<Utc>,
) -> Option<Preemption> {
    if cfg.mode == Mode::Off || head.kernels > 1 {
        return None;
    }
    let head_factor = head_factor.unwrap_or(0.5);
    let mut best: Option<Choice<'_>> = None;
    for a in agents {
        let usable = a.schedulable
            && head.slots.fits_in(&a.capacity)
            && head.designated_agent.as_ref().is_none_or(|d| *d == a.id)
            && head
                .eligible
                .as_ref()
                .is_none_or(|e| e.agents.contains(&a.id));
        if !usable {
            continue;
        }
        let pool: Vec<&Candidate> = candidates
            .iter()
            .filter(|c| c.agent == a.id && allowed(cfg, head, head_factor, c, now))
            .collect();
        let Some(chosen) = choose(&a.free(), &head.slots, &pool, &cost) else {
            continue;
        };
        let total: f64 = chosen.iter().map(|c| cost(&c.slots)).sum();
        let latest = chosen.iter().map(|c| c.running_since).min().unwrap_or(now);
        let better = match &best {
            None => true,
            Some(b) => {
                (chosen.len(), total) < (b.victims.len(), b.cost)
                    || (chosen.len() == b.victims.len() && total == b.cost && latest > b.latest)
            }
        };
        if better {
            best = Some(Choice {
                cost: total,
                latest,
                agent: a,
                victims: chosen,
            });
        }
    }
    let Choice { agent, victims, .. } = best?;
    let why = match cfg.mode {
        Mode::Priority => {
            let top = victims.iter().map(|c| c.priority).max().unwrap_or(0);
            format!("priority {} over {top}", head.priority)
        }
        _ => {
            let top = victims
                .iter()
                .map(|c| c.factor.unwrap_or(0.5))
                .fold(0.0, f64::max);
            format!("fair-share factor {head_factor:.3} over {top:.3}")
        }
    };
    Some(Preemption {
        preemptor: head.id,
        agent: agent.id.clone(),
        victims: victims.iter().map(|c| c.id).collect(),
        why,
        ends_by: now + cfg.grace,
    })
}

/// The fewest, then cheapest, of `pool` whose slots with `free` make room for `want`; None
/// when all of them would not (or none are needed: the head fits already).
fn choose<'a>(
    free: &ResourceSlots,
    want: &ResourceSlots,
    pool: &[&'a Candidate],
    cost: &impl Fn(&ResourceSlots) -> f64,
) -> Option<Vec<&'a Candidate>> {
    if pool.is_empty() || want.fits_in(free) {
        return None;
    }
    let fits = |set: &[&Candidate]| {
        let room = set.iter().fold(free.clone(), |r, c| r.add(&c.slots));
        want.fits_in(&room)
    };
    if !fits(pool) {
        return None;
    }
    if pool.len() <= EXHAUSTIVE {
        let mut best: Option<(u32, f64, u32)> = None;
        for mask in 1u32..(1 << pool.len()) {
            let n = mask.count_ones();
            if best.is_some_and(|(bn, ..)| n > bn) {
                continue;
            }
            let set: Vec<&Candidate> = (0..pool.len())
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| pool[i])
                .collect();
            if !fits(&set) {
                continue;
            }
            let c: f64 = set.iter().map(|c| cost(&c.slots)).sum();
            if best.is_none_or(|(bn, bc, _)| (n, c) < (bn, bc)) {
                best = Some((n, c, mask));
            }
        }
        let (_, _, mask) = best?;
        return Some(
            (0..pool.len())
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| pool[i])
                .collect(),
        );
    }
    // Greedy: the largest first until it fits, then drop what is no longer needed
    // (largest first again, so the cheap ones stay only when they suffice).
    let mut by_size: Vec<&Candidate> = pool.to_vec();
    by_size.sort_by(|a, b| cost(&b.slots).total_cmp(&cost(&a.slots)));
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
    Some(set)
}

#[cfg(test)]
mod tests;

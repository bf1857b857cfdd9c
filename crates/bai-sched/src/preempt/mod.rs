//! Preemption: ending running sessions to make room for a more urgent one.
//!
//! A resource group may allow it (`--preemption priority|fairshare`, default off). When the
//! head of its queue finds no room, the planner looks for running sessions it may end (the
//! *victims*) so that the head fits once they are gone: on one agent for a session of one
//! kernel (or a single-node cluster), on as many agents as its kernels need for a
//! multi-node cluster (every kernel placed, main1 on its selected agent if it has one). A
//! victim that is itself a multi-node session frees room on each of its agents.
//! - only sessions the manager lists as preemptible ([`Candidate`]: batch sessions, and
//!   interactive ones where the group says so; never a model service's replicas) that have
//!   run at least the group's minimum run time;
//! - under `priority`, only sessions of a lower priority than the head's;
//! - under `fairshare`, only sessions of accounts over their share (fair-share factor below
//!   0.5) whose factor is below half the head's account's factor;
//! - the fewest victims, then the cheapest (their weighted size, all of it even when only a
//!   part of a multi-node victim is in the way), then the latest started (the least work
//!   lost);
//! - none at all when even all the allowed ones would not make room for the whole session:
//!   no session is ended for one that then does not start.
//!
//! The victims get SIGTERM and end after the group's grace; the head waits for them with a
//! reservation, from the end of the grace, of every agent of its placement
//! ([`Preemption::placement`]), so nothing else takes the room ([`crate::reserve`]). While a
//! head's victims are ending it plans no more (no second round of victims for the same
//! session), and a victim sent back to the queue (`--requeue`) is not started again before
//! its preemptor has started (no flapping).

mod choose;
pub mod settings;

pub use settings::{Candidate, Config, Mode};

use crate::types::{AgentState, Workload};
use crate::{gang, reserve};
use bai_core::resources::ResourceSlots;
use choose::Chosen;
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// The planner's answer: end `victims` so that `preemptor` fits on `placement`.
#[derive(Debug, Clone, PartialEq)]
pub struct Preemption {
    pub preemptor: Uuid,
    /// Where the preemptor goes once they have ended: each agent once, with how many of its
    /// kernels go there (main1's agent first). One agent for a session of one kernel.
    pub placement: Vec<(String, u32)>,
    pub victims: Vec<Uuid>,
    /// Why the preemptor may take their place, in words (the victims' status info).
    pub why: String,
    /// When the victims will have ended at the latest.
    pub ends_by: DateTime<Utc>,
}

impl Preemption {
    /// `agent a` or `agents a, b` (its placement's).
    pub fn agents(&self) -> String {
        let ids: Vec<&str> = self.placement.iter().map(|(a, _)| a.as_str()).collect();
        let word = if ids.len() == 1 { "agent" } else { "agents" };
        format!("{word} {}", ids.join(", "))
    }
}

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

/// The victims for `head`, if ending some makes room for all of it. `cost` weighs a
/// session's slots.
pub fn plan(
    cfg: &Config,
    head: &Workload,
    head_factor: Option<f64>,
    agents: &[AgentState],
    candidates: &[Candidate],
    cost: impl Fn(&ResourceSlots) -> f64,
    now: DateTime<Utc>,
) -> Option<Preemption> {
    if cfg.mode == Mode::Off {
        return None;
    }
    let head_factor = head_factor.unwrap_or(0.5);
    let want = gang::per_kernel(head);
    // The agents a kernel of the head may go to (main1's selected agent aside).
    let usable: Vec<&AgentState> = agents
        .iter()
        .filter(|a| {
            a.schedulable
                && want.fits_in(&a.capacity)
                && head
                    .eligible
                    .as_ref()
                    .is_none_or(|e| e.agents.contains(&a.id))
        })
        .collect();
    let pool: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| allowed(cfg, head, head_factor, c, now))
        .collect();
    let weigh = |c: &Candidate| cost(&c.slots());
    let (placement, chosen) = if head.kernels > 1 {
        across(head, &want, &usable, &pool, &weigh)?
    } else {
        on_one(head, &want, &usable, &pool, &weigh)?
    };
    let victims = chosen.victims;
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
        placement,
        victims: victims.iter().map(|c| c.id).collect(),
        why,
        ends_by: now + cfg.grace,
    })
}

/// What `agent` has free once `set` has ended.
fn freed(agent: &AgentState, set: &[&Candidate]) -> ResourceSlots {
    set.iter()
        .fold(agent.free(), |f, c| f.add(&c.on(&agent.id)))
}

/// A head of one kernel (or a single-node cluster): the agent whose freeing takes the
/// fewest, then cheapest, then latest started victims.
fn on_one<'a>(
    head: &Workload,
    want: &ResourceSlots,
    usable: &[&AgentState],
    pool: &[&'a Candidate],
    cost: &impl Fn(&Candidate) -> f64,
) -> Option<(Vec<(String, u32)>, Chosen<'a>)> {
    let mut best: Option<(&AgentState, Chosen<'a>)> = None;
    for &a in usable {
        if head.designated_agent.as_ref().is_some_and(|d| *d != a.id) {
            continue;
        }
        let here: Vec<&'a Candidate> = pool.iter().copied().filter(|c| c.is_on(&a.id)).collect();
        let Some(chosen) = choose::choose(&here, |set| want.fits_in(&freed(a, set)), cost) else {
            continue;
        };
        if best.as_ref().is_none_or(|(_, b)| chosen.better_than(b)) {
            best = Some((a, chosen));
        }
    }
    best.map(|(a, chosen)| (vec![(a.id.clone(), 1)], chosen))
}

/// A multi-node head: victims on as many agents as its kernels need, so that every kernel
/// (each `kernels`-th of the request) fits once they have ended, main1 on its selected agent
/// if it has one.
fn across<'a>(
    head: &Workload,
    want: &ResourceSlots,
    usable: &[&AgentState],
    pool: &[&'a Candidate],
    cost: &impl Fn(&Candidate) -> f64,
) -> Option<(Vec<(String, u32)>, Chosen<'a>)> {
    let kernels = head.kernels;
    let main = match gang::designated_for(head, 0) {
        Some(d) => Some(usable.iter().position(|a| a.id == d)?),
        None => None,
    };
    // How many kernels each usable agent takes once `set` has ended.
    let counts = |set: &[&Candidate]| -> Vec<u32> {
        usable
            .iter()
            .map(|a| reserve::fits_times(want, &freed(a, set), kernels))
            .collect()
    };
    let fits = |set: &[&Candidate]| {
        let n = counts(set);
        n.iter().sum::<u32>() >= kernels && main.is_none_or(|m| n[m] >= 1)
    };
    let here: Vec<&'a Candidate> = pool
        .iter()
        .copied()
        .filter(|c| usable.iter().any(|a| c.is_on(&a.id)))
        .collect();
    let chosen = choose::choose(&here, fits, cost)?;
    let mut count = counts(&chosen.victims);
    // main1 on its selected agent; the others on the agents with the most room then.
    let mut taken = vec![0u32; usable.len()];
    let mut left = kernels;
    if let Some(m) = main {
        taken[m] = 1;
        count[m] -= 1;
        left -= 1;
    }
    let mut order: Vec<usize> = (0..usable.len()).filter(|&i| count[i] > 0).collect();
    order.sort_by(|&x, &y| {
        count[y]
            .cmp(&count[x])
            .then_with(|| usable[x].id.cmp(&usable[y].id))
    });
    for i in order {
        if left == 0 {
            break;
        }
        let n = count[i].min(left);
        taken[i] += n;
        left -= n;
    }
    let mut placement: Vec<(String, u32)> = Vec::new();
    if let Some(m) = main {
        placement.push((usable[m].id.clone(), taken[m]));
        taken[m] = 0;
    }
    placement.extend(
        (0..usable.len())
            .filter(|&i| taken[i] > 0)
            .map(|i| (usable[i].id.clone(), taken[i])),
    );
    Some((placement, chosen))
}

#[cfg(test)]
mod tests;

//! One scheduling pass over one resource group.
//!
//! For each PENDING session, in the sequencer's order: the validators run (start time,
//! dependencies, resource policy); then the agent selector picks an agent with room; then the
//! allocation is made in memory, so later sessions of the pass see it. The manager commits all
//! placements of a pass in one transaction (PENDING → SCHEDULED compare-and-set).
//!
//! Head-of-line rule (EASY backfilling, [`crate::reserve`]): the first session of the pass that
//! finds no agent with room (the head) gets a reservation: the earliest time and the agents
//! where it will fit, from the known ends of the sessions occupying them (running ones, and
//! those placed earlier in the pass, which end by their own maximum run time). Sessions after
//! it may start only if they do not delay that: they end by the reservation time, or they go
//! on agents the reservation does not need (or into what a reserved agent has to spare then);
//! the others are HELD behind it. Its estimated start is the reservation time. The head keeps
//! its place in the next passes (it is tried first while it is pending, whatever the
//! sequencer's order then), so it starts no later than its reservation.
//!
//! Without a reservation (no known end tells when it would fit) the older rule holds: the
//! session is passed over and smaller ones behind it may start, until it has waited for
//! resources longer than the group's `starvation_after`; then it holds the queue: every session
//! after it in the pass is SKIPPED until it fits, so freed resources accumulate for it.
//! Sessions waiting on their own limits (start time, dependencies, policy, a designated agent)
//! never hold the queue nor get a reservation.

use crate::backfill::{self, Placement};
use crate::explain::{Shortage, estimate_start};
use crate::fairshare::Factors;
use crate::gang::{self, Unplaced};
use crate::preempt::{self, Preemption};
use crate::reserve::{self, Reservation, Reserved};
use crate::select::{AgentIndex, NoAgent};
use crate::sequence::{Queue, Sequencer};
use crate::step::SubStep;
use crate::types::{AgentState, GroupConfig, OwnerUsage, RunningSession, Snapshot};
use crate::validate::{self, Context};
use bai_core::resources::ResourceSlots;
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use uuid::Uuid;

/// What happens to one PENDING session in this pass.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// PENDING → SCHEDULED on this agent (main1's); a multi-node session's other kernels on
    /// `subs` (sub1 first).
    Placed { agent: String, subs: Vec<String> },
    /// Stays PENDING (history result NEED_RETRY).
    Wait { code: &'static str, message: String },
    /// Not attempted: held behind a starving session (history result SKIPPED).
    Held { behind: Uuid, message: String },
    /// Can never run (history result GIVE_UP; the session is cancelled).
    Failed { code: &'static str, message: String },
}

/// The decision for one session, with how it was reached.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub id: Uuid,
    pub outcome: Outcome,
    pub steps: Vec<SubStep>,
    /// 1-based position in the order the group's queue was tried.
    pub position: usize,
    /// Which resources ran out where, for a session that found no agent with room.
    pub shortage: Option<Shortage>,
    /// Earliest possible start, when running sessions' ends are known.
    pub estimated_start: Option<DateTime<Utc>>,
    /// Under the `fairshare` sequencer: its priority and what it is made of.
    pub factors: Option<Factors>,
}

/// The result of one pass.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub decisions: Vec<Decision>,
    /// The group's agents with this pass's allocations applied.
    pub agents: Vec<AgentState>,
    /// Running sessions to end for the head of the queue ([`crate::preempt`]).
    pub preemptions: Vec<Preemption>,
}

impl Plan {
    pub fn placed(&self) -> impl Iterator<Item = (Uuid, &str)> {
        self.decisions.iter().filter_map(|d| match &d.outcome {
            Outcome::Placed { agent, .. } => Some((d.id, agent.as_str())),
            _ => None,
        })
    }
}

/// State a group keeps between passes.
#[derive(Debug, Clone, Default)]
pub struct GroupState {
    pub round_robin: u64,
    /// The session that held the group's reservation at the end of the last pass: while it
    /// is pending it is tried first and stays the head, so its reservation is kept even when
    /// the sequencer's order changes (fair share, DRF, a higher priority arriving).
    pub head: Option<Uuid>,
}

pub fn schedule(cfg: &GroupConfig, snap: &Snapshot, state: &mut GroupState) -> Plan {
    let now = snap.now;
    let mut agents = snap.agents.clone();
    let mut usage: HashMap<String, OwnerUsage> = snap.usage.clone();
    let total = agents
        .iter()
        .filter(|a| a.schedulable)
        .fold(ResourceSlots::default(), |t, a| t.add(&a.capacity));
    let mut held: HashMap<String, ResourceSlots> = HashMap::new();
    for r in &snap.running {
        let e = held.entry(r.owner.clone()).or_default();
        *e = e.add(&r.slots);
    }
    let mut factors: Vec<Option<Factors>> = Vec::new();
    let mut queue = if cfg.sequencer == Sequencer::FairShare {
        let fs = snap.fairshare.clone().unwrap_or_default();
        let capacity = fs.policy.weights.rate(&total);
        factors = vec![None; snap.pending.len()];
        let mut order = Vec::with_capacity(snap.pending.len());
        for (i, f) in crate::fairshare::rank(&snap.pending, &fs.tree, &fs.policy, capacity, now) {
            order.push(i);
            factors[i] = Some(f);
        }
        Queue::ordered(&snap.pending, order)
    } else {
        Queue::new(cfg.sequencer, &snap.pending, total, held)
    };
    let mut index = AgentIndex::new(&agents);
    let mut decisions = Vec::with_capacity(snap.pending.len());
    let mut blocker: Option<(Uuid, i64)> = None;
    // The head of the queue: met once the first session finds no room.
    let mut head_met = false;
    let mut reservation: Option<Reservation> = None;
    // What this pass placed before the head with a known end, each kernel (for the
    // reservation).
    let mut placed_now: Vec<RunningSession> = Vec::new();
    let mut position = 0;
    let mut preemptions = Vec::new();
    let now_s = now.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let ok = |step: &str, msg: String| SubStep::at(&now_s, step, Ok(msg));
    let fail = |step: &str, code: &str, msg: &str| {
        SubStep::at(&now_s, step, Err((code.into(), msg.into())))
    };

    // The head of the last pass goes first (see `GroupState::head`); in a group that
    // preempts, not when a session of a higher priority waits (it is the urgent one).
    let sticky = state
        .head
        .and_then(|h| snap.pending.iter().position(|w| w.id == h))
        .filter(|&i| {
            cfg.preemption.mode == preempt::Mode::Off
                || !snap
                    .pending
                    .iter()
                    .any(|w| w.priority > snap.pending[i].priority)
        });
    let mut first = sticky;
    loop {
        let i = match first.take() {
            Some(i) => i,
            None => match queue.next_index() {
                Some(i) if Some(i) == sticky => continue,
                Some(i) => i,
                None => break,
            },
        };
        position += 1;
        let w = &snap.pending[i];
        let f = factors.get(i).cloned().flatten();
        let sequencing = match &f {
            Some(f) => format!(
                "{} order, position {position}, {}",
                cfg.sequencer.as_str(),
                f.describe()
            ),
            None => format!("{} order, position {position}", cfg.sequencer.as_str()),
        };
        let mut steps = vec![ok("sequencing", sequencing)];
        let decision = |outcome, steps, shortage, estimated_start| Decision {
            id: w.id,
            outcome,
            steps,
            position,
            shortage,
            estimated_start,
            factors: f.clone(),
        };
        if let Some((behind, waited)) = blocker {
            let message = format!(
                "not attempted: session {behind} has waited {waited}s for resources and holds the queue of group {}",
                cfg.name
            );
            steps.push(fail("head_of_line", "held-for-head-of-line", &message));
            decisions.push(decision(
                Outcome::Held { behind, message },
                steps,
                None,
                None,
            ));
            continue;
        }

        // A session a preemption sent back waits until the one it made room for started.
        if let Some(p) = snap.requeued_behind.get(&w.id) {
            let message =
                format!("preempted for session {p}, it starts again once that one has started");
            steps.push(fail("preemption", "preempted-waits", &message));
            let outcome = Outcome::Wait {
                code: "preempted-waits",
                message,
            };
            decisions.push(decision(outcome, steps, None, None));
            continue;
        }
        let cx = Context {
            now,
            usage: &usage,
            limits: &snap.limits,
            dependencies: &snap.dependencies,
        };
        let mut refused = None;
        for v in validate::all() {
            match v.check(w, &cx) {
                Ok(msg) => steps.push(ok(v.name(), msg)),
                Err(r) => {
                    steps.push(fail(v.name(), r.code, &r.message));
                    refused = Some(r);
                    break;
                }
            }
        }
        if let Some(r) = refused {
            let outcome = if r.fatal {
                Outcome::Failed {
                    code: r.code,
                    message: r.message,
                }
            } else {
                Outcome::Wait {
                    code: r.code,
                    message: r.message,
                }
            };
            decisions.push(decision(outcome, steps, None, None));
            continue;
        }

        let strategy = cfg.strategy;
        let ends = w.max_runtime.map(|d| now + d);
        let tried = backfill::place(
            strategy,
            &mut agents,
            &mut index,
            w,
            &mut state.round_robin,
            reservation.as_mut(),
            ends,
        );
        match tried {
            Placement::WouldDelay { head, message } => {
                steps.push(fail("backfill", "held-for-head-of-line", &message));
                decisions.push(decision(
                    Outcome::Held {
                        behind: head,
                        message,
                    },
                    steps,
                    None,
                    None,
                ));
            }
            Placement::Placed(placed, how) => {
                let ids: Vec<String> = placed.iter().map(|&ai| agents[ai].id.clone()).collect();
                let chose = if ids.len() > 1 {
                    let each: Vec<String> = ids
                        .iter()
                        .enumerate()
                        .map(|(k, a)| format!("{} on {a}", gang::hostname(k as u32)))
                        .collect();
                    format!("{} chose {}", strategy.as_str(), each.join(", "))
                } else {
                    format!("{} chose agent {}", strategy.as_str(), ids[0])
                };
                steps.push(ok("agent_selection", chose));
                let u = usage.entry(w.owner.clone()).or_default();
                u.sessions += 1;
                u.slots = u.slots.add(&w.slots);
                queue.placed(i);
                let mut distinct = ids.clone();
                distinct.dedup();
                let mut allocated = format!("allocated on {}", distinct.join(", "));
                if let (Some(res), Some(how)) = (&reservation, &how) {
                    allocated = format!("{allocated}; {}", res.explain(how));
                }
                steps.push(ok("allocation", allocated));
                // Until the head is met, what ends by a known time counts for its reservation.
                if !head_met && ends.is_some() {
                    let each = gang::per_kernel(w);
                    placed_now.extend(ids.iter().map(|a| RunningSession {
                        owner: w.owner.clone(),
                        agent: a.clone(),
                        slots: each.clone(),
                        ends_by: ends,
                    }));
                }
                let agent = ids[0].clone();
                let subs = ids[1..].to_vec();
                decisions.push(decision(Outcome::Placed { agent, subs }, steps, None, None));
            }
            Placement::Unplaced(Unplaced { kernel, why, at }) => {
                let multi = w.kernels > 1;
                // A multi-node session names the kernel that found no room.
                let which = |m: String| {
                    if multi {
                        format!("kernel {} found no room: {m}", gang::hostname(kernel))
                    } else {
                        m
                    }
                };
                match why {
                    NoAgent::DesignatedUnavailable(d) => {
                        let message = format!(
                            "the selected agent {d} is not available in group {}",
                            cfg.name
                        );
                        steps.push(fail(
                            "agent_selection",
                            "designated-agent-unavailable",
                            &message,
                        ));
                        let outcome = Outcome::Wait {
                            code: "designated-agent-unavailable",
                            message,
                        };
                        decisions.push(decision(outcome, steps, None, None));
                    }
                    NoAgent::Ineligible => {
                        let (why, some) = w
                            .eligible
                            .as_ref()
                            .map(|e| (e.why.clone(), !e.agents.is_empty()))
                            .unwrap_or_default();
                        let message = match gang::designated_for(w, kernel) {
                            Some(d) => format!("the selected agent {d} cannot run it: {why}"),
                            None if some => format!("{why}, and none of them is available"),
                            None => why,
                        };
                        steps.push(fail("agent_selection", "no-eligible-agent", &message));
                        let outcome = Outcome::Wait {
                            code: "no-eligible-agent",
                            message,
                        };
                        decisions.push(decision(outcome, steps, None, None));
                    }
                    NoAgent::NoFit => {
                        let eligible = |a: &AgentState| {
                            w.eligible.as_ref().is_none_or(|e| e.agents.contains(&a.id))
                        };
                        // A multi-node session's kernel is judged against the agents as they
                        // stood when it was tried (the kernels before it allocated).
                        let seen = if multi { &at } else { &agents };
                        let pool: Vec<AgentState> = match gang::designated_for(w, kernel) {
                            Some(d) => seen.iter().filter(|a| a.id == d).cloned().collect(),
                            None => seen.iter().filter(|a| eligible(a)).cloned().collect(),
                        };
                        let want = gang::per_kernel(w);
                        let shortage = Shortage::of(&pool, &want);
                        let mut message = which(shortage.describe());
                        steps.push(fail("agent_selection", "no-available-instances", &message));
                        let mut eta = estimate_start(&pool, &snap.running, &want, now);
                        let head = w.designated_agent.is_none() && !head_met;
                        let mut preempting = None;
                        if head {
                            head_met = true;
                            if !snap.preempting.contains(&w.id) {
                                preempting = plan_preemption(cfg, snap, w, f.as_ref(), &agents);
                            }
                            reservation = match &preempting {
                                // The room its victims leave is its own from their end on.
                                Some(p) => Some(reserve_freed(w, p, &agents, snap)),
                                None => {
                                    reserve::reserve(w, &agents, &snap.running, &placed_now, now)
                                }
                            };
                        }
                        if let Some(p) = preempting {
                            let ended = format!(
                                "preempting {} running session(s) on {} ({}); they end by {}",
                                p.victims.len(),
                                p.agents(),
                                p.why,
                                reserve::when(p.ends_by)
                            );
                            steps.push(ok("preemption", ended.clone()));
                            message = format!("{message}; {ended}");
                            preemptions.push(p);
                        } else if snap.preempting.contains(&w.id) {
                            message = format!(
                                "{message}; waiting for the sessions preempted for it to end"
                            );
                        }
                        match &reservation {
                            Some(res) if head => {
                                steps.push(ok(
                                    "reservation",
                                    format!(
                                        "{}, the earliest its room is free by the known ends of the sessions there; later sessions start before it only if they do not delay it",
                                        res.describe()
                                    ),
                                ));
                                message = format!("{message}; {}", res.describe());
                                eta = Some(res.at);
                            }
                            // The head has a reservation: no one else holds the queue.
                            Some(_) => {}
                            None => {
                                let waited = (now - w.enqueued_at).num_seconds();
                                if w.designated_agent.is_none()
                                    && now - w.enqueued_at >= cfg.starvation_after
                                {
                                    blocker = Some((w.id, waited));
                                }
                            }
                        }
                        let outcome = Outcome::Wait {
                            code: "no-available-instances",
                            message,
                        };
                        decisions.push(decision(outcome, steps, Some(shortage), eta));
                    }
                }
            }
        }
    }
    state.head = reservation.map(|r| r.head);
    Plan {
        decisions,
        agents,
        preemptions,
    }
}

/// The victims for the head `w`, under the group's preemption settings.
fn plan_preemption(
    cfg: &GroupConfig,
    snap: &Snapshot,
    w: &crate::types::Workload,
    factors: Option<&Factors>,
    agents: &[AgentState],
) -> Option<Preemption> {
    let weights = snap
        .fairshare
        .as_ref()
        .map(|f| f.policy.weights.clone())
        .unwrap_or_default();
    // Its account's factor in the tree (before the burst penalty), as victims' are judged.
    preempt::plan(
        &cfg.preemption,
        w,
        factors.map(|f| f.fairshare_base),
        agents,
        &snap.preemptible,
        |s| weights.rate(s),
        snap.now,
    )
}

/// The head's reservation of the agents of its placement, from the end of its victims'
/// grace: on each, what its kernels there need out of what will be free then.
fn reserve_freed(
    w: &crate::types::Workload,
    p: &Preemption,
    agents: &[AgentState],
    snap: &Snapshot,
) -> Reservation {
    let each = gang::per_kernel(w);
    let victims: Vec<&preempt::Candidate> = snap
        .preemptible
        .iter()
        .filter(|c| p.victims.contains(&c.id))
        .collect();
    let reserved = p
        .placement
        .iter()
        .filter_map(|(agent, n)| {
            let index = agents.iter().position(|a| a.id == *agent)?;
            let freed = victims
                .iter()
                .fold(agents[index].free(), |f, c| f.add(&c.on(agent)));
            let need = each.times(u64::from(*n));
            Some(Reserved {
                agent: agent.clone(),
                index,
                spare: freed.checked_sub(&need),
                need,
            })
        })
        .collect();
    Reservation {
        head: w.id,
        at: p.ends_by,
        agents: reserved,
    }
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;

//! One scheduling pass over one resource group.
//!
//! For each PENDING session, in the sequencer's order: the validators run (start time,
//! dependencies, resource policy); then the agent selector picks an agent with room; then the
//! allocation is made in memory, so later sessions of the pass see it. The manager commits all
//! placements of a pass in one transaction (PENDING → SCHEDULED compare-and-set).
//!
//! Head-of-line rule: a session that finds no agent with room is passed over and smaller ones
//! behind it may start (backfilling). Once it has waited for resources longer than the group's
//! `starvation_after`, it holds the queue: every session after it in the pass is SKIPPED until
//! it fits, so freed resources accumulate for it. Sessions waiting on their own limits (start
//! time, dependencies, policy, a designated agent) never hold the queue.

use crate::explain::{Shortage, estimate_start};
use crate::fairshare::Factors;
use crate::gang::{self, Unplaced};
use crate::select::{AgentIndex, NoAgent};
use crate::sequence::{Queue, Sequencer};
use crate::step::SubStep;
use crate::types::{AgentState, GroupConfig, OwnerUsage, Snapshot};
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
    let mut position = 0;
    let now_s = now.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let ok = |step: &str, msg: String| SubStep::at(&now_s, step, Ok(msg));
    let fail = |step: &str, code: &str, msg: &str| {
        SubStep::at(&now_s, step, Err((code.into(), msg.into())))
    };

    while let Some(i) = queue.next_index() {
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
        match gang::place(strategy, &mut agents, &mut index, w, &mut state.round_robin) {
            Ok(placed) => {
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
                steps.push(ok(
                    "allocation",
                    format!("allocated on {}", distinct.join(", ")),
                ));
                let agent = ids[0].clone();
                let subs = ids[1..].to_vec();
                decisions.push(decision(Outcome::Placed { agent, subs }, steps, None, None));
            }
            Err(Unplaced { kernel, why, at }) => {
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
                        let message = which(shortage.describe());
                        steps.push(fail("agent_selection", "no-available-instances", &message));
                        let eta = estimate_start(&pool, &snap.running, &want, now);
                        let waited = (now - w.enqueued_at).num_seconds();
                        if w.designated_agent.is_none()
                            && now - w.enqueued_at >= cfg.starvation_after
                        {
                            blocker = Some((w.id, waited));
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
    Plan { decisions, agents }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Limits, Workload};
    use chrono::Duration;

    fn slots(cpu: u64, mem_gib: u64) -> ResourceSlots {
        ResourceSlots {
            cpu_milli: cpu * 1000,
            mem: mem_gib << 30,
            accel: Default::default(),
        }
    }

    fn agent(id: &str, cpu: u64, mem: u64) -> AgentState {
        AgentState {
            id: id.into(),
            capacity: slots(cpu, mem),
            used: ResourceSlots::default(),
            schedulable: true,
        }
    }

    fn w(owner: &str, age_s: i64, cpu: u64) -> Workload {
        Workload {
            id: Uuid::new_v4(),
            owner: owner.into(),
            priority: 10,
            enqueued_at: Utc::now() - Duration::seconds(age_s),
            slots: slots(cpu, 1),
            kernels: 1,
            starts_at: None,
            designated_agent: None,
            eligible: None,
            dependencies: vec![],
            account: None,
        }
    }

    fn snap(pending: Vec<Workload>, agents: Vec<AgentState>) -> Snapshot {
        Snapshot {
            now: Utc::now(),
            pending,
            agents,
            ..Default::default()
        }
    }

    fn kinds(p: &Plan) -> Vec<&'static str> {
        p.decisions
            .iter()
            .map(|d| match d.outcome {
                Outcome::Placed { .. } => "placed",
                Outcome::Wait { code, .. } => code,
                Outcome::Held { .. } => "held",
                Outcome::Failed { code, .. } => code,
            })
            .collect()
    }

    #[test]
    fn small_sessions_pass_a_big_one_until_it_starves() {
        let cfg = GroupConfig::new("default");
        // One 4-core agent with 3 cores used: the 4-core session waits, 1-core ones start.
        let mut a = agent("a", 4, 16);
        a.used = slots(3, 1);
        let s = snap(vec![w("x", 60, 4), w("y", 30, 1)], vec![a.clone()]);
        let p = schedule(&cfg, &s, &mut GroupState::default());
        assert_eq!(kinds(&p), vec!["no-available-instances", "placed"]);
        let d = &p.decisions[0];
        assert_eq!(
            d.shortage.as_ref().map(|s| s.describe()).as_deref(),
            Some("cpu short on 1 of 1 agents")
        );
        assert!(d.steps.iter().any(|s| s.step == "agent_selection"
            && s.error_code.as_deref() == Some("no-available-instances")));

        // Past the starvation threshold the big session holds the queue.
        let s = snap(vec![w("x", 600, 4), w("y", 30, 1)], vec![a]);
        let p = schedule(&cfg, &s, &mut GroupState::default());
        assert_eq!(kinds(&p), vec!["no-available-instances", "held"]);
        assert_eq!(p.placed().count(), 0);
    }

    #[test]
    fn allocations_within_a_pass_are_seen_by_later_sessions() {
        let cfg = GroupConfig::new("default");
        // N = 5 sessions of 1 core onto two 2-core agents: four start, one waits.
        let pending: Vec<Workload> = (0..5).map(|i| w("x", 50 - i, 1)).collect();
        let p = schedule(
            &cfg,
            &snap(pending, vec![agent("a", 2, 8), agent("b", 2, 8)]),
            &mut GroupState::default(),
        );
        assert_eq!(
            kinds(&p),
            vec![
                "placed",
                "placed",
                "placed",
                "placed",
                "no-available-instances"
            ]
        );
        // Dispersed alternates between the two agents.
        let agents: Vec<&str> = p.placed().map(|(_, a)| a).collect();
        assert_eq!(agents, vec!["a", "b", "a", "b"]);
        assert!(p.agents.iter().all(|a| a.free().cpu_milli == 0));
        assert_eq!(p.decisions[4].position, 5);
    }

    #[test]
    fn concurrency_limit_keeps_sessions_pending_without_blocking_others() {
        let cfg = GroupConfig::new("default");
        let mut s = snap(
            vec![w("x", 50, 1), w("x", 40, 1), w("y", 30, 1)],
            vec![agent("a", 8, 8)],
        );
        s.limits.insert(
            "x".into(),
            Limits {
                max_concurrent_sessions: Some(1),
                total_slots: None,
            },
        );
        let p = schedule(&cfg, &s, &mut GroupState::default());
        assert_eq!(kinds(&p), vec!["placed", "concurrency-limit", "placed"]);
    }

    #[test]
    fn drf_gives_the_next_slot_to_the_smaller_dominant_share() {
        let mut cfg = GroupConfig::new("default");
        cfg.sequencer = Sequencer::Drf;
        // "heavy" already runs 3 cores of 4; "light" runs nothing. One core is free.
        let mut a = agent("a", 4, 64);
        a.used = slots(3, 3);
        let mut s = snap(vec![w("heavy", 100, 1), w("light", 10, 1)], vec![a]);
        s.running.push(crate::types::RunningSession {
            owner: "heavy".into(),
            agent: "a".into(),
            slots: slots(3, 3),
            ends_by: None,
        });
        let p = schedule(&cfg, &s, &mut GroupState::default());
        let placed: Vec<Uuid> = p.placed().map(|(id, _)| id).collect();
        assert_eq!(placed, vec![s.pending[1].id]);
        // FIFO would have given it to the older "heavy" session.
        cfg.sequencer = Sequencer::Fifo;
        let p = schedule(&cfg, &s, &mut GroupState::default());
        let placed: Vec<Uuid> = p.placed().map(|(id, _)| id).collect();
        assert_eq!(placed, vec![s.pending[0].id]);
    }

    #[test]
    fn failed_dependency_gives_up_and_start_time_waits() {
        let cfg = GroupConfig::new("default");
        let dep = Uuid::new_v4();
        let mut a = w("x", 10, 1);
        a.dependencies = vec![dep];
        let mut b = w("x", 5, 1);
        b.starts_at = Some(Utc::now() + Duration::hours(1));
        let mut s = snap(vec![a, b], vec![agent("a", 8, 8)]);
        s.dependencies.insert(dep, crate::types::DepState::Failed);
        let p = schedule(&cfg, &s, &mut GroupState::default());
        assert_eq!(
            kinds(&p),
            vec!["dependency-failed", "starts-at-not-reached"]
        );
    }

    #[test]
    fn a_multi_node_gang_waits_naming_its_kernel_then_spreads() {
        let cfg = GroupConfig::new("default");
        let mut gang = w("x", 10, 3);
        gang.kernels = 3;
        let s = snap(vec![gang.clone()], vec![agent("a", 1, 8), agent("b", 1, 8)]);
        let p = schedule(&cfg, &s, &mut GroupState::default());
        assert_eq!(kinds(&p), vec!["no-available-instances"]);
        let Outcome::Wait { message, .. } = &p.decisions[0].outcome else {
            panic!("{:?}", p.decisions[0].outcome);
        };
        assert_eq!(
            message,
            "kernel sub2 found no room: cpu short on 2 of 2 agents"
        );
        assert!(
            p.agents.iter().all(|a| a.used.cpu_milli == 0),
            "nothing held"
        );

        let s = snap(
            vec![gang],
            vec![agent("a", 1, 8), agent("b", 1, 8), agent("c", 1, 8)],
        );
        let p = schedule(&cfg, &s, &mut GroupState::default());
        let Outcome::Placed { agent, subs } = &p.decisions[0].outcome else {
            panic!("{:?}", p.decisions[0].outcome);
        };
        let mut all = vec![agent.clone()];
        all.extend(subs.iter().cloned());
        all.sort();
        assert_eq!(all, vec!["a", "b", "c"]);
    }

    #[test]
    fn fairshare_starts_the_light_user_before_the_heavy_one() {
        use crate::fairshare::{Account, Input, Policy, ShareTree, Shares};
        let mut cfg = GroupConfig::new("default");
        cfg.sequencer = Sequencer::FairShare;
        let acct = |u: &str| Account::new("default", "default", u);
        // Room for one 2-core session; the heavy user submitted first.
        let mut heavy = w("heavy", 60, 2);
        heavy.account = Some(acct("heavy"));
        let mut light = w("light", 10, 2);
        light.account = Some(acct("light"));
        let mut s = snap(vec![heavy.clone(), light.clone()], vec![agent("a", 2, 8)]);
        let tree = ShareTree::build(
            [(acct("heavy"), 1.0e6), (acct("light"), 1.0e3)],
            &Shares::default(),
        );
        s.fairshare = Some(Input {
            tree: std::sync::Arc::new(tree),
            policy: Policy::default(),
        });
        let p = schedule(&cfg, &s, &mut GroupState::default());
        assert_eq!(p.decisions[0].id, light.id);
        assert_eq!(kinds(&p), vec!["placed", "no-available-instances"]);
        let waiting = &p.decisions[1];
        let f = waiting.factors.as_ref().expect("factors");
        assert!(f.fairshare < p.decisions[0].factors.as_ref().unwrap().fairshare);
        let SubStep { message, .. } = &waiting.steps[0];
        assert!(message.contains("fair-share factor"), "{message}");

        // The same queue under FIFO starts the heavy user's (older) session.
        cfg.sequencer = Sequencer::Fifo;
        let p = schedule(&cfg, &s, &mut GroupState::default());
        assert_eq!(p.decisions[0].id, heavy.id);
        assert!(p.decisions[0].factors.is_none());
    }
}

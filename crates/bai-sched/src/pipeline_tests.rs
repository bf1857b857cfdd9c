//! Unit tests of one scheduling pass ([`super`]).

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
        max_runtime: None,
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

fn preemptible(agent: &str, cpu: u64, priority: i64) -> crate::preempt::Candidate {
    crate::preempt::Candidate {
        id: Uuid::new_v4(),
        held: vec![(agent.into(), slots(cpu, 1))],
        priority,
        factor: None,
        running_since: Utc::now() - Duration::hours(1),
    }
}

#[test]
fn the_head_preempts_and_keeps_the_freed_room_for_itself() {
    let mut cfg = GroupConfig::new("default");
    cfg.preemption.mode = crate::preempt::Mode::Priority;
    // A full 4-core agent: a low-priority 3-core session and a 1-core one of priority 90.
    let mut a = agent("a", 4, 16);
    a.used = slots(4, 2);
    let low = preemptible("a", 3, 0);
    let high = preemptible("a", 1, 90);
    let mut urgent = w("u", 10, 3);
    urgent.priority = 50;
    // A 1-core session without a known end arrives behind it.
    let small = w("s", 5, 1);
    let mut s = snap(vec![urgent.clone(), small], vec![a]);
    s.preemptible = vec![low.clone(), high];
    let mut state = GroupState::default();
    let p = schedule(&cfg, &s, &mut state);
    assert_eq!(p.preemptions.len(), 1);
    assert_eq!(p.preemptions[0].victims, vec![low.id]);
    assert_eq!(p.preemptions[0].preemptor, urgent.id);
    // The head waits with a reservation of the freed agent; nothing else takes it.
    assert_eq!(kinds(&p)[0], "no-available-instances");
    assert!(
        p.decisions[0]
            .steps
            .iter()
            .any(|st| st.step == "preemption" && st.message.contains("agent a")),
        "{:?}",
        p.decisions[0].steps
    );
    assert_eq!(state.head, Some(urgent.id));
    assert_eq!(
        p.decisions[0].estimated_start,
        Some(p.preemptions[0].ends_by)
    );

    // Next pass, its victim still ending: no second round of victims.
    s.preempting.insert(urgent.id);
    let p = schedule(&cfg, &s, &mut state);
    assert!(p.preemptions.is_empty());

    // Off: the same pass preempts nothing.
    cfg.preemption.mode = crate::preempt::Mode::Off;
    s.preempting.clear();
    let p = schedule(&cfg, &s, &mut GroupState::default());
    assert!(p.preemptions.is_empty());
}

#[test]
fn a_requeued_victim_waits_until_its_preemptor_started() {
    let cfg = GroupConfig::new("default");
    let victim = w("v", 100, 1);
    let mut s = snap(vec![victim.clone()], vec![agent("a", 4, 16)]);
    let preemptor = Uuid::new_v4();
    s.requeued_behind.insert(victim.id, preemptor);
    let p = schedule(&cfg, &s, &mut GroupState::default());
    assert_eq!(kinds(&p), vec!["preempted-waits"]);
    s.requeued_behind.clear();
    let p = schedule(&cfg, &s, &mut GroupState::default());
    assert_eq!(kinds(&p), vec!["placed"]);
}

#[test]
fn in_a_preempting_group_an_urgent_arrival_takes_the_head_from_a_reserved_one() {
    let mut cfg = GroupConfig::new("default");
    cfg.preemption.mode = crate::preempt::Mode::Priority;
    let mut a = agent("a", 4, 16);
    a.used = slots(4, 2);
    let low = preemptible("a", 4, 10);
    // A 4-core batch session waits with a reservation (the running one ends in an hour).
    let mut waiting = w("b", 100, 4);
    waiting.max_runtime = Some(Duration::hours(1));
    let mut s = snap(vec![waiting.clone()], vec![a]);
    s.running.push(crate::types::RunningSession {
        owner: "x".into(),
        agent: "a".into(),
        slots: slots(4, 2),
        ends_by: Some(Utc::now() + Duration::hours(1)),
    });
    s.preemptible = vec![low];
    let mut state = GroupState::default();
    let p = schedule(&cfg, &s, &mut state);
    assert_eq!(state.head, Some(waiting.id));
    assert!(
        p.preemptions.is_empty(),
        "the same priority preempts no one"
    );
    // An urgent session arrives: it is the head now and preempts.
    let mut urgent = w("u", 1, 4);
    urgent.priority = 80;
    s.pending.push(urgent.clone());
    let p = schedule(&cfg, &s, &mut state);
    assert_eq!(p.preemptions.len(), 1, "{:?}", kinds(&p));
    assert_eq!(p.preemptions[0].preemptor, urgent.id);
    assert_eq!(state.head, Some(urgent.id));
}

#[test]
fn a_multi_node_head_preempts_on_two_agents_and_keeps_both_for_itself() {
    let mut cfg = GroupConfig::new("default");
    cfg.preemption.mode = crate::preempt::Mode::Priority;
    // Two full 4-core agents, each running a low-priority 4-core session.
    let full = |id: &str| {
        let mut a = agent(id, 4, 16);
        a.used = slots(4, 1);
        a
    };
    let (low_a, low_b) = (preemptible("a", 4, 0), preemptible("b", 4, 0));
    // Two kernels of 4 cores; a 1-core session without a known end behind it.
    let mut urgent = w("u", 10, 8);
    urgent.kernels = 2;
    urgent.priority = 50;
    let small = w("s", 5, 1);
    let mut s = snap(
        vec![urgent.clone(), small.clone()],
        vec![full("a"), full("b")],
    );
    s.preemptible = vec![low_a.clone(), low_b.clone()];
    let mut state = GroupState::default();
    let p = schedule(&cfg, &s, &mut state);
    assert_eq!(p.preemptions.len(), 1, "{:?}", kinds(&p));
    let mut victims = p.preemptions[0].victims.clone();
    victims.sort();
    let mut both = vec![low_a.id, low_b.id];
    both.sort();
    assert_eq!(victims, both);
    assert!(
        p.decisions[0]
            .steps
            .iter()
            .any(|st| st.step == "preemption" && st.message.contains("agents a, b")),
        "{:?}",
        p.decisions[0].steps
    );
    assert_eq!(state.head, Some(urgent.id));

    // Once the victims have ended both agents are free: the head goes first and spreads;
    // a requeued victim waits for it even with room left beside.
    let mut s = snap(
        vec![urgent.clone(), w("v", 100, 1), small],
        vec![agent("a", 5, 16), agent("b", 4, 16)],
    );
    let requeued = s.pending[1].id;
    s.requeued_behind.insert(requeued, urgent.id);
    let p = schedule(&cfg, &s, &mut state);
    assert_eq!(
        kinds(&p),
        vec!["placed", "preempted-waits", "placed"],
        "{:?}",
        p.decisions
    );
    let Outcome::Placed { agent, subs } = &p.decisions[0].outcome else {
        unreachable!()
    };
    let mut on = vec![agent.clone(), subs[0].clone()];
    on.sort();
    assert_eq!(on, vec!["a", "b"]);
}

#[test]
fn the_freed_room_on_every_agent_of_a_multi_node_head_is_reserved() {
    let mut cfg = GroupConfig::new("default");
    cfg.preemption.mode = crate::preempt::Mode::Priority;
    // a: 4 of 6 cores used, 2 by a low session (2 free); b: a low 4-core one on 4 of 4.
    let mut a = agent("a", 6, 16);
    a.used = slots(4, 1);
    let mut b = agent("b", 4, 16);
    b.used = slots(4, 1);
    let mut urgent = w("u", 10, 8);
    urgent.kernels = 2;
    urgent.priority = 50;
    // Behind it, a 2-core session without a known end: it fits on a now, but in the room
    // the head needs there once a's victim has ended.
    let two = w("two", 5, 2);
    let mut s = snap(vec![urgent.clone(), two], vec![a, b]);
    s.preemptible = vec![preemptible("a", 2, 0), preemptible("b", 4, 0)];
    let p = schedule(&cfg, &s, &mut GroupState::default());
    assert_eq!(p.preemptions.len(), 1);
    let mut on = p.preemptions[0].placement.clone();
    on.sort();
    assert_eq!(on, vec![("a".to_string(), 1), ("b".to_string(), 1)]);
    assert_eq!(
        kinds(&p),
        vec!["no-available-instances", "held"],
        "{:?}",
        p.decisions
    );
}

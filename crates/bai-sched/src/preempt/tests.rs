//! Unit tests of the victim choice ([`super`]).

use super::*;
use chrono::Duration;

fn gpus(n: u64) -> ResourceSlots {
    ResourceSlots {
        cpu_milli: n * 1000,
        mem: n << 30,
        accel: [("cuda.device".to_string(), n * 1000)].into(),
    }
}

fn agent(id: &str, cap: u64, used: u64) -> AgentState {
    AgentState {
        id: id.into(),
        capacity: gpus(cap),
        used: gpus(used),
        schedulable: true,
    }
}

fn head(n: u64, priority: i64) -> Workload {
    Workload {
        id: Uuid::new_v4(),
        owner: "urgent".into(),
        priority,
        enqueued_at: Utc::now(),
        slots: gpus(n),
        kernels: 1,
        starts_at: None,
        designated_agent: None,
        eligible: None,
        dependencies: vec![],
        account: None,
        max_runtime: None,
    }
}

fn victim(agent: &str, n: u64, priority: i64, ran_min: i64) -> Candidate {
    Candidate {
        id: Uuid::new_v4(),
        held: vec![(agent.into(), gpus(n))],
        priority,
        factor: None,
        running_since: Utc::now() - Duration::minutes(ran_min),
    }
}

fn cfg(mode: Mode) -> Config {
    Config {
        mode,
        grace: Duration::seconds(30),
        min_runtime: Duration::minutes(10),
    }
}

fn cost(s: &ResourceSlots) -> f64 {
    crate::fairshare::SlotWeights::default().rate(s)
}

fn run(c: &Config, h: &Workload, agents: &[AgentState], cands: &[Candidate]) -> Option<Preemption> {
    plan(c, h, None, agents, cands, cost, Utc::now())
}

#[test]
fn off_never_preempts() {
    let a = [agent("a", 8, 8)];
    let v = [victim("a", 8, 0, 60)];
    assert_eq!(run(&cfg(Mode::Off), &head(4, 50), &a, &v), None);
}

#[test]
fn the_fewest_then_the_cheapest_victims_are_chosen() {
    let a = [agent("a", 8, 8)];
    // 4 GPUs are needed: one 4-GPU session beats two 2-GPU ones; of two 4-GPU sessions
    // with one free GPU beside, ... the 8-GPU one is not needed.
    let small1 = victim("a", 2, 0, 60);
    let small2 = victim("a", 2, 0, 60);
    let four = victim("a", 4, 0, 60);
    let p = run(
        &cfg(Mode::Priority),
        &head(4, 50),
        &a,
        &[small1.clone(), four.clone(), small2.clone()],
    )
    .expect("a plan");
    assert_eq!(p.victims, vec![four.id]);
    assert_eq!(p.placement, vec![("a".to_string(), 1)]);
    // Needing 2: one 2-GPU session, not the 4-GPU one (cheaper at the same count).
    let p = run(
        &cfg(Mode::Priority),
        &head(2, 50),
        &a,
        &[four.clone(), small1.clone()],
    )
    .expect("a plan");
    assert_eq!(p.victims, vec![small1.id]);
    // What is free already counts: with 1 free GPU, a 3-GPU head needs one 2-GPU session.
    let b = [agent("b", 8, 7)];
    let s = victim("b", 2, 0, 60);
    let big = victim("b", 5, 0, 60);
    let p = run(&cfg(Mode::Priority), &head(3, 50), &b, &[big, s.clone()]).expect("a plan");
    assert_eq!(p.victims, vec![s.id]);
}

#[test]
fn only_lower_priorities_that_ran_their_minimum_are_victims() {
    let a = [agent("a", 8, 8)];
    let same = victim("a", 8, 50, 60);
    let young = victim("a", 8, 0, 1);
    assert_eq!(
        run(&cfg(Mode::Priority), &head(4, 50), &a, &[same, young]),
        None
    );
    let old = victim("a", 8, 0, 11);
    let p = run(
        &cfg(Mode::Priority),
        &head(4, 50),
        &a,
        std::slice::from_ref(&old),
    )
    .expect("a plan");
    assert_eq!(p.victims, vec![old.id]);
    assert_eq!(p.why, "priority 50 over 0");
}

#[test]
fn nobody_is_preempted_for_a_session_that_would_still_not_fit() {
    let a = [agent("a", 8, 8)];
    // Only 6 of the 8 used GPUs belong to allowed victims: a 7-GPU head would not fit.
    let v = victim("a", 6, 0, 60);
    let other = victim("a", 2, 90, 60);
    assert_eq!(
        run(&cfg(Mode::Priority), &head(7, 50), &a, &[v.clone(), other]),
        None
    );
    // Nor for one larger than any agent.
    assert_eq!(run(&cfg(Mode::Priority), &head(9, 50), &a, &[v]), None);
    // Nor for one that fits already (the pass places it).
    let free = [agent("a", 8, 2)];
    let w = victim("a", 2, 0, 60);
    assert_eq!(run(&cfg(Mode::Priority), &head(4, 50), &free, &[w]), None);
}

#[test]
fn the_agent_needing_the_fewest_victims_is_chosen() {
    let a = [agent("a", 8, 8), agent("b", 8, 8)];
    let on_a = [victim("a", 2, 0, 60), victim("a", 2, 0, 60)];
    let on_b = victim("b", 4, 0, 60);
    let mut all = on_a.to_vec();
    all.push(on_b.clone());
    let p = run(&cfg(Mode::Priority), &head(4, 50), &a, &all).expect("a plan");
    assert_eq!(
        (p.placement[0].0.as_str(), p.victims.clone()),
        ("b", vec![on_b.id])
    );
    // An agent the head may not go to is never freed.
    let mut h = head(4, 50);
    h.designated_agent = Some("a".into());
    let p = run(&cfg(Mode::Priority), &h, &a, &all).expect("a plan");
    assert_eq!(p.placement, vec![("a".to_string(), 1)]);
    assert_eq!(p.victims.len(), 2);
}

#[test]
fn fair_share_takes_only_from_accounts_far_over_their_share() {
    let a = [agent("a", 8, 8)];
    let mut over = victim("a", 4, 90, 60);
    over.factor = Some(0.1);
    let mut near = victim("a", 4, 0, 60);
    near.factor = Some(0.45);
    let c = cfg(Mode::FairShare);
    let h = head(4, 0);
    // The head's account is at its share (0.5): only the one far over (0.1 < 0.25) goes,
    // whatever the priorities.
    let p = plan(
        &c,
        &h,
        Some(0.5),
        &a,
        &[near.clone(), over.clone()],
        cost,
        Utc::now(),
    )
    .expect("a plan");
    assert_eq!(p.victims, vec![over.id]);
    assert!(
        p.why.starts_with("fair-share factor 0.500 over 0.100"),
        "{}",
        p.why
    );
    // A head far over its own share ends no one.
    assert_eq!(
        plan(&c, &h, Some(0.15), &a, &[near, over], cost, Utc::now()),
        None
    );
}

#[test]
fn many_candidates_are_chosen_greedily_but_without_extras() {
    let a = [agent("a", 64, 64)];
    let mut cands: Vec<Candidate> = (0..20).map(|_| victim("a", 2, 0, 60)).collect();
    let big = victim("a", 8, 0, 60);
    cands.push(big.clone());
    let p = run(&cfg(Mode::Priority), &head(8, 50), &a, &cands).expect("a plan");
    assert_eq!(p.victims, vec![big.id]);
    let p = run(&cfg(Mode::Priority), &head(12, 50), &a, &cands).expect("a plan");
    assert_eq!(p.victims.len(), 3, "one 8-GPU and two 2-GPU sessions");
}

fn multi(n_each: u64, kernels: u32, priority: i64) -> Workload {
    let mut h = head(n_each * u64::from(kernels), priority);
    h.kernels = kernels;
    h
}

/// A victim with kernels on several agents (`n` GPUs on each).
fn spanning(agents: &[&str], n: u64, priority: i64, ran_min: i64) -> Candidate {
    let mut c = victim(agents[0], n, priority, ran_min);
    c.held = agents.iter().map(|a| (a.to_string(), gpus(n))).collect();
    c
}

fn sorted(mut ids: Vec<Uuid>) -> Vec<Uuid> {
    ids.sort();
    ids
}

#[test]
fn a_multi_node_head_preempts_on_as_many_agents_as_its_kernels_need() {
    // Two full agents, one low-priority 8-GPU session on each, a third agent full of
    // work of a higher priority: two kernels of 8 take both low sessions.
    let a = [agent("a", 8, 8), agent("b", 8, 8), agent("c", 8, 8)];
    let (va, vb, high) = (
        victim("a", 8, 0, 60),
        victim("b", 8, 0, 60),
        victim("c", 8, 90, 60),
    );
    let p = run(
        &cfg(Mode::Priority),
        &multi(8, 2, 50),
        &a,
        &[va.clone(), high, vb.clone()],
    )
    .expect("a plan");
    assert_eq!(sorted(p.victims.clone()), sorted(vec![va.id, vb.id]));
    let mut on = p.placement.clone();
    on.sort();
    assert_eq!(on, vec![("a".to_string(), 1), ("b".to_string(), 1)]);
    assert_eq!(p.agents(), "agents a, b");
    // Room already free on one agent counts: a (4 free) takes one kernel of 4 with no
    // victim; b's victim makes room for the other.
    let a = [agent("a", 8, 4), agent("b", 8, 8)];
    let vb = victim("b", 4, 0, 60);
    let p = run(
        &cfg(Mode::Priority),
        &multi(4, 2, 50),
        &a,
        std::slice::from_ref(&vb),
    )
    .expect("a plan");
    assert_eq!(p.victims, vec![vb.id]);
    let mut on = p.placement.clone();
    on.sort();
    assert_eq!(on, vec![("a".to_string(), 1), ("b".to_string(), 1)]);
    // Two kernels may share a freed agent.
    let a = [agent("a", 8, 8)];
    let big = victim("a", 8, 0, 60);
    let p = run(
        &cfg(Mode::Priority),
        &multi(4, 2, 50),
        &a,
        std::slice::from_ref(&big),
    )
    .expect("a plan");
    assert_eq!(p.placement, vec![("a".to_string(), 2)]);
}

#[test]
fn a_multi_node_head_takes_the_fewest_then_cheapest_then_latest_started_victims() {
    // Kernels of 4 on three full agents (beside work of a higher priority): a has one
    // 4-GPU victim, b one 6-GPU victim, c two 2-GPU victims. Fewest: a's and b's (two), not
    // a's and c's (three, though cheaper).
    let a = [agent("a", 8, 8), agent("b", 8, 8), agent("c", 8, 8)];
    let on_a = victim("a", 4, 0, 60);
    let on_b = victim("b", 6, 0, 60);
    let c1 = victim("c", 2, 0, 60);
    let c2 = victim("c", 2, 0, 60);
    let mut all = vec![
        on_a.clone(),
        on_b.clone(),
        c1,
        c2,
        victim("a", 4, 90, 60),
        victim("b", 2, 90, 60),
        victim("c", 4, 90, 60),
    ];
    let p = run(&cfg(Mode::Priority), &multi(4, 2, 50), &a, &all).expect("a plan");
    assert_eq!(sorted(p.victims.clone()), sorted(vec![on_a.id, on_b.id]));
    // Cheapest at the same count: d's 4-GPU victim instead of b's 6-GPU one.
    let a = [a[0].clone(), a[1].clone(), a[2].clone(), agent("d", 8, 8)];
    let on_d = victim("d", 4, 0, 60);
    all.push(on_d.clone());
    all.push(victim("d", 4, 90, 60));
    let p = run(&cfg(Mode::Priority), &multi(4, 2, 50), &a, &all).expect("a plan");
    assert_eq!(sorted(p.victims.clone()), sorted(vec![on_a.id, on_d.id]));
    // At the same count and cost, the latest started (c's, 20 minutes ago, over b's, an
    // hour ago).
    let a = [agent("a", 8, 8), agent("b", 8, 8), agent("c", 8, 8)];
    let (old, older, young) = (
        victim("a", 8, 0, 30),
        victim("b", 8, 0, 60),
        victim("c", 8, 0, 20),
    );
    let p = run(
        &cfg(Mode::Priority),
        &multi(8, 2, 50),
        &a,
        &[older.clone(), old.clone(), young.clone()],
    )
    .expect("a plan");
    assert_eq!(sorted(p.victims.clone()), sorted(vec![old.id, young.id]));
}

#[test]
fn nobody_is_preempted_for_a_multi_node_head_that_would_still_not_start() {
    // One agent's victim would free room for one kernel of two: the other agent is full of
    // higher priorities. Nobody is preempted.
    let a = [agent("a", 8, 8), agent("b", 8, 8)];
    let low = victim("a", 8, 0, 60);
    let high = victim("b", 8, 90, 60);
    assert_eq!(
        run(
            &cfg(Mode::Priority),
            &multi(8, 2, 50),
            &a,
            &[low.clone(), high]
        ),
        None
    );
    // Nor when a kernel is larger than any agent.
    assert_eq!(
        run(
            &cfg(Mode::Priority),
            &multi(9, 2, 50),
            &a,
            std::slice::from_ref(&low)
        ),
        None
    );
    // Nor on agents it may not go to: b's victim is on an agent outside its eligible ones.
    let lb = victim("b", 8, 0, 60);
    let mut h = multi(8, 2, 50);
    h.eligible = Some(crate::types::Eligible {
        agents: std::sync::Arc::new(["a".to_string()].into()),
        why: String::new(),
        preferred: None,
    });
    assert_eq!(
        run(&cfg(Mode::Priority), &h, &a, &[low.clone(), lb.clone()]),
        None
    );
    // Nor when it fits already (the pass places it).
    let free = [agent("a", 8, 0), agent("b", 8, 8)];
    assert_eq!(
        run(&cfg(Mode::Priority), &multi(4, 2, 50), &free, &[lb]),
        None
    );
}

#[test]
fn main1_of_a_multi_node_head_goes_on_its_selected_agent() {
    // b's victim started first (the most work lost): without a selected agent a's and c's
    // go; with b selected for main1, b's goes and one other.
    let a = [agent("a", 8, 8), agent("b", 8, 8), agent("c", 8, 8)];
    let (va, vb, vc) = (
        victim("a", 8, 0, 60),
        victim("b", 8, 0, 90),
        victim("c", 8, 0, 60),
    );
    let all = [va.clone(), vb.clone(), vc.clone()];
    let p = run(&cfg(Mode::Priority), &multi(8, 2, 50), &a, &all).expect("a plan");
    assert_eq!(sorted(p.victims.clone()), sorted(vec![va.id, vc.id]));
    let mut h = multi(8, 2, 50);
    h.designated_agent = Some("b".into());
    let p = run(&cfg(Mode::Priority), &h, &a, &all).expect("a plan");
    assert!(p.victims.contains(&vb.id), "{p:?}");
    assert_eq!(p.victims.len(), 2, "{p:?}");
    assert_eq!(p.placement[0], ("b".to_string(), 1), "main1 first: {p:?}");
}

#[test]
fn a_multi_node_victim_frees_room_on_each_of_its_agents() {
    // One low-priority session of two kernels (4 GPUs on a and on b) beside higher
    // priorities: ending it alone makes room for two kernels of 4, one on each agent.
    let a = [agent("a", 8, 8), agent("b", 8, 8)];
    let both = spanning(&["a", "b"], 4, 0, 60);
    let keep = [victim("a", 4, 90, 60), victim("b", 4, 90, 60)];
    let mut all = keep.to_vec();
    all.push(both.clone());
    let p = run(&cfg(Mode::Priority), &multi(4, 2, 50), &a, &all).expect("a plan");
    assert_eq!(p.victims, vec![both.id]);
    let mut on = p.placement.clone();
    on.sort();
    assert_eq!(on, vec![("a".to_string(), 1), ("b".to_string(), 1)]);
    // For a head of one kernel only its part on that agent makes room, but all of it is
    // the cost: a 4-GPU session on b (started earlier) goes rather than the spanning one.
    let alone = victim("b", 4, 0, 90);
    let p = run(
        &cfg(Mode::Priority),
        &head(4, 50),
        &a,
        &[both.clone(), alone.clone(), keep[0].clone()],
    )
    .expect("a plan");
    assert_eq!(p.victims, vec![alone.id]);
    assert_eq!(p.placement, vec![("b".to_string(), 1)]);
    // Its part on one agent is not all of it: an 8-GPU head on a needs the spanning one and
    // the 4 GPUs beside it there.
    let p = run(
        &cfg(Mode::Priority),
        &head(8, 50),
        &a[..1],
        &[both.clone(), victim("a", 4, 0, 60)],
    )
    .expect("a plan");
    assert_eq!(p.victims.len(), 2);
    assert!(p.victims.contains(&both.id));
}

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
        agent: agent.into(),
        slots: gpus(n),
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
    assert_eq!(p.agent, "a");
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
    assert_eq!((p.agent.as_str(), p.victims.clone()), ("b", vec![on_b.id]));
    // An agent the head may not go to is never freed.
    let mut h = head(4, 50);
    h.designated_agent = Some("a".into());
    let p = run(&cfg(Mode::Priority), &h, &a, &all).expect("a plan");
    assert_eq!(p.agent, "a");
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

#[test]
fn multi_node_heads_preempt_no_one() {
    let a = [agent("a", 8, 8)];
    let mut h = head(4, 50);
    h.kernels = 2;
    assert_eq!(
        run(&cfg(Mode::Priority), &h, &a, &[victim("a", 8, 0, 60)]),
        None
    );
}

//! Placing a session behind a reserved head of the queue ([`crate::reserve`]).
//!
//! A session that ends before the reservation is placed as usual. One that outlasts it (or
//! whose end is unknown) is placed against a *shadowed* view of the group: on each reserved
//! agent, free slots beyond the reservation's spare are hidden while the selector looks, so
//! it can only go on agents the reservation does not need or into the spare; the spare it
//! takes is then used up.

use crate::gang::{self, Unplaced};
use crate::reserve::{Backfill, Reservation};
use crate::select::{AgentIndex, Strategy};
use crate::types::{AgentState, Workload};
use bai_core::resources::ResourceSlots;
use chrono::{DateTime, Utc};

/// The slots hidden on reserved agents while a session that outlasts the reservation is
/// placed: (agent index, hidden slots).
pub struct Shadow(Vec<(usize, ResourceSlots)>);

/// Component-wise the smaller of two slot sets.
fn min(a: &ResourceSlots, b: &ResourceSlots) -> ResourceSlots {
    let mut accel = a.accel.clone();
    for (k, v) in accel.iter_mut() {
        *v = (*v).min(b.accel.get(k).copied().unwrap_or(0));
    }
    ResourceSlots {
        cpu_milli: a.cpu_milli.min(b.cpu_milli),
        mem: a.mem.min(b.mem),
        accel,
    }
}

/// Hides, on each reserved agent, what its spare does not allow.
pub fn shadow(res: &Reservation, agents: &mut [AgentState], index: &mut AgentIndex) -> Shadow {
    let mut hidden = Vec::with_capacity(res.agents.len());
    for r in &res.agents {
        let i = r.index;
        if agents.get(i).is_none_or(|a| a.id != r.agent) {
            continue;
        }
        let free = agents[i].free();
        let hide = free.checked_sub(&min(&free, &r.spare));
        gang::allocate(agents, index, i, &hide);
        hidden.push((i, hide));
    }
    Shadow(hidden)
}

/// Shows again what [`shadow`] hid.
pub fn unshadow(s: Shadow, agents: &mut [AgentState], index: &mut AgentIndex) {
    for (i, hide) in s.0 {
        gang::release(agents, index, i, &hide);
    }
}

/// What placing `w` behind the reservation came to.
pub enum Placement {
    /// Placed (agent indexes, main1 first); `how` when a reservation was there to respect.
    Placed(Vec<usize>, Option<Backfill>),
    /// It would fit now, but only in the head's room, and it would still be there at the
    /// reservation time: the words of why it is held.
    WouldDelay { head: uuid::Uuid, message: String },
    /// No room (or no agent) for it anyway.
    Unplaced(Unplaced),
}

/// Places `w` (ending by `ends`, None: unknown) without delaying `res`; records what it
/// takes of the reserved agents' spare.
pub fn place(
    strategy: Strategy,
    agents: &mut [AgentState],
    index: &mut AgentIndex,
    w: &Workload,
    rr: &mut u64,
    res: Option<&mut Reservation>,
    ends: Option<DateTime<Utc>>,
) -> Placement {
    let ends_before = match (&res, ends) {
        (Some(r), Some(e)) if !r.outlasted_by(Some(e)) => Some(e),
        _ => None,
    };
    let Some(res) = res.filter(|r| r.outlasted_by(ends)) else {
        // No reservation, or it ends before it: as usual.
        return match gang::place(strategy, agents, index, w, rr) {
            Ok(p) => Placement::Placed(p, ends_before.map(Backfill::EndsBefore)),
            Err(u) => Placement::Unplaced(u),
        };
    };
    let s = shadow(res, agents, index);
    let tried = gang::place(strategy, agents, index, w, rr);
    unshadow(s, agents, index);
    match tried {
        Ok(placed) => {
            let want = gang::per_kernel(w);
            let mut on_reserved = false;
            for &i in &placed {
                if res.room_on(&agents[i].id).is_some() {
                    on_reserved = true;
                    res.take(&agents[i].id, &want);
                }
            }
            let how = if on_reserved {
                Backfill::WithinSpare
            } else {
                Backfill::Elsewhere
            };
            Placement::Placed(placed, Some(how))
        }
        Err(_) => {
            // Would it fit in the head's room? Look without keeping it.
            let before = *rr;
            let fits = gang::place(strategy, agents, index, w, rr);
            *rr = before;
            match fits {
                Ok(placed) => {
                    let want = gang::per_kernel(w);
                    for i in placed {
                        gang::release(agents, index, i, &want);
                    }
                    let end = match ends {
                        Some(e) => format!("it may run until {}", crate::reserve::when(e)),
                        None => "its end is not known".to_string(),
                    };
                    Placement::WouldDelay {
                        head: res.head,
                        message: format!(
                            "it would take room reserved for session {} ({}) and {end}",
                            res.head,
                            res.describe()
                        ),
                    }
                }
                // No room even there: judged against the agents as they are.
                Err(u) => Placement::Unplaced(u),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::pipeline::{GroupState, Outcome, Plan, schedule};
    use crate::types::{AgentState, GroupConfig, RunningSession, Snapshot, Workload};
    use bai_core::resources::ResourceSlots;
    use chrono::{DateTime, Duration, Utc};
    use uuid::Uuid;

    fn gpus(n: u64) -> ResourceSlots {
        ResourceSlots {
            cpu_milli: n * 1000,
            mem: n << 30,
            accel: [("cuda.device".to_string(), n * 1000)].into(),
        }
    }

    fn agent(id: &str, used: u64) -> AgentState {
        AgentState {
            id: id.into(),
            capacity: gpus(8),
            used: gpus(used),
            schedulable: true,
        }
    }

    fn run(agent: &str, n: u64, ends: Option<DateTime<Utc>>) -> RunningSession {
        RunningSession {
            owner: "other".into(),
            agent: agent.into(),
            slots: gpus(n),
            ends_by: ends,
        }
    }

    /// `n` GPUs, queued `age_s` seconds before `now`, running at most `max_min` minutes.
    fn w(now: DateTime<Utc>, age_s: i64, n: u64, max_min: Option<i64>) -> Workload {
        Workload {
            id: Uuid::new_v4(),
            owner: format!("u{age_s}"),
            priority: 10,
            enqueued_at: now - Duration::seconds(age_s),
            slots: gpus(n),
            kernels: 1,
            starts_at: None,
            designated_agent: None,
            eligible: None,
            dependencies: vec![],
            account: None,
            max_runtime: max_min.map(Duration::minutes),
        }
    }

    fn snap(
        now: DateTime<Utc>,
        pending: Vec<Workload>,
        agents: Vec<AgentState>,
        running: Vec<RunningSession>,
    ) -> Snapshot {
        Snapshot {
            now,
            pending,
            agents,
            running,
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

    fn step<'a>(p: &'a Plan, k: usize, name: &str) -> &'a str {
        p.decisions[k]
            .steps
            .iter()
            .find(|s| s.step == name)
            .map(|s| s.message.as_str())
            .unwrap_or("")
    }

    #[test]
    fn only_sessions_ending_before_the_reservation_take_the_heads_room() {
        let cfg = GroupConfig::new("gpu");
        let now = Utc::now();
        let t = now + Duration::minutes(60);
        // One 8-GPU agent, 4 held until T: the 8-GPU head is reserved there from T.
        let agents = vec![agent("a", 4)];
        let running = vec![run("a", 4, Some(t))];
        let head = w(now, 600, 8, Some(600));
        let long = w(now, 500, 4, Some(120));
        let unknown = w(now, 400, 4, None);
        let short = w(now, 300, 4, Some(30));
        let s = snap(
            now,
            vec![head.clone(), long, unknown, short],
            agents,
            running,
        );
        let p = schedule(&cfg, &s, &mut GroupState::default());
        assert_eq!(
            kinds(&p),
            vec!["no-available-instances", "held", "held", "placed"]
        );
        let d = &p.decisions[0];
        assert_eq!(d.estimated_start, Some(t));
        let Outcome::Wait { message, .. } = &d.outcome else {
            panic!("{:?}", d.outcome);
        };
        assert!(message.contains("reserved agent a from "), "{message}");
        assert!(step(&p, 0, "reservation").starts_with("reserved agent a from"));
        let Outcome::Held { behind, message } = &p.decisions[2].outcome else {
            panic!("{:?}", p.decisions[2].outcome);
        };
        assert_eq!(*behind, head.id);
        assert!(message.contains("its end is not known"), "{message}");
        let alloc = step(&p, 3, "allocation");
        assert!(alloc.contains("backfilled ahead of session"), "{alloc}");
        assert!(alloc.contains("before then"), "{alloc}");
    }

    #[test]
    fn a_session_with_no_known_end_may_start_where_the_head_does_not_go() {
        let cfg = GroupConfig::new("gpu");
        let now = Utc::now();
        // a: full until +60 min; b: 4 of 8 held with no known end, so the head (8) can
        // only go on a. The 4-GPU session with no end goes on b.
        let agents = vec![agent("a", 8), agent("b", 4)];
        let running = vec![
            run("a", 8, Some(now + Duration::minutes(60))),
            run("b", 4, None),
        ];
        let s = snap(
            now,
            vec![w(now, 600, 8, None), w(now, 300, 4, None)],
            agents,
            running,
        );
        let p = schedule(&cfg, &s, &mut GroupState::default());
        assert_eq!(kinds(&p), vec!["no-available-instances", "placed"]);
        assert_eq!(p.placed().map(|(_, a)| a).collect::<Vec<_>>(), vec!["b"]);
        let alloc = step(&p, 1, "allocation");
        assert!(alloc.contains("does not need"), "{alloc}");
    }

    #[test]
    fn a_long_session_may_use_what_a_reserved_agent_has_to_spare() {
        let cfg = GroupConfig::new("gpu");
        let now = Utc::now();
        // a: 6 of 8 held until +60 min. The 4-GPU head is reserved there; at T 8 are free,
        // so 4 are spare: two 1-GPU sessions with no known end fit (2 of the spare left).
        let agents = vec![agent("a", 6)];
        let running = vec![run("a", 6, Some(now + Duration::minutes(60)))];
        let s = snap(
            now,
            vec![
                w(now, 600, 4, None),
                w(now, 300, 1, None),
                w(now, 200, 1, None),
            ],
            agents.clone(),
            running.clone(),
        );
        let p = schedule(&cfg, &s, &mut GroupState::default());
        assert_eq!(
            kinds(&p),
            vec!["no-available-instances", "placed", "placed"]
        );
        assert!(step(&p, 1, "allocation").contains("keep enough free"));
        // With 2 of 8 held for good, 6 are free at T: 2 spare for a 4-GPU head (a 2-GPU
        // session with no known end starts), 1 for a 5-GPU head (it is held).
        let mut agents = agents;
        agents[0].used = gpus(6);
        let running = vec![
            run("a", 4, Some(now + Duration::minutes(60))),
            run("a", 2, None),
        ];
        let s = snap(
            now,
            vec![w(now, 600, 4, None), w(now, 300, 2, None)],
            agents,
            running,
        );
        let p = schedule(&cfg, &s, &mut GroupState::default());
        assert_eq!(kinds(&p), vec!["no-available-instances", "placed"]);
        let s = snap(
            now,
            vec![w(now, 600, 5, None), w(now, 300, 2, None)],
            s.agents.clone(),
            s.running.clone(),
        );
        let p = schedule(&cfg, &s, &mut GroupState::default());
        assert_eq!(kinds(&p), vec!["no-available-instances", "held"]);
    }

    #[test]
    fn the_head_keeps_its_reservation_when_the_order_changes() {
        let cfg = GroupConfig::new("gpu");
        let now = Utc::now();
        let t = now + Duration::minutes(60);
        let agents = vec![agent("a", 8)];
        let running = vec![run("a", 8, Some(t))];
        let head = w(now, 600, 8, None);
        let mut state = GroupState::default();
        let s = snap(now, vec![head.clone()], agents.clone(), running.clone());
        let p = schedule(&cfg, &s, &mut state);
        assert_eq!(p.decisions[0].estimated_start, Some(t));
        assert_eq!(state.head, Some(head.id));
        // A session of a higher priority band arrives: the head is still tried first and
        // keeps the reservation; the newcomer waits behind it.
        let mut urgent = w(now, 10, 8, None);
        urgent.priority = 20;
        let s = snap(now, vec![head.clone(), urgent.clone()], agents, running);
        let p = schedule(&cfg, &s, &mut state);
        assert_eq!(p.decisions[0].id, head.id);
        assert_eq!(p.decisions[0].position, 1);
        assert!(step(&p, 0, "reservation").starts_with("reserved agent a"));
        assert_eq!(p.decisions[1].id, urgent.id);
        assert_eq!(step(&p, 1, "reservation"), "");
        // Without the kept head, the higher band would have taken the reservation.
        let p = schedule(&cfg, &s, &mut GroupState::default());
        assert_eq!(p.decisions[0].id, urgent.id);
        // At T the head starts.
        let s = snap(t, vec![head.clone(), urgent], vec![agent("a", 0)], vec![]);
        let p = schedule(&cfg, &s, &mut state);
        assert_eq!(
            p.placed().map(|(id, _)| id).collect::<Vec<_>>(),
            vec![head.id]
        );
        assert_eq!(
            state.head, None,
            "no known end: no reservation for the newcomer"
        );
    }

    #[test]
    fn the_head_starts_no_later_than_its_first_reservation() {
        // Three 8-GPU agents, a FIFO queue of mixed sessions with known run limits; each
        // session runs for its limit or less. Passes every 5 minutes and at each end.
        let cfg = GroupConfig::new("gpu");
        let start = Utc::now();
        let mut now = start;
        let mut seed: u64 = 42;
        let mut rand = move |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let mut pending: Vec<Workload> = Vec::new();
        for k in 0..120 {
            let n = [1, 2, 4, 8][rand(4) as usize];
            let limit = 10 + rand(300) as i64;
            let mut x = w(start, -k, n, Some(limit));
            x.owner = format!("u{}", k % 3);
            pending.push(x);
        }
        let mut agents = vec![agent("a", 0), agent("b", 0), agent("c", 0)];
        // (agent, slots, limit end, actual end)
        type Run = (String, ResourceSlots, DateTime<Utc>, DateTime<Utc>);
        let mut running: Vec<Run> = Vec::new();
        let mut first_reservation: std::collections::HashMap<Uuid, DateTime<Utc>> =
            Default::default();
        let mut state = GroupState::default();
        let mut checked = 0;
        for _ in 0..10_000 {
            if pending.is_empty() {
                break;
            }
            // Ends first.
            running.retain(|(a, s, _, end)| {
                if *end <= now {
                    if let Some(ag) = agents.iter_mut().find(|x| x.id == *a) {
                        ag.used = ag.used.checked_sub(s);
                    }
                    false
                } else {
                    true
                }
            });
            let snapshot = snap(
                now,
                pending.clone(),
                agents.clone(),
                running
                    .iter()
                    .map(|(a, s, t, _)| run(a, s.accel["cuda.device"] / 1000, Some(*t)))
                    .collect(),
            );
            let plan = schedule(&cfg, &snapshot, &mut state);
            agents = plan.agents.clone();
            for d in &plan.decisions {
                if d.steps.iter().any(|s| s.step == "reservation") {
                    let t = d.estimated_start.expect("a reserved head has a time");
                    first_reservation.entry(d.id).or_insert(t);
                }
                if let Outcome::Placed { agent, .. } = &d.outcome {
                    let Some(x) = pending.iter().find(|x| x.id == d.id) else {
                        continue;
                    };
                    if let Some(t) = first_reservation.get(&d.id) {
                        assert!(now <= *t, "head {} started {now}, reserved {t}", d.id);
                        checked += 1;
                    }
                    let limit = now + x.max_runtime.unwrap_or_default();
                    // Some end at their limit, some earlier.
                    let actual = if rand(2) == 0 {
                        limit
                    } else {
                        now + Duration::minutes(5 + rand(10) as i64)
                    };
                    running.push((agent.clone(), x.slots.clone(), limit, actual.min(limit)));
                }
            }
            let placed: std::collections::HashSet<Uuid> = plan.placed().map(|(id, _)| id).collect();
            pending.retain(|x| !placed.contains(&x.id));
            let next_end = running.iter().map(|r| r.3).min();
            let tick = now + Duration::minutes(5);
            now = next_end
                .map_or(tick, |e| e.min(tick))
                .max(now + Duration::seconds(1));
        }
        assert!(pending.is_empty(), "{} left", pending.len());
        assert!(checked >= 5, "only {checked} heads checked");
    }
}

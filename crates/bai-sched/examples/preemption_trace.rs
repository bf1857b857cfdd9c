//! Preemption trace (issue 58, bench/preemption.sh): a simulation of the scheduler pass
//! (`bai_sched::pipeline::schedule`) on a simulated clock, not of agents.
//!
//! 4 agents × 8 GPUs kept full of preemptible batch work (priority 10, started with
//! `--requeue`: 1–8 GPUs, 2–12 hours each, `QUEUED` more always waiting). `URGENT` urgent
//! sessions (priority 80, 1–8 GPUs, 10–60 minutes) arrive one every `EVERY_SECS`, each at a
//! pass. The group preempts by priority with a grace of `GRACE_SECS`; a pass runs every
//! `PASS_SECS`. A victim ends when its grace is over (it never ends earlier here) and goes
//! back to the queue with its id, restarting its work from the beginning.
//!
//! Measured: each urgent session's wait from its arrival to its start against the promise
//! (its grace plus one pass); victims against need (a preemption over-takes when one of its
//! victims could have been spared); flaps (a requeued victim started while its preemptor
//! still waits); lost requeued sessions (one that is neither running, waiting nor done at the
//! end). Prints one JSON line and a table.
//!
//! `cargo run --profile release -p bai-sched --example preemption_trace [urgent] [seed]`

use bai_core::resources::ResourceSlots;
use bai_sched::preempt::{Candidate, Mode};
use bai_sched::{
    AgentState, GroupConfig, GroupState, Outcome, RunningSession, Snapshot, Workload, schedule,
};
use chrono::{DateTime, Duration, TimeZone, Utc};
use std::collections::{HashMap, HashSet};
use uuid::Uuid;

const AGENTS: usize = 4;
const GPUS_PER_AGENT: u64 = 8;
const QUEUED: usize = 12;
const PASS_SECS: i64 = 10;
const GRACE_SECS: i64 = 60;
const EVERY_SECS: i64 = 1_800;

/// A deterministic generator (PCG-style LCG).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn between(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
    fn gpus(&mut self) -> u64 {
        [1, 2, 4, 8][(self.next() % 4) as usize]
    }
}

fn gpus(n: u64) -> ResourceSlots {
    ResourceSlots {
        cpu_milli: n * 8_000,
        mem: n * (32 << 30),
        accel: [("cuda.device".to_string(), n * 1000)].into(),
    }
}

/// A session waiting in the queue.
#[derive(Clone)]
struct Waiting {
    id: Uuid,
    gpus: u64,
    urgent: bool,
    run_secs: i64,
    enqueued_at: DateTime<Utc>,
    /// Requeued by a preemption for this session.
    behind: Option<Uuid>,
}

/// A session holding GPUs.
struct Held {
    w: Waiting,
    agent: String,
    started: DateTime<Utc>,
    /// Preempted: its grace ends then.
    grace_ends: Option<DateTime<Utc>>,
}

#[derive(Default)]
struct Figures {
    urgent_started: usize,
    waits: Vec<i64>,
    late: usize,
    preemptions: usize,
    victims: usize,
    victim_gpus: u64,
    needed_gpus: u64,
    over_taken: usize,
    flaps: usize,
    requeued: usize,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let urgent_total: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100);
    let seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(58);
    let mut rng = Rng(seed);
    let start = Utc
        .with_ymd_and_hms(2026, 11, 1, 0, 0, 0)
        .single()
        .unwrap_or_default();
    let mut now = start;
    let mut cfg = GroupConfig::new("sim");
    cfg.preemption.mode = Mode::Priority;
    cfg.preemption.grace = Duration::seconds(GRACE_SECS);
    let mut state = GroupState::default();
    let agent_ids: Vec<String> = (0..AGENTS).map(|i| format!("gpu-{i}")).collect();
    let mut waiting: Vec<Waiting> = Vec::new();
    let mut held: Vec<Held> = Vec::new();
    let mut done: HashSet<Uuid> = HashSet::new();
    let mut ever_requeued: HashSet<Uuid> = HashSet::new();
    let mut arrived: HashMap<Uuid, DateTime<Utc>> = HashMap::new();
    let mut f = Figures::default();
    let mut urgent_sent = 0;
    let background = |rng: &mut Rng, now| Waiting {
        id: Uuid::new_v4(),
        gpus: rng.gpus(),
        urgent: false,
        run_secs: rng.between(2 * 3_600, 12 * 3_600),
        enqueued_at: now,
        behind: None,
    };
    // Warm up for a day so the group is full, then send the urgent sessions.
    let first_urgent = start + Duration::days(1);
    let end_by = first_urgent + Duration::seconds(EVERY_SECS * urgent_total as i64 + 86_400);
    while now < end_by {
        // Ends: work done, or a grace over (the victim goes back to the queue).
        let mut kept = Vec::with_capacity(held.len());
        for h in held.drain(..) {
            if let Some(t) = h.grace_ends {
                if t <= now {
                    let mut w = h.w;
                    w.enqueued_at = now;
                    ever_requeued.insert(w.id);
                    f.requeued += 1;
                    waiting.push(w);
                    continue;
                }
            } else if h.started + Duration::seconds(h.w.run_secs) <= now {
                done.insert(h.w.id);
                continue;
            }
            kept.push(h);
        }
        held = kept;
        // Arrivals: the background queue topped up; an urgent session every EVERY_SECS.
        while waiting.iter().filter(|w| !w.urgent).count() < QUEUED {
            let w = background(&mut rng, now);
            waiting.push(w);
        }
        if urgent_sent < urgent_total
            && now >= first_urgent + Duration::seconds(EVERY_SECS * urgent_sent as i64)
        {
            let w = Waiting {
                id: Uuid::new_v4(),
                gpus: rng.gpus(),
                urgent: true,
                run_secs: rng.between(600, 3_600),
                enqueued_at: now,
                behind: None,
            };
            arrived.insert(w.id, now);
            waiting.push(w);
            urgent_sent += 1;
        }
        // The pass.
        let pending_ids: HashSet<Uuid> = waiting.iter().map(|w| w.id).collect();
        let mut used: HashMap<&str, u64> = HashMap::new();
        for h in &held {
            *used.entry(h.agent.as_str()).or_default() += h.w.gpus;
        }
        let snap = Snapshot {
            now,
            pending: waiting
                .iter()
                .map(|w| Workload {
                    id: w.id,
                    owner: if w.urgent { "urgent" } else { "batch" }.into(),
                    priority: if w.urgent { 80 } else { 10 },
                    enqueued_at: w.enqueued_at,
                    slots: gpus(w.gpus),
                    kernels: 1,
                    starts_at: None,
                    designated_agent: None,
                    eligible: None,
                    dependencies: vec![],
                    account: None,
                    max_runtime: Some(Duration::seconds(w.run_secs)),
                })
                .collect(),
            agents: agent_ids
                .iter()
                .map(|a| AgentState {
                    id: a.clone(),
                    capacity: gpus(GPUS_PER_AGENT),
                    used: gpus(used.get(a.as_str()).copied().unwrap_or(0)),
                    schedulable: true,
                })
                .collect(),
            running: held
                .iter()
                .map(|h| RunningSession {
                    owner: "batch".into(),
                    agent: h.agent.clone(),
                    slots: gpus(h.w.gpus),
                    ends_by: Some(
                        h.grace_ends
                            .unwrap_or(h.started + Duration::seconds(h.w.run_secs)),
                    ),
                })
                .collect(),
            preemptible: held
                .iter()
                .filter(|h| !h.w.urgent && h.grace_ends.is_none())
                .map(|h| Candidate {
                    id: h.w.id,
                    held: vec![(h.agent.clone(), gpus(h.w.gpus))],
                    priority: 10,
                    factor: None,
                    running_since: h.started,
                })
                .collect(),
            preempting: held
                .iter()
                .filter(|h| h.grace_ends.is_some())
                .filter_map(|h| h.w.behind)
                .collect(),
            requeued_behind: waiting
                .iter()
                .filter_map(|w| {
                    w.behind
                        .filter(|p| pending_ids.contains(p))
                        .map(|p| (w.id, p))
                })
                .collect(),
            ..Default::default()
        };
        let plan = schedule(&cfg, &snap, &mut state);
        for d in &plan.decisions {
            let Outcome::Placed { agent, .. } = &d.outcome else {
                continue;
            };
            let Some(i) = waiting.iter().position(|w| w.id == d.id) else {
                continue;
            };
            let w = waiting.remove(i);
            if w.behind.is_some_and(|p| pending_ids.contains(&p)) {
                f.flaps += 1;
            }
            if w.urgent {
                let wait = (now - arrived[&w.id]).num_seconds();
                f.waits.push(wait);
                f.urgent_started += 1;
                if wait > GRACE_SECS + PASS_SECS {
                    f.late += 1;
                }
            }
            held.push(Held {
                w,
                agent: agent.clone(),
                started: now,
                grace_ends: None,
            });
        }
        for p in &plan.preemptions {
            f.preemptions += 1;
            let Some(head) = waiting.iter().find(|w| w.id == p.preemptor) else {
                continue;
            };
            let on_agent: u64 = held
                .iter()
                .filter(|h| p.placement.iter().any(|(a, _)| *a == h.agent))
                .map(|h| h.w.gpus)
                .sum();
            let free = GPUS_PER_AGENT - on_agent;
            let needed = head.gpus.saturating_sub(free);
            let sizes: Vec<u64> = held
                .iter()
                .filter(|h| p.victims.contains(&h.w.id))
                .map(|h| h.w.gpus)
                .collect();
            let freed: u64 = sizes.iter().sum();
            f.victims += sizes.len();
            f.victim_gpus += freed;
            f.needed_gpus += needed;
            if sizes.iter().any(|s| freed - s >= needed) {
                f.over_taken += 1;
            }
            for h in held.iter_mut().filter(|h| p.victims.contains(&h.w.id)) {
                h.grace_ends = Some(now + cfg.preemption.grace);
                h.w.behind = Some(p.preemptor);
            }
        }
        now += Duration::seconds(PASS_SECS);
    }
    let alive: HashSet<Uuid> = held
        .iter()
        .map(|h| h.w.id)
        .chain(waiting.iter().map(|w| w.id))
        .collect();
    let lost = ever_requeued
        .iter()
        .filter(|id| !alive.contains(id) && !done.contains(id))
        .count();
    f.waits.sort_unstable();
    let pct = |q: f64| {
        f.waits
            .get(((f.waits.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or(0)
    };
    // One list of the figures, printed as a JSON line and as a table.
    let figures: [(&str, i64); 14] = [
        ("urgent", urgent_total as i64),
        ("started", f.urgent_started as i64),
        ("wait_p50_s", pct(0.5)),
        ("wait_max_s", pct(1.0)),
        ("promise_s", GRACE_SECS + PASS_SECS),
        ("late", f.late as i64),
        ("preemptions", f.preemptions as i64),
        ("victims", f.victims as i64),
        ("victim_gpus", f.victim_gpus as i64),
        ("needed_gpus", f.needed_gpus as i64),
        ("over_taken", f.over_taken as i64),
        ("flaps", f.flaps as i64),
        ("requeued", f.requeued as i64),
        ("lost", lost as i64),
    ];
    let json: Vec<String> = figures
        .iter()
        .map(|(k, v)| format!("\"{k}\":{v}"))
        .collect();
    println!("{{{}}}", json.join(","));
    println!();
    let cells = |f: &dyn Fn(&(&str, i64)) -> String| -> String {
        figures.iter().map(f).collect::<Vec<_>>().join(" | ")
    };
    println!("| {} |", cells(&|(k, _)| k.to_string()));
    println!("|{}|", vec!["---"; figures.len()].join("|"));
    println!("| {} |", cells(&|(_, v)| v.to_string()));
}

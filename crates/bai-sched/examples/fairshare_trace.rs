//! Fairness trace (issue 58, bench/fairshare.sh): a simulation of the scheduler pass
//! (`bai_sched::pipeline::schedule`) on a simulated clock, not of agents.
//!
//! 4 dummy agents × 8 GPUs (`cuda.device`); three projects with shares 2:1:1 in the fair-share
//! tree, each keeping `QUEUED` sessions pending (1–8 GPUs, limits from 10 minutes to a day,
//! each running 30–100 % of its limit; a fixed seed). The clock jumps to the next event: a
//! session's end or the next pass (every `PASS_SECS`). Usage is fed as the store feeds it:
//! each account's accumulator grows by its running sessions' weighted rate and decays with the
//! policy's half-life. Two simulated weeks per sequencer, the same trace for FIFO, DRF and
//! fair share. Prints one JSON line per sequencer and a table.
//!
//! `cargo run --profile release -p bai-sched --example fairshare_trace [days] [seed] [tree]`
//!
//! `tree`: `projects` (default: the three projects in one domain, shares on the projects) or
//! `domains` (each project in a domain of its own, shares on the domains: the same split one
//! level up, for comparison; Slurm's classic factor, replaced, met the shares only there).

use bai_core::resources::ResourceSlots;
use bai_sched::fairshare::{Account, Input, Level, Policy, ShareTree, Shares, accrue};
use bai_sched::{
    AgentState, GroupConfig, GroupState, Outcome, RunningSession, Sequencer, Snapshot, Workload,
    schedule,
};
use chrono::{DateTime, Duration, TimeZone, Utc};
use std::collections::HashMap;
use uuid::Uuid;

const AGENTS: usize = 4;
const GPUS_PER_AGENT: u64 = 8;
const QUEUED: usize = 12;
const PASS_SECS: i64 = 60;
const PROJECTS: [(&str, f64); 3] = [("alpha", 2.0), ("beta", 1.0), ("gamma", 1.0)];

/// A deterministic generator (PCG-style LCG), so every sequencer sees the same trace.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn unit(&mut self) -> f64 {
        (self.next() % 1_000_000) as f64 / 1_000_000.0
    }
}

fn gpus(n: u64) -> ResourceSlots {
    ResourceSlots {
        cpu_milli: n * 8_000,
        mem: n * (32 << 30),
        accel: [("cuda.device".to_string(), n * 1000)].into(),
    }
}

/// One submitted session of the trace.
#[derive(Clone)]
struct Job {
    project: usize,
    gpus: u64,
    limit_secs: i64,
    run_secs: i64,
}

/// The `k`-th session each project submits: the same for every sequencer.
fn job(seed: u64, project: usize, k: usize) -> Job {
    let mut r = Rng(seed ^ ((project as u64) << 40) ^ (k as u64).wrapping_mul(0x9E37_79B9));
    for _ in 0..3 {
        r.next();
    }
    let gpus = match r.next() % 20 {
        0..=5 => 1,
        6..=10 => 2,
        11..=15 => 4,
        _ => 8,
    };
    // Limits log-uniform from 10 minutes to a day; runs 30–100 % of the limit.
    let (lo, hi) = ((600f64).ln(), (86_400f64).ln());
    let limit_secs = (lo + (hi - lo) * r.unit()).exp() as i64;
    let run_secs = ((0.3 + 0.7 * r.unit()) * limit_secs as f64).max(60.0) as i64;
    Job {
        project,
        gpus,
        limit_secs,
        run_secs: run_secs.min(limit_secs),
    }
}

struct Running {
    project: usize,
    agent: String,
    slots: ResourceSlots,
    gpus: u64,
    limit_end: DateTime<Utc>,
    end: DateTime<Utc>,
}

#[derive(Default)]
struct Heads {
    /// Sessions of 8 GPUs that got a reservation.
    reserved: usize,
    /// Of those, started no later than the first reservation they were given.
    on_first: usize,
    /// Started no later than the reservation they held in the pass before they started.
    on_last: usize,
    /// The latest start after the first reservation, in seconds.
    max_late_secs: i64,
}

struct Report {
    sequencer: &'static str,
    /// GPU-seconds per project in the second half (the second week).
    second: [f64; 3],
    util_waiting: f64,
    util_second: f64,
    started: usize,
    heads: Heads,
}

fn simulate(seq: Sequencer, days: i64, seed: u64, domains: bool) -> Report {
    let start = Utc
        .with_ymd_and_hms(2026, 1, 5, 0, 0, 0)
        .single()
        .unwrap_or_else(Utc::now);
    let end = start + Duration::days(days);
    let half = start + Duration::days(days / 2);
    let mut cfg = GroupConfig::new("gpu");
    cfg.sequencer = seq;
    let policy = Policy::default();
    let level = if domains {
        Level::Domain
    } else {
        Level::Project
    };
    let shares = Shares(
        PROJECTS
            .iter()
            .map(|(p, s)| ((level, p.to_string()), *s))
            .collect(),
    );
    let accounts: Vec<Account> = PROJECTS
        .iter()
        .map(|(p, _)| {
            let domain = if domains { p } else { "site" };
            Account::new(domain, p, &format!("{p}-user"))
        })
        .collect();
    let mut agents: Vec<AgentState> = (0..AGENTS)
        .map(|i| AgentState {
            id: format!("agent-{i}"),
            capacity: gpus(GPUS_PER_AGENT),
            used: ResourceSlots::default(),
            schedulable: true,
        })
        .collect();
    let capacity = (AGENTS as u64 * GPUS_PER_AGENT) as f64;
    let mut submitted = [0usize; 3];
    let mut jobs: HashMap<Uuid, Job> = HashMap::new();
    let mut pending: Vec<Workload> = Vec::new();
    let mut running: Vec<Running> = Vec::new();
    let mut usage = [0f64; 3];
    let mut state = GroupState::default();
    let mut first_res: HashMap<Uuid, DateTime<Utc>> = HashMap::new();
    let mut last_res: HashMap<Uuid, DateTime<Utc>> = HashMap::new();
    let mut heads = Heads::default();
    let (mut busy_waiting, mut time_waiting) = (0f64, 0f64);
    let (mut busy_second, mut time_second) = (0f64, 0f64);
    let mut second = [0f64; 3];
    let mut started = 0;
    let mut now = start;
    let mut id_rng = Rng(seed.wrapping_add(7));
    while now < end {
        // Ends.
        running.retain(|r| {
            if r.end > now {
                return true;
            }
            if let Some(a) = agents.iter_mut().find(|a| a.id == r.agent) {
                a.used = a.used.checked_sub(&r.slots);
            }
            false
        });
        // Each project keeps QUEUED sessions pending.
        for p in 0..PROJECTS.len() {
            let queued = pending.iter().filter(|w| jobs[&w.id].project == p).count();
            for _ in queued..QUEUED {
                let j = job(seed, p, submitted[p]);
                submitted[p] += 1;
                let id = Uuid::from_u64_pair(id_rng.next(), id_rng.next());
                pending.push(Workload {
                    id,
                    owner: PROJECTS[p].0.to_string(),
                    priority: 10,
                    enqueued_at: now,
                    slots: gpus(j.gpus),
                    kernels: 1,
                    starts_at: None,
                    designated_agent: None,
                    eligible: None,
                    dependencies: vec![],
                    account: Some(accounts[p].clone()),
                    max_runtime: Some(Duration::seconds(j.limit_secs)),
                });
                jobs.insert(id, j);
            }
        }
        let tree = ShareTree::build(accounts.iter().cloned().zip(usage.iter().copied()), &shares);
        let snap = Snapshot {
            now,
            pending: pending.clone(),
            agents: agents.clone(),
            running: running
                .iter()
                .map(|r| RunningSession {
                    owner: PROJECTS[r.project].0.to_string(),
                    agent: r.agent.clone(),
                    slots: r.slots.clone(),
                    ends_by: Some(r.limit_end),
                })
                .collect(),
            fairshare: Some(Input {
                tree: std::sync::Arc::new(tree),
                policy: policy.clone(),
            }),
            ..Default::default()
        };
        let plan = schedule(&cfg, &snap, &mut state);
        agents = plan.agents.clone();
        let mut placed = std::collections::HashSet::new();
        for d in &plan.decisions {
            let Some(j) = jobs.get(&d.id) else { continue };
            match &d.outcome {
                Outcome::Placed { agent, .. } => {
                    placed.insert(d.id);
                    started += 1;
                    if let Some(t) = first_res.get(&d.id) {
                        heads.reserved += 1;
                        heads.on_first += usize::from(now <= *t);
                        let last = last_res.get(&d.id).copied().unwrap_or(*t);
                        heads.on_last += usize::from(now <= last);
                        heads.max_late_secs = heads.max_late_secs.max((now - *t).num_seconds());
                    }
                    running.push(Running {
                        project: j.project,
                        agent: agent.clone(),
                        slots: gpus(j.gpus),
                        gpus: j.gpus,
                        limit_end: now + Duration::seconds(j.limit_secs),
                        end: now + Duration::seconds(j.run_secs),
                    });
                }
                Outcome::Wait { .. } if j.gpus == GPUS_PER_AGENT => {
                    if d.steps.iter().any(|s| s.step == "reservation")
                        && let Some(t) = d.estimated_start
                    {
                        first_res.entry(d.id).or_insert(t);
                        last_res.insert(d.id, t);
                    }
                }
                _ => {}
            }
        }
        pending.retain(|w| !placed.contains(&w.id));
        // Next event.
        let next_end = running.iter().map(|r| r.end).min();
        let tick = now + Duration::seconds(PASS_SECS);
        let next = next_end
            .map_or(tick, |e| e.min(tick))
            .max(now + Duration::seconds(1));
        let next = next.min(end);
        let dt = (next - now).num_milliseconds() as f64 / 1000.0;
        let mut rate = [0f64; 3];
        let mut held = [0f64; 3];
        for r in &running {
            rate[r.project] += policy.weights.rate(&r.slots);
            held[r.project] += r.gpus as f64;
        }
        for p in 0..3 {
            usage[p] = accrue(usage[p], rate[p], dt, policy.half_life_secs as f64);
        }
        let busy: f64 = held.iter().sum();
        if !pending.is_empty() {
            busy_waiting += busy * dt;
            time_waiting += capacity * dt;
        }
        if now >= half {
            busy_second += busy * dt;
            time_second += capacity * dt;
            for p in 0..3 {
                second[p] += held[p] * dt;
            }
        }
        now = next;
    }
    Report {
        sequencer: seq.as_str(),
        second,
        util_waiting: busy_waiting / time_waiting.max(1.0),
        util_second: busy_second / time_second.max(1.0),
        started,
        heads,
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let days: i64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(14);
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(58);
    let domains = args.next().as_deref() == Some("domains");
    let total_share: f64 = PROJECTS.iter().map(|(_, s)| s).sum();
    let mut rows = Vec::new();
    for seq in [Sequencer::Fifo, Sequencer::Drf, Sequencer::FairShare] {
        let t0 = std::time::Instant::now();
        let r = simulate(seq, days, seed, domains);
        let wall = t0.elapsed().as_secs_f64();
        let sum: f64 = r.second.iter().sum();
        let xs: Vec<f64> = (0..3)
            .map(|p| (r.second[p] / sum.max(1.0)) / (PROJECTS[p].1 / total_share))
            .collect();
        let jain = xs.iter().sum::<f64>().powi(2) / (3.0 * xs.iter().map(|x| x * x).sum::<f64>());
        let per: Vec<String> = (0..3)
            .map(|p| {
                format!(
                    "{{\"project\":\"{}\",\"share\":{:.4},\"gpu_hours\":{:.1},\"fraction\":{:.4},\"deviation_pct\":{:.2}}}",
                    PROJECTS[p].0,
                    PROJECTS[p].1 / total_share,
                    r.second[p] / 3600.0,
                    r.second[p] / sum.max(1.0),
                    (xs[p] - 1.0) * 100.0
                )
            })
            .collect();
        println!(
            "{{\"sequencer\":\"{}\",\"tree\":\"{}\",\"days\":{days},\"seed\":{seed},\"projects\":[{}],\"jain\":{jain:.4},\"util_while_waiting\":{:.4},\"util_second_week\":{:.4},\"started\":{},\"heads_8gpu_reserved\":{},\"heads_on_first\":{},\"heads_on_last\":{},\"heads_max_late_s\":{},\"wall_s\":{wall:.2}}}",
            r.sequencer,
            if domains { "domains" } else { "projects" },
            per.join(","),
            r.util_waiting,
            r.util_second,
            r.started,
            r.heads.reserved,
            r.heads.on_first,
            r.heads.on_last,
            r.heads.max_late_secs.max(0),
        );
        rows.push((r, xs, jain, wall));
    }
    println!();
    println!(
        "| sequencer | project (share) | GPU-h, 2nd week | fraction | vs share | Jain | GPU util. while work waits | 8-GPU heads ≤ first reservation (≤ last) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (r, xs, jain, _) in &rows {
        let sum: f64 = r.second.iter().sum();
        for p in 0..3 {
            let (jain_s, util_s, heads_s) = if p == 0 {
                (
                    format!("{jain:.3}"),
                    format!("{:.1} %", r.util_waiting * 100.0),
                    format!(
                        "{} of {} ({})",
                        r.heads.on_first, r.heads.reserved, r.heads.on_last
                    ),
                )
            } else {
                Default::default()
            };
            println!(
                "| {} | {} ({:.0} %) | {:.0} | {:.1} % | {:+.1} % | {jain_s} | {util_s} | {heads_s} |",
                if p == 0 { r.sequencer } else { "" },
                PROJECTS[p].0,
                PROJECTS[p].1 / total_share * 100.0,
                r.second[p] / 3600.0,
                r.second[p] / sum.max(1.0) * 100.0,
                (xs[p] - 1.0) * 100.0,
            );
        }
    }
}

//! Builds the scheduler's view of each resource group from the store and the agents.

use super::Scheduler;
use super::time::parse_time;
use bai_core::resources::ResourceSlots;
use bai_core::status::{SessionResult, SessionStatus as S};
use bai_sched::{
    AgentState, DepState, GroupConfig, Limits, OwnerUsage, RunningSession, Snapshot, Workload,
};
use bai_store::{PendingRow, ResourceGroupRow, SessionRow};
use chrono::{DateTime, Duration, Utc};
use std::collections::HashMap;
use uuid::Uuid;

/// One group, ready for a pass: its configuration, its snapshot, and its PENDING rows'
/// status_info by id (a wait whose reason is unchanged is not written again).
pub struct GroupInput {
    pub config: GroupConfig,
    pub row: ResourceGroupRow,
    pub snapshot: Snapshot,
    pub status_info: HashMap<Uuid, Option<String>>,
}

pub fn config_of(g: &ResourceGroupRow) -> GroupConfig {
    GroupConfig {
        name: g.name.clone(),
        sequencer: bai_sched::Sequencer::parse(&g.scheduler).unwrap_or_default(),
        strategy: bai_sched::Strategy::parse(&g.selector).unwrap_or_default(),
        starvation_after: Duration::seconds(g.starvation_secs.max(0)),
        preemption: preemption_of(&g.preemption),
    }
}

/// A group's stored preemption policy as the scheduler's settings.
fn preemption_of(p: &bai_core::preemption::PreemptionPolicy) -> bai_sched::preempt::Config {
    use bai_core::preemption::PreemptionMode as M;
    bai_sched::preempt::Config {
        mode: match p.mode {
            M::Off => bai_sched::preempt::Mode::Off,
            M::Priority => bai_sched::preempt::Mode::Priority,
            M::Fairshare => bai_sched::preempt::Mode::FairShare,
        },
        grace: Duration::seconds(i64::try_from(p.grace_secs).unwrap_or(i64::MAX / 2)),
        min_runtime: Duration::seconds(i64::try_from(p.min_runtime_secs).unwrap_or(i64::MAX / 2)),
    }
}

/// When a session entered `status`, if it did.
fn entered(r: &SessionRow, status: S) -> Option<DateTime<Utc>> {
    r.state
        .status_history
        .get(&status)
        .and_then(|t| parse_time(t))
}

/// The running sessions of group `g` that its preemption policy lets a pending session end:
/// up, of a type it covers, placed (on one agent or, multi-node, on several).
fn preemptible(
    g: &ResourceGroupRow,
    active: &[SessionRow],
    placements: &bai_store::SubPlacements,
) -> Vec<bai_sched::preempt::Candidate> {
    if g.preemption.mode == bai_core::preemption::PreemptionMode::Off {
        return Vec::new();
    }
    active
        .iter()
        .filter(|r| {
            r.spec.scaling_group == g.name
                && r.state.status.is_up()
                && g.preemption.covers(r.spec.session_type)
        })
        .filter_map(|r| {
            // Each agent once, with all its kernels there (a multi-node session spans
            // several: ending it frees room on each).
            let mut held: Vec<(String, ResourceSlots)> = Vec::new();
            for (agent, slots) in held_on(r, placements) {
                match held.iter_mut().find(|(a, _)| *a == agent) {
                    Some((_, s)) => *s = s.add(&slots),
                    None => held.push((agent, slots)),
                }
            }
            if held.is_empty() {
                return None;
            }
            Some(bai_sched::preempt::Candidate {
                id: r.id,
                held,
                priority: r.spec.priority,
                factor: None,
                running_since: entered(r, S::Running).unwrap_or_else(Utc::now),
            })
        })
        .collect()
}

pub fn workload(r: &PendingRow) -> Workload {
    Workload {
        id: r.id,
        owner: r.access_key.clone(),
        priority: r.priority,
        enqueued_at: parse_time(&r.created_at).unwrap_or_else(Utc::now),
        slots: r.requested_slots.clone(),
        kernels: r.kernels,
        starts_at: r.starts_at.as_deref().and_then(parse_time),
        designated_agent: r.designated_agent.clone(),
        eligible: None,
        dependencies: r.dependencies.clone(),
        account: Some(bai_sched::fairshare::Account::new(
            &r.domain_name,
            &r.group_name,
            &r.user_id,
        )),
        // Its own batch timeout; `build` lowers it to the owner's maximum lifetime.
        max_runtime: r.batch_timeout.filter(|t| *t > 0).map(Duration::seconds),
    }
}

/// The longest a session may run: the shorter of its batch timeout and its owner's maximum
/// lifetime (each in seconds, 0 or less: none), if either is set.
fn max_runtime(batch_timeout: Option<i64>, lifetime: Option<&i64>) -> Option<Duration> {
    let batch = batch_timeout.filter(|t| *t > 0);
    let life = lifetime.copied().filter(|t| *t > 0);
    let secs = match (batch, life) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => return None,
    };
    Some(Duration::seconds(secs))
}

/// When a running session will have ended at the latest, if known: a preempted one by the
/// end of its grace.
fn ends_by(
    r: &SessionRow,
    lifetime_of: &HashMap<String, i64>,
    grace: Duration,
) -> Option<DateTime<Utc>> {
    if r.state.status == S::Preempted {
        return entered(r, S::Preempted).map(|t| t + grace);
    }
    let started = entered(r, S::Running).or_else(|| entered(r, S::Scheduled))?;
    max_runtime(r.spec.batch_timeout, lifetime_of.get(&r.spec.access_key)).map(|d| started + d)
}

/// Who holds what now: the sessions that occupy resources (SCHEDULED through TERMINATING),
/// summed per owner and per agent. Computed from the sessions, so it cannot drift.
pub struct Occupancy {
    pub rows: Vec<SessionRow>,
    pub by_owner: HashMap<String, OwnerUsage>,
    pub by_agent: HashMap<String, ResourceSlots>,
    /// Multi-node sessions' sub kernels: where each is.
    pub subs: bai_store::SubPlacements,
}

/// What a session holds on which agent: all of it on its agent, or for a multi-node session
/// one kernel's share on each kernel's agent.
pub fn held_on(r: &SessionRow, subs: &bai_store::SubPlacements) -> Vec<(String, ResourceSlots)> {
    let multi =
        r.spec.cluster_mode == bai_core::cluster::ClusterMode::MultiNode && r.spec.cluster_size > 1;
    match (&r.state.agent_id, subs.get(&r.id)) {
        (Some(main), Some(placed)) if multi => {
            let each = r.spec.kernel_slots();
            let mut out = vec![(main.clone(), each.clone())];
            out.extend(
                placed
                    .iter()
                    .filter_map(|(_, a)| a.clone().map(|a| (a, each.clone()))),
            );
            out
        }
        (Some(main), _) => vec![(main.clone(), r.spec.requested_slots.clone())],
        (None, _) => Vec::new(),
    }
}

impl Occupancy {
    pub fn read(store: &bai_store::Store) -> Result<Occupancy, bai_store::StoreError> {
        let occupying: Vec<S> = S::ALL
            .into_iter()
            .filter(|s| s.occupies_resources())
            .collect();
        let rows = store.sessions_in(&occupying)?;
        let subs = store.multi_node_placements(&occupying)?;
        let mut by_owner: HashMap<String, OwnerUsage> = HashMap::new();
        let mut by_agent: HashMap<String, ResourceSlots> = HashMap::new();
        for r in &rows {
            let u = by_owner.entry(r.spec.access_key.clone()).or_default();
            // System sessions (SFTP) count under their own limit, not the sessions'.
            if r.spec.session_type != bai_core::SessionType::System {
                u.sessions += 1;
            }
            u.slots = u.slots.add(&r.spec.requested_slots);
            for (a, slots) in held_on(r, &subs) {
                let e = by_agent.entry(a).or_default();
                *e = e.add(&slots);
            }
        }
        Ok(Occupancy {
            rows,
            by_owner,
            by_agent,
            subs,
        })
    }

    /// What `owner` holds now.
    pub fn of_owner(&self, owner: &str) -> ResourceSlots {
        self.by_owner
            .get(owner)
            .map(|u| u.slots.clone())
            .unwrap_or_default()
    }
}

/// Reads everything once and splits it by resource group.
pub fn build(scheduler: &Scheduler) -> anyhow::Result<Vec<GroupInput>> {
    let pending = scheduler.store.pending_queue()?;
    let groups = scheduler.store.resource_groups()?;
    if pending.is_empty() {
        return Ok(Vec::new());
    }
    let Occupancy {
        rows: active,
        by_owner: usage,
        by_agent: used_on,
        subs: placements,
    } = Occupancy::read(&scheduler.store)?;

    let policies = scheduler.store.policies()?;
    let policy_by_name: HashMap<&str, &bai_store::PolicyRow> =
        policies.iter().map(|p| (p.name.as_str(), p)).collect();
    let mut limits: HashMap<String, Limits> = HashMap::new();
    let mut lifetime_of: HashMap<String, i64> = HashMap::new();
    for (ak, pname) in scheduler.store.keypair_policies()? {
        let Some(p) = policy_by_name
            .get(pname.as_str())
            .or(policy_by_name.get("default"))
        else {
            continue;
        };
        lifetime_of.insert(ak.clone(), p.max_session_lifetime);
        limits.insert(
            ak,
            Limits {
                max_concurrent_sessions: p.max_concurrent_sessions.map(|v| v.max(0) as u32),
                total_slots: p.total_slots.clone(),
            },
        );
    }

    let mut dependencies: HashMap<Uuid, DepState> = HashMap::new();
    for r in &pending {
        for d in &r.dependencies {
            if dependencies.contains_key(d) {
                continue;
            }
            let state = match scheduler.store.session(*d)? {
                None => DepState::Missing,
                Some(dep)
                    if dep.state.status == S::Terminated
                        && dep.state.result == SessionResult::Success =>
                {
                    DepState::Succeeded
                }
                Some(dep) if dep.state.status.is_terminal() => DepState::Failed,
                Some(_) => DepState::Unfinished,
            };
            dependencies.insert(*d, state);
        }
    }

    let agents = scheduler.agents.all();
    let now = Utc::now();
    let requeued: HashMap<Uuid, Uuid> = scheduler.store.requeued_behind()?.into_iter().collect();
    let shares = if groups
        .iter()
        .any(|g| bai_sched::Sequencer::parse(&g.scheduler) == Some(bai_sched::Sequencer::FairShare))
    {
        super::fairshare::shares(&scheduler.store)?
    } else {
        Default::default()
    };
    let mut out = Vec::new();
    for g in groups {
        let status_info: HashMap<Uuid, Option<String>> = pending
            .iter()
            .filter(|r| r.scaling_group == g.name)
            .map(|r| (r.id, r.status_info.clone()))
            .collect();
        if status_info.is_empty() {
            continue;
        }
        let in_group: Vec<_> = agents
            .iter()
            .filter(|a| {
                a.info
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .scaling_group
                    == g.name
            })
            .cloned()
            .collect();
        let mut eligible = super::eligible::Cache::default();
        let blind = super::eligible::blind(&in_group);
        let limited = super::eligible::limited(&in_group);
        let group_agents: Vec<AgentState> = in_group
            .iter()
            .map(|a| AgentState {
                id: a.id.clone(),
                capacity: a
                    .info
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .capacity
                    .clone(),
                used: used_on.get(&a.id).cloned().unwrap_or_default(),
                // An agent that cannot enforce egress rules takes only sessions of groups
                // whose policy is open.
                schedulable: a.schedulable()
                    && (g.egress.mode == bai_core::egress::EgressMode::Open
                        || a.info
                            .read()
                            .unwrap_or_else(|p| p.into_inner())
                            .egress_error
                            .is_none()),
            })
            .collect();
        let config = config_of(&g);
        let running: Vec<RunningSession> = active
            .iter()
            .filter(|r| r.spec.scaling_group == g.name)
            .flat_map(|r| {
                let ends = ends_by(r, &lifetime_of, config.preemption.grace);
                held_on(r, &placements)
                    .into_iter()
                    .map(move |(agent, slots)| RunningSession {
                        owner: r.spec.access_key.clone(),
                        agent,
                        slots,
                        ends_by: ends,
                    })
            })
            .collect();
        let mut snapshot = Snapshot {
            now,
            pending: pending
                .iter()
                .filter(|r| r.scaling_group == g.name)
                .map(|r| {
                    let mut w = workload(r);
                    w.eligible = super::eligible::enforcing(
                        eligible.get(scheduler, &g.name, &in_group, r),
                        &g.name,
                        g.egress.mode,
                        &in_group,
                        &blind,
                    );
                    // Not where one kernel would get less than it asks for (GPUs shared
                    // with MPS give a kernel one slice).
                    w.eligible = super::eligible::within_kernel_most(
                        w.eligible, &g.name, r, &in_group, &limited,
                    );
                    // Its known maximum run time: the shorter of its batch timeout and the
                    // owner's maximum session lifetime, as `ends_by` counts it for running
                    // sessions (backfill needs it).
                    w.max_runtime = max_runtime(r.batch_timeout, lifetime_of.get(&r.access_key));
                    w
                })
                .collect(),
            agents: group_agents,
            usage: usage.clone(),
            limits: limits.clone(),
            dependencies: dependencies.clone(),
            running,
            fairshare: None,
            preemptible: preemptible(&g, &active, &placements),
            preempting: active
                .iter()
                .filter(|r| r.state.status == S::Preempted)
                .filter_map(|r| r.state.preempted_by)
                .collect(),
            requeued_behind: requeued.clone(),
        };
        if config.sequencer == bai_sched::Sequencer::FairShare {
            let input =
                super::fairshare::input(&scheduler.store, &g, &shares, &snapshot.pending, now)?;
            // Under `--preemption fairshare` a victim is judged by its account's factor.
            if !snapshot.preemptible.is_empty() {
                let account_of: HashMap<Uuid, bai_sched::fairshare::Account> = active
                    .iter()
                    .filter(|r| r.spec.scaling_group == g.name)
                    .map(|r| (r.id, super::fairshare::account_of(r)))
                    .collect();
                for c in &mut snapshot.preemptible {
                    c.factor = account_of.get(&c.id).map(|a| input.tree.factor(a));
                }
            }
            snapshot.fairshare = Some(input);
        }
        out.push(GroupInput {
            config,
            row: g,
            snapshot,
            status_info,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_known_run_time_is_the_shorter_of_batch_timeout_and_lifetime() {
        let secs = |d: Option<Duration>| d.map(|d| d.num_seconds());
        assert_eq!(secs(max_runtime(Some(600), Some(&3600))), Some(600));
        assert_eq!(secs(max_runtime(Some(7200), Some(&3600))), Some(3600));
        assert_eq!(secs(max_runtime(Some(600), None)), Some(600));
        assert_eq!(secs(max_runtime(Some(600), Some(&0))), Some(600));
        assert_eq!(secs(max_runtime(None, Some(&3600))), Some(3600));
        assert_eq!(secs(max_runtime(Some(0), Some(&0))), None);
        assert_eq!(secs(max_runtime(None, None)), None);
    }
}

//! Reconciliation at start: what the database believes against what the agents run.
//! Launches interrupted by a restart are requeued, lost kernels end their sessions with a
//! reason, unfinished terminations are finished, and orphan containers are removed.

use super::Lifecycle;
use super::kernels::{KernelAt, kernel_ids, kernels_at, kernels_on};
use super::launch;
use super::terminate::finish_termination;
use super::timeouts::{age_secs, arm_batch_timeout};
use super::transition::{Change, transition, transition_or_log};
use bai_core::Reason;
use bai_core::event::EventKind as E;
use bai_core::status::{SessionResult, SessionStatus as S};
use bai_ground::agents::AgentHandle;
use bai_store::SessionRow;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// The first kernel of `kernels` that is not running.
fn missing_kernel<'a>(kernels: &'a [KernelAt], running: &HashSet<Uuid>) -> Option<&'a KernelAt> {
    kernels.iter().find(|k| !running.contains(&k.id))
}

/// "its container is gone" for a session of one kernel; the kernel named in a cluster.
fn gone(row: &SessionRow, missing: Option<&KernelAt>, where_: &str) -> String {
    match missing {
        Some(k) if row.spec.cluster_size > 1 => {
            format!("the container of kernel {} is gone{where_}", k.host)
        }
        _ => format!("its container is gone{where_}"),
    }
}

fn ids(kernels: &[KernelAt]) -> impl Iterator<Item = Uuid> + '_ {
    kernels.iter().map(|k| k.id)
}

pub async fn reconcile(lifecycle: &Arc<Lifecycle>) -> anyhow::Result<()> {
    let mut running_kernels = HashSet::new();
    for agent in lifecycle.agents.all() {
        match agent.rpc.list_kernels().await {
            Ok(k) => running_kernels.extend(k),
            Err(e) => tracing::warn!(agent = %agent.id, error = %e, "cannot list kernels"),
        }
    }
    let mut keep = HashSet::new();
    for row in lifecycle.store.sessions_in(&S::HOLDS_RESOURCES)? {
        match row.state.status {
            S::Scheduled => {
                keep.extend(kernel_ids(lifecycle, &row));
                launch::spawn(lifecycle.clone(), row);
            }
            // The other creation phases: the launch was interrupted.
            s if s.is_creating() => {
                for k in kernels_at(lifecycle, &row) {
                    if let Some(agent) = k.agent.as_deref().and_then(|a| lifecycle.agents.get(a)) {
                        super::destroy_or_log(&agent, k.id).await;
                    }
                }
                transition_or_log(
                    lifecycle,
                    row.id,
                    Change::new(
                        row.state.status,
                        S::Pending,
                        Reason::Requeued("a manager restart interrupted the launch".into()),
                        "reconcile",
                    ),
                );
            }
            // Marked before the restart: its grace goes on from when it was marked.
            S::Preempted => {
                keep.extend(kernel_ids(lifecycle, &row));
                let grace = lifecycle
                    .store
                    .resource_group(&row.spec.scaling_group)?
                    .map(|g| g.preemption.grace_secs)
                    .unwrap_or(bai_core::preemption::DEFAULT_GRACE_SECS);
                super::preempt::resume(lifecycle, row, Duration::from_secs(grace));
            }
            s if s.is_up() => {
                let kernels = kernels_at(lifecycle, &row);
                let remote_away = kernels.iter().any(|k| {
                    k.agent
                        .as_deref()
                        .and_then(|a| lifecycle.agents.get(a))
                        .is_some_and(|a| a.remote.is_some() && !a.is_alive())
                });
                if remote_away {
                    // A remote agent not back yet: it is reconciled when it reconnects, or
                    // its sessions end when it is gone.
                    keep.extend(ids(&kernels));
                    continue;
                }
                let missing = missing_kernel(&kernels, &running_kernels);
                if missing.is_none() {
                    keep.extend(ids(&kernels));
                    if let Some(t) = row.spec.batch_timeout {
                        let started = row
                            .state
                            .status_history
                            .get(&S::Running)
                            .map(|s| age_secs(s))
                            .unwrap_or(0);
                        arm_batch_timeout(
                            lifecycle.clone(),
                            row.id,
                            Duration::from_secs((t - started).max(0) as u64),
                        );
                    }
                } else {
                    let c = Change::new(
                        row.state.status,
                        S::Terminating,
                        Reason::KernelLost(gone(&row, missing, "")),
                        "reconcile",
                    )
                    .events(&[E::SessionTerminating])
                    .result(SessionResult::Failure, None);
                    if let Ok(Some(row)) = transition(lifecycle, row.id, c) {
                        // The kernels still running go too.
                        finish_termination(lifecycle, &row, row.spec.cluster_size > 1).await;
                    }
                }
            }
            S::Terminating => finish_termination(lifecycle, &row, true).await,
            _ => {}
        }
    }
    for agent in lifecycle.agents.all() {
        if let Ok(kernels) = agent.rpc.list_kernels().await {
            for k in kernels.into_iter().filter(|k| !keep.contains(k)) {
                tracing::info!(kernel = %k, "removing orphan kernel");
                super::destroy_or_log(&agent, k).await;
            }
        }
    }
    Ok(())
}

/// Reconciliation of one agent that (re)connected: its kernels still wanted resume (a
/// degraded session is RUNNING again), sessions whose kernel vanished end, and kernels
/// nobody wants (their session ended while the agent was away) are destroyed, never resumed.
pub async fn reconcile_agent(
    lifecycle: &Arc<Lifecycle>,
    agent: &Arc<AgentHandle>,
) -> anyhow::Result<()> {
    let running: HashSet<_> = agent.rpc.list_kernels().await?.into_iter().collect();
    let mut keep = HashSet::new();
    for row in lifecycle.store.sessions_on(&agent.id)? {
        // Only this agent's kernels of the session (a multi-node session has others).
        let here = kernels_on(lifecycle, &row, &agent.id);
        match row.state.status {
            // Its launch task decides.
            s if s.is_creating() => {
                keep.extend(ids(&here));
            }
            s if s.is_up() && missing_kernel(&here, &running).is_none() => {
                keep.extend(ids(&here));
                if s == S::RunningDegraded {
                    let c = Change::new(s, S::Running, Reason::Running, "reconcile");
                    transition_or_log(lifecycle, row.id, c);
                }
            }
            s if s.is_up() => {
                let missing = missing_kernel(&here, &running);
                let c = Change::new(
                    s,
                    S::Terminating,
                    Reason::KernelLost(gone(&row, missing, &format!(" from agent {}", agent.id))),
                    "reconcile",
                )
                .events(&[E::SessionTerminating])
                .result(SessionResult::Failure, None);
                if let Ok(Some(row)) = transition(lifecycle, row.id, c) {
                    finish_termination(lifecycle, &row, row.spec.cluster_size > 1).await;
                }
            }
            _ => {}
        }
    }
    let mut removed = 0;
    for k in running.into_iter().filter(|k| !keep.contains(k)) {
        tracing::info!(agent = %agent.id, kernel = %k, "removing a kernel whose session ended");
        super::destroy_or_log(agent, k).await;
        removed += 1;
    }
    tracing::info!(agent = %agent.id, kept = keep.len(), removed, "agent reconciled");
    Ok(())
}

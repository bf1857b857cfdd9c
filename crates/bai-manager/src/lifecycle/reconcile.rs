//! Reconciliation at start: what the database believes against what the agents run.
//! Launches interrupted by a restart are requeued, lost kernels end their sessions with a
//! reason, unfinished terminations are finished, and orphan containers are removed.

use super::launch;
use super::terminate::finish_termination;
use super::timeouts::{age_secs, arm_batch_timeout};
use super::transition::{Change, transition, transition_or_log};
use crate::state::Manager;
use bai_core::Reason;
use bai_core::event::EventKind as E;
use bai_core::status::{SessionResult, SessionStatus as S};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

pub async fn reconcile(m: &Arc<Manager>) -> anyhow::Result<()> {
    let mut running_kernels = HashSet::new();
    for agent in m.agents() {
        match agent.rpc.list_kernels().await {
            Ok(k) => running_kernels.extend(k),
            Err(e) => tracing::warn!(agent = %agent.id, error = %e, "cannot list kernels"),
        }
    }
    let mut keep = HashSet::new();
    for row in m.store.sessions_in(&S::HOLDS_RESOURCES)? {
        match row.status {
            S::Scheduled => {
                keep.insert(row.main_kernel_id);
                launch::spawn(m.clone(), row);
            }
            // The other creation phases: the launch was interrupted.
            s if s.is_creating() => {
                if let Some(agent) = row.agent_id.as_deref().and_then(|a| m.agent(a)) {
                    super::destroy_or_log(&agent, row.main_kernel_id).await;
                }
                transition_or_log(
                    m,
                    row.id,
                    Change::new(
                        row.status,
                        S::Pending,
                        Reason::Requeued("a manager restart interrupted the launch".into()),
                        "reconcile",
                    ),
                );
            }
            s if s.is_up() => {
                if running_kernels.contains(&row.main_kernel_id) {
                    keep.insert(row.main_kernel_id);
                    if let Some(t) = row.batch_timeout {
                        let started = row
                            .status_history
                            .get(&S::Running)
                            .map(|s| age_secs(s))
                            .unwrap_or(0);
                        arm_batch_timeout(
                            m.clone(),
                            row.id,
                            Duration::from_secs((t - started).max(0) as u64),
                        );
                    }
                } else {
                    let c = Change::new(
                        row.status,
                        S::Terminating,
                        Reason::KernelLost("its container is gone".into()),
                        "reconcile",
                    )
                    .events(&[E::SessionTerminating])
                    .result(SessionResult::Failure, None);
                    if let Ok(Some(row)) = transition(m, row.id, c) {
                        finish_termination(m, &row, false).await;
                    }
                }
            }
            S::Terminating => finish_termination(m, &row, true).await,
            _ => {}
        }
    }
    for agent in m.agents() {
        if let Ok(kernels) = agent.rpc.list_kernels().await {
            for k in kernels.into_iter().filter(|k| !keep.contains(k)) {
                tracing::info!(kernel = %k, "removing orphan kernel");
                super::destroy_or_log(&agent, k).await;
            }
        }
    }
    Ok(())
}

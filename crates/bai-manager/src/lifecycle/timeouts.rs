//! Timers that end sessions: batch timeouts, and the sweeper that makes sure no session
//! stays in an intermediate status forever.

use super::terminate::terminate;
use super::transition::{Change, transition};
use crate::state::Manager;
use bai_core::status::{SessionResult, SessionStatus as S};
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// Terminates a batch session with `task-timeout` when it is still running after `after`.
pub fn arm_batch_timeout(m: Arc<Manager>, id: Uuid, after: Duration) {
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        if let Ok(Some(row)) = m.store.session(id)
            && row.status == S::Running
        {
            tracing::info!(session = %id, "batch timeout reached");
            if let Err(e) = terminate(&m, id, "task-timeout", SessionResult::Failure).await {
                tracing::error!(session = %id, error = %e, "batch timeout termination failed");
            }
        }
    });
}

/// Seconds since an RFC 3339 time.
pub fn age_secs(t: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(t)
        .map(|t| (chrono::Utc::now() - t.with_timezone(&chrono::Utc)).num_seconds())
        .unwrap_or(0)
}

/// Every few seconds: a session in a creation phase with no launch task behind it, for
/// longer than the creation timeout, goes to ERROR with a reason.
pub fn spawn_sweeper(m: Arc<Manager>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        loop {
            tick.tick().await;
            let stuck = [
                S::Scheduled,
                S::Preparing,
                S::Pulling,
                S::Prepared,
                S::Creating,
            ];
            let Ok(rows) = m.store.sessions_in(&stuck) else {
                continue;
            };
            let limit = m.config.create_timeout_secs as i64 + 30;
            for row in rows {
                if !stalled(&m, &row, limit) {
                    continue;
                }
                let info = format!(
                    "stuck-in-{}: no progress for {limit}s",
                    row.status.as_str().to_lowercase()
                );
                if let Some(agent) = row.agent_id.as_deref().and_then(|a| m.agent(a)) {
                    let _ = agent.rpc.destroy_kernel(row.main_kernel_id).await;
                }
                let _ = transition(
                    &m,
                    row.id,
                    Change::new(row.status, S::Error, &info, "sweeper"),
                );
            }
            finish_stuck_terminations(&m).await;
            let _ = m.store.prune_events(7 * 24 * 3600);
        }
    });
}

/// A session TERMINATING for longer than the creation timeout with no task behind it (its
/// launch or termination task died) is finished: kernel destroyed if there, then TERMINATED.
async fn finish_stuck_terminations(m: &Arc<Manager>) {
    let Ok(rows) = m.store.sessions_in(&[S::Terminating]) else {
        return;
    };
    let limit = m.config.create_timeout_secs as i64 + 30;
    for row in rows {
        if !stalled(m, &row, limit) {
            continue;
        }
        tracing::warn!(session = %row.id, "finishing a termination that made no progress");
        super::terminate::finish_termination(m, &row, true).await;
    }
}

/// No task is working on the session and it has not changed status for `limit` seconds.
fn stalled(m: &Manager, row: &bai_store::SessionRow, limit: i64) -> bool {
    let launching = m
        .launching
        .lock()
        .map(|s| s.contains(&row.id))
        .unwrap_or(true);
    !launching && age_secs(&row.status_changed) >= limit
}

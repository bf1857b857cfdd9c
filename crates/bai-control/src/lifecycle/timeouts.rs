//! Timers that end sessions: batch timeouts, and the sweeper that makes sure no session
//! stays in an intermediate status forever.

use super::Lifecycle;
use super::terminate::terminate;
use super::transition::{Change, transition_or_log};
use bai_core::Reason;
use bai_core::status::{SessionResult, SessionStatus as S};
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// Terminates a batch session with `task-timeout` when it is still running after `after`.
pub fn arm_batch_timeout(lifecycle: Arc<Lifecycle>, id: Uuid, after: Duration) {
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        if let Ok(Some(row)) = lifecycle.store.session(id)
            && row.state.status == S::Running
        {
            tracing::info!(session = %id, "batch timeout reached");
            if let Err(e) =
                terminate(&lifecycle, id, Reason::TaskTimeout, SessionResult::Failure).await
            {
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
pub fn spawn_sweeper(lifecycle: Arc<Lifecycle>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        loop {
            tick.tick().await;
            let Ok(rows) = lifecycle.store.sessions_in(&S::CREATION_PHASES) else {
                continue;
            };
            let limit = lifecycle.config.create_timeout_secs as i64 + 30;
            for row in rows {
                if !stalled(&lifecycle, &row, limit) {
                    continue;
                }
                let reason = Reason::Stuck {
                    status: row.state.status.as_str().to_lowercase(),
                    secs: limit,
                };
                if let Some(agent) = row
                    .state
                    .agent_id
                    .as_deref()
                    .and_then(|a| lifecycle.agents.get(a))
                {
                    super::destroy_or_log(&agent, row.main_kernel_id).await;
                }
                transition_or_log(
                    &lifecycle,
                    row.id,
                    Change::new(row.state.status, S::Error, reason, "sweeper"),
                );
            }
            finish_stuck_terminations(&lifecycle).await;
            if let Err(e) = lifecycle.store.prune_events(7 * 24 * 3600) {
                tracing::warn!(error = %e, "cannot prune old events");
            }
        }
    });
}

/// A session TERMINATING for longer than the creation timeout with no task behind it (its
/// launch or termination task died) is finished: kernel destroyed if there, then TERMINATED.
async fn finish_stuck_terminations(lifecycle: &Arc<Lifecycle>) {
    let Ok(rows) = lifecycle.store.sessions_in(&[S::Terminating]) else {
        return;
    };
    let limit = lifecycle.config.create_timeout_secs as i64 + 30;
    for row in rows {
        if !stalled(lifecycle, &row, limit) {
            continue;
        }
        tracing::warn!(session = %row.id, "finishing a termination that made no progress");
        super::terminate::finish_termination(lifecycle, &row, true).await;
    }
}

/// No task is working on the session and it has not changed status for `limit` seconds.
fn stalled(lifecycle: &Lifecycle, row: &bai_store::SessionRow, limit: i64) -> bool {
    let launching = lifecycle
        .launching
        .lock()
        .map(|s| s.contains(&row.id))
        .unwrap_or(true);
    !launching && age_secs(&row.state.status_changed) >= limit
}

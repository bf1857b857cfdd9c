//! Terminating a session: cancel it while queued, or destroy its kernel and record why.

use super::Lifecycle;
use super::transition::{Change, transition};
use bai_core::event::EventKind as E;
use bai_core::status::{SessionResult, SessionStatus as S, SessionType};
use bai_core::{Problem, Reason};
use bai_store::SessionRow;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// Terminates (or cancels) a session for `reason`; returns the status it ended in.
/// Safe to call concurrently and repeatedly.
pub async fn terminate(
    lifecycle: &Arc<Lifecycle>,
    id: Uuid,
    reason: Reason,
    result: SessionResult,
) -> Result<S, Problem> {
    for _ in 0..20 {
        let row = lifecycle
            .store
            .session(id)?
            .ok_or_else(|| Problem::session_not_found(&id.to_string()))?;
        match row.state.status {
            S::Pending | S::Scheduled => {
                let c = Change::new(row.state.status, S::Cancelled, reason.clone(), "terminate")
                    .events(&[E::SessionCancelled]);
                if transition(lifecycle, id, c)?.is_some() {
                    return Ok(S::Cancelled);
                }
            }
            S::Preparing | S::Pulling | S::Prepared | S::Creating => {
                // The launch task finishes the termination when it notices.
                let c = Change::new(
                    row.state.status,
                    S::Terminating,
                    reason.clone(),
                    "terminate",
                )
                .events(&[E::SessionTerminating])
                .result(result, None);
                if transition(lifecycle, id, c)?.is_some() {
                    return wait_until_ended(lifecycle, id).await;
                }
            }
            S::Running | S::Restarting | S::RunningDegraded | S::Preempted | S::Error => {
                let c = Change::new(
                    row.state.status,
                    S::Terminating,
                    reason.clone(),
                    "terminate",
                )
                .events(&[E::SessionTerminating, E::KernelTerminating])
                .result(result, None);
                if let Some(row) = transition(lifecycle, id, c)? {
                    // A task of its own: a caller that hangs up (a client killed during
                    // `bai rm`) drops this future, and the kernels' removal must go on.
                    let (owned, row) = (lifecycle.clone(), row.clone());
                    let work =
                        tokio::spawn(async move { finish_termination(&owned, &row, true).await });
                    if let Err(e) = work.await {
                        tracing::error!(session = %id, error = %e, "the termination task failed");
                    }
                    return current_status(lifecycle, id);
                }
            }
            S::Terminating => return wait_until_ended(lifecycle, id).await,
            S::Terminated | S::Cancelled => return Ok(row.state.status),
        }
        // Lost a race: look again.
        tokio::task::yield_now().await;
    }
    Err(Problem::internal(
        "the session kept changing status while being terminated; try again",
    ))
}

fn current_status(lifecycle: &Lifecycle, id: Uuid) -> Result<S, Problem> {
    Ok(lifecycle
        .store
        .session(id)?
        .map(|r| r.state.status)
        .unwrap_or(S::Terminated))
}

async fn wait_until_ended(lifecycle: &Arc<Lifecycle>, id: Uuid) -> Result<S, Problem> {
    let mut rx = lifecycle.bus.subscribe();
    let deadline = tokio::time::Instant::now()
        + Duration::from_secs(lifecycle.config.create_timeout_secs + 30);
    loop {
        let st = current_status(lifecycle, id)?;
        if st.is_terminal() || st == S::Error {
            return Ok(st);
        }
        let wait = tokio::time::timeout_at(
            deadline.min(tokio::time::Instant::now() + Duration::from_millis(500)),
            rx.recv(),
        );
        if wait.await.is_err() && tokio::time::Instant::now() >= deadline {
            return Ok(st);
        }
    }
}

/// Destroys the kernels of a TERMINATING session (when they were created), keeps their logs and
/// marks it TERMINATED, with SUCCESS/FAILURE events for batch sessions.
pub async fn finish_termination(
    lifecycle: &Arc<Lifecycle>,
    row: &SessionRow,
    kernel_created: bool,
) {
    let mut exit_code = row.state.exit_code;
    if kernel_created && let Some(exit) = super::kernels::destroy_all(lifecycle, row).await {
        exit_code = exit_code.or(exit.exit_code);
    }
    bai_ground::stats::view::keep_last_stat(&lifecycle.readings, row);
    match mark_terminated(lifecycle, row, exit_code) {
        Ok(()) => {}
        // The store cannot write now (its disk is full, say): tried again, less often each
        // time, until it can, so the session does not wait for the sweeper.
        Err(super::transition::TransitionError::Store(e)) => {
            tracing::warn!(session = %row.id, error = %e, "cannot mark the session terminated now; trying again until the store answers");
            let lifecycle = lifecycle.clone();
            let id = row.id;
            super::retry::until_done(move || {
                let lifecycle = lifecycle.clone();
                async move {
                    match lifecycle.store.session(id) {
                        Ok(Some(r)) if r.state.status == S::Terminating => {
                            mark_terminated(&lifecycle, &r, exit_code).is_ok()
                        }
                        Ok(_) => true,
                        Err(_) => false,
                    }
                }
            });
        }
        Err(e) => {
            tracing::error!(session = %row.id, error = %e, "could not mark session terminated")
        }
    }
}

/// TERMINATING → TERMINATED with the reason the session is ending for, and its result.
fn mark_terminated(
    lifecycle: &Lifecycle,
    row: &SessionRow,
    exit_code: Option<i32>,
) -> Result<(), super::transition::TransitionError> {
    let reason = row
        .state
        .status_info
        .as_deref()
        .map(Reason::parse)
        .unwrap_or(Reason::UserRequested);
    let result = row.state.result;
    let mut events = vec![E::KernelTerminated];
    if row.spec.session_type == SessionType::Batch {
        events.push(if result == SessionResult::Success {
            E::SessionSuccess
        } else {
            E::SessionFailure
        });
    }
    events.push(E::SessionTerminated);
    let c = Change::new(S::Terminating, S::Terminated, reason, "terminate")
        .events(&events)
        .result(result, exit_code);
    transition(lifecycle, row.id, c).map(drop)
}

//! Preempting: the victims the scheduler chose are marked PREEMPTED together (or none is),
//! their processes get SIGTERM, and when the grace is over (or their kernels ended by
//! themselves) their kernels are destroyed; each then ends, or (`--requeue`) goes back to
//! PENDING with its id and name and new kernels, not to start again before its preemptor.
//!
//! The mark is the one durable step: a manager that dies after it finishes the preemption
//! at its next start ([`resume`], from the reconciliation), a manager that dies before it
//! leaves every victim running.

use super::Lifecycle;
use super::transition::{Change, TransitionError, transition};
use bai_core::Reason;
use bai_core::event::EventKind as E;
use bai_core::status::{SessionResult, SessionStatus as S, SessionType};
use bai_store::SessionRow;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// How often a victim in its grace is looked at (did its kernel end by itself?).
const WATCH_EVERY: Duration = Duration::from_millis(250);

/// Marks `victims` PREEMPTED for `preemptor` and begins their grace. False when the mark
/// was refused (a victim ended or changed meanwhile: none of them is touched).
pub fn begin(
    lifecycle: &Arc<Lifecycle>,
    preemptor: Uuid,
    victims: &[Uuid],
    why: &str,
    grace: Duration,
) -> Result<bool, bai_store::StoreError> {
    bai_fault::point("preempt:before-mark");
    let Some(marked) = lifecycle.store.preempt(preemptor, victims, why)? else {
        return Ok(false);
    };
    bai_fault::point("preempt:after-mark");
    for (row, events) in marked {
        lifecycle.bus.publish(events);
        tracing::info!(session = %row.id, %preemptor, why, "preempted");
        spawn(lifecycle.clone(), row, grace);
    }
    Ok(true)
}

/// Finishes the preemption of a session found PREEMPTED (after a manager restart): its
/// grace counts from when it was marked.
pub fn resume(lifecycle: &Arc<Lifecycle>, row: SessionRow, grace: Duration) {
    spawn(lifecycle.clone(), row, grace);
}

/// When the grace of `row` (marked PREEMPTED) is over.
fn deadline(row: &SessionRow, grace: Duration) -> tokio::time::Instant {
    let since = row
        .state
        .status_history
        .get(&S::Preempted)
        .map_or(0, |t| super::timeouts::age_secs(t).max(0));
    tokio::time::Instant::now() + grace.saturating_sub(Duration::from_secs(since as u64))
}

fn spawn(lifecycle: Arc<Lifecycle>, row: SessionRow, grace: Duration) {
    tokio::spawn(async move {
        let until = deadline(&row, grace);
        let kernels = super::kernels::kernels_at(&lifecycle, &row);
        for k in &kernels {
            let Some(agent) = k.agent.as_deref().and_then(|a| lifecycle.agents.get(a)) else {
                continue;
            };
            if let Err(e) = agent.rpc.terminate_processes(k.id).await {
                tracing::warn!(session = %row.id, kernel = %k.id, error = %e, "cannot send SIGTERM to a preempted kernel; it ends at the end of its grace");
            }
        }
        // The grace: until it is over, the main kernel ended by itself, or someone else
        // (a `bai rm`) took the session out of PREEMPTED.
        loop {
            if tokio::time::Instant::now() >= until || main_ended(&lifecycle, &row) {
                break;
            }
            match lifecycle.store.session(row.id) {
                Ok(Some(r)) if r.state.status != S::Preempted => return,
                Ok(None) => return,
                _ => {}
            }
            tokio::time::sleep(WATCH_EVERY.min(until - tokio::time::Instant::now())).await;
        }
        super::kernels::destroy_all(&lifecycle, &row).await;
        if let Ok(mut early) = lifecycle.early_exits.lock() {
            early.remove(&row.main_kernel_id);
        }
        let id = row.id;
        if finish(&lifecycle, id).is_err() {
            // The store cannot write now: tried again until it can.
            super::retry::until_done(move || {
                let lifecycle = lifecycle.clone();
                async move { finish(&lifecycle, id).is_ok() }
            });
        }
    });
}

/// Whether the main kernel's end was reported while the session was PREEMPTED.
fn main_ended(lifecycle: &Lifecycle, row: &SessionRow) -> bool {
    lifecycle
        .early_exits
        .lock()
        .map(|e| e.contains_key(&row.main_kernel_id))
        .unwrap_or(false)
}

/// The preempted session, its kernels gone: back to PENDING (`--requeue`) or ended.
fn finish(lifecycle: &Arc<Lifecycle>, id: Uuid) -> Result<(), TransitionError> {
    let Some(now) = lifecycle.store.session(id)? else {
        return Ok(());
    };
    if now.state.status != S::Preempted {
        return Ok(());
    }
    let reason = now
        .state
        .status_info
        .as_deref()
        .map(Reason::parse)
        .unwrap_or_else(|| Reason::Other("preempted".into()));
    let change = if now.spec.requeue {
        Change::new(S::Preempted, S::Pending, reason, "preempt").events(&[E::SessionEnqueued])
    } else {
        let events: &[E] = if now.spec.session_type == SessionType::Batch {
            &[E::KernelTerminated, E::SessionFailure, E::SessionTerminated]
        } else {
            &[E::KernelTerminated, E::SessionTerminated]
        };
        Change::new(S::Preempted, S::Terminated, reason, "preempt")
            .events(events)
            .result(SessionResult::Failure, None)
    };
    transition(lifecycle, id, change).map(drop)
}

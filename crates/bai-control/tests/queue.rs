//! The queue's decisions as a session's status shows them, through the control plane with
//! the dummy agent: a session waits, saying why, while its dependency runs; it starts once
//! the dependency ended successfully, and is cancelled, with the scheduler's reason, once the
//! dependency failed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod harness;

use bai_core::Reason;
use bai_core::spec::SessionSpec;
use bai_core::status::{SessionStatus as S, SessionType};
use harness::Plane;

/// A batch session that runs until the test ends its kernel.
fn batch(s: &mut SessionSpec) {
    s.session_type = SessionType::Batch;
    s.startup_command = Some("sleep 100000".into());
}

/// Starts `first`, then `next` depending on it, and waits until the scheduler says why
/// `next` waits. Returns `first`'s main kernel and `next`'s id.
async fn queued_behind_a_dependency(h: &Plane) -> (uuid::Uuid, uuid::Uuid) {
    let first = h.create("first", batch);
    let first = h.wait_status(first.id, S::Running).await;
    let next = h.create("next", |s| s.dependencies = vec!["first".into()]);
    let waiting = h
        .wait(next.id, "the scheduler's reason", |r| {
            r.state
                .status_info
                .as_deref()
                .is_some_and(|i| i.starts_with("dependency-not-finished"))
        })
        .await;
    assert_eq!(waiting.state.status, S::Pending);
    assert_eq!(h.agent.live(), [first.main_kernel_id], "only first runs");
    (first.main_kernel_id, next.id)
}

#[tokio::test(start_paused = true)]
async fn a_session_starts_once_its_dependency_succeeded() {
    let h = Plane::start().await;
    let (first_kernel, next) = queued_behind_a_dependency(&h).await;
    assert!(h.agent.exit(first_kernel, 0, false));
    let row = h.wait_status(next, S::Running).await;
    assert_eq!(h.agent.live(), [row.main_kernel_id]);
}

#[tokio::test(start_paused = true)]
async fn a_session_whose_dependency_failed_is_cancelled() {
    let h = Plane::start().await;
    let (first_kernel, next) = queued_behind_a_dependency(&h).await;
    assert!(h.agent.exit(first_kernel, 1, false));
    let row = h.wait_status(next, S::Cancelled).await;
    match row.state.status_info.as_deref().map(Reason::parse) {
        Some(Reason::Scheduler { code, .. }) => assert_eq!(code, "dependency-failed"),
        other => panic!("{other:?}"),
    }
    assert_eq!(h.count_events(next, "session_cancelled"), 1);
    assert_eq!(h.entered(next, S::Running), 0);
    assert!(h.agent.live().is_empty());
}

//! The session lifecycle in process: every path through the state machine and the races
//! between its actors (a user's `rm`, the scheduler, the launch, an agent's exit report),
//! driven through the control plane with the scriptable dummy agent on a paused clock.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod harness;

use bai_agent::CreateStep;
use bai_core::Reason;
use bai_core::SessionResult;
use bai_core::status::SessionStatus as S;
use bai_core::status::SessionType;
use harness::Plane;

#[tokio::test(start_paused = true)]
async fn a_session_passes_every_creation_phase_in_order() {
    let h = Plane::start().await;
    let s = h.create("happy", |_| {});
    let row = h.wait_status(s.id, S::Running).await;
    let phases: Vec<S> = row.state.status_history.keys().copied().collect();
    assert_eq!(
        phases,
        [
            S::Pending,
            S::Scheduled,
            S::Preparing,
            S::Prepared,
            S::Creating,
            S::Running
        ]
    );
    assert_eq!(
        h.events(s.id),
        [
            "session_enqueued",
            "session_scheduled",
            "session_preparing",
            "kernel_preparing",
            "kernel_creating",
            "kernel_started",
            "session_started"
        ]
    );
    assert_eq!(h.agent.live(), [row.main_kernel_id]);
    assert_eq!(h.terminate(s.id).await, S::Terminated);
    assert!(h.agent.live().is_empty());
    assert_eq!(
        h.row(s.id).state.status_info.as_deref().map(Reason::parse),
        Some(Reason::UserRequested)
    );
}

#[tokio::test(start_paused = true)]
async fn a_failed_creation_ends_in_error_with_the_agents_words() {
    let h = Plane::start().await;
    h.script([CreateStep::Fail("no space left on device".into())]);
    let s = h.create("failing", |_| {});
    let row = h.wait_status(s.id, S::Error).await;
    assert_eq!(
        row.state.status_info.as_deref().map(Reason::parse),
        Some(Reason::CreationFailed(
            "container runtime error: no space left on device".into()
        ))
    );
    assert!(h.events(s.id).contains(&"session_failure".to_string()));
    assert!(h.agent.live().is_empty());
    // An errored session can still be removed.
    assert_eq!(h.terminate(s.id).await, S::Terminated);
}

#[tokio::test(start_paused = true)]
async fn a_creation_that_never_answers_times_out() {
    let h = Plane::start().await;
    h.script([CreateStep::Hang]);
    let s = h.create("hanging", |_| {});
    let row = h.wait_status(s.id, S::Error).await;
    assert_eq!(
        row.state.status_info.as_deref().map(Reason::parse),
        Some(Reason::CreationTimeout { secs: 120 })
    );
    // Out of time is EXPIRED in the scheduling history (Backend.AI's result for a timeout).
    let last = h.store.history(s.id).expect("history");
    let last = last.last().expect("a record");
    assert_eq!(
        (last.result, last.error_code.as_deref()),
        (
            bai_core::history::HistoryResult::Expired,
            Some("creation-timeout")
        )
    );
    // The abandoned creation never starts a kernel behind the manager's back.
    h.agent.release();
    tokio::task::yield_now().await;
    assert!(h.agent.live().is_empty());
}

#[tokio::test(start_paused = true)]
async fn kernel_exits_end_sessions_with_their_reason_and_result() {
    let h = Plane::start().await;
    let oom = h.create("oomkill", |_| {});
    let batch = |s: &mut bai_core::spec::SessionSpec| {
        s.session_type = SessionType::Batch;
        s.startup_command = Some("sleep 100000".into());
    };
    let batch_fail = h.create("batchfail", batch);
    let batch_ok = h.create("batchok", batch);
    for (s, code, oom_killed) in [
        (&oom, 137, true),
        (&batch_fail, 2, false),
        (&batch_ok, 0, false),
    ] {
        let row = h.wait_status(s.id, S::Running).await;
        assert!(h.agent.exit(row.main_kernel_id, code, oom_killed));
    }
    let want = [
        (&oom, Reason::OutOfMemory, SessionResult::Failure, None),
        (
            &batch_fail,
            Reason::TaskFailed(2),
            SessionResult::Failure,
            Some("session_failure"),
        ),
        (
            &batch_ok,
            Reason::TaskFinished,
            SessionResult::Success,
            Some("session_success"),
        ),
    ];
    for (s, reason, result, event) in want {
        let row = h.wait_status(s.id, S::Terminated).await;
        assert_eq!(
            row.state.status_info.as_deref().map(Reason::parse),
            Some(reason)
        );
        assert_eq!(row.state.result, result, "{}", row.name);
        if let Some(e) = event {
            assert!(h.events(s.id).contains(&e.to_string()), "{}", row.name);
        }
    }
}

/// The user removes a session while its kernel is being created: the launch notices at its
/// next step, destroys the kernel it made, and the session ends TERMINATED without ever
/// being RUNNING.
#[tokio::test(start_paused = true)]
async fn rm_during_creation_destroys_the_new_kernel_once() {
    let h = Plane::start().await;
    h.script([CreateStep::Hang]);
    let s = h.create("rm-creating", |_| {});
    h.agent.wait_asked(1).await;
    assert_eq!(h.row(s.id).state.status, S::Creating);
    let rm = h.spawn_terminate(s.id);
    h.wait_status(s.id, S::Terminating).await;
    h.agent.release();
    assert_eq!(rm.await.expect("join").expect("terminate"), S::Terminated);
    let row = h.wait_status(s.id, S::Terminated).await;
    assert_eq!(h.entered(s.id, S::Running), 0);
    assert_eq!(h.agent.destroyed(), [row.main_kernel_id]);
    assert!(h.agent.live().is_empty());
    let ended = h
        .events(s.id)
        .iter()
        .filter(|e| *e == "session_terminated")
        .count();
    assert_eq!(ended, 1);
}

/// The user's `rm` hangs up while its kernel is being destroyed (a client killed, a dropped
/// connection): the removal goes on and the session ends at once, not when the sweeper
/// finds it stuck in TERMINATING.
#[tokio::test(start_paused = true)]
async fn a_removal_whose_caller_hangs_up_goes_on() {
    let h = Plane::start().await;
    let s = h.create("rm-hangs-up", |_| {});
    let row = h.wait_status(s.id, S::Running).await;
    h.agent.hold_destroys(true);
    let rm = h.spawn_terminate(s.id);
    h.wait_status(s.id, S::Terminating).await;
    // The caller goes away while the destroy is held on the agent.
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    rm.abort();
    assert!(rm.await.is_err_and(|e| e.is_cancelled()));
    h.agent.release();
    // A few milliseconds, far below the sweeper's bound: only a removal still under way
    // can end it now.
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    assert_eq!(h.agent.destroyed(), [row.main_kernel_id]);
    assert_eq!(h.row(s.id).state.status, S::Terminated);
}

/// The kernel ends by itself at the moment the user removes the session: one of them wins,
/// the session ends once (one TERMINATED record, one `session_terminated` event).
#[tokio::test(start_paused = true)]
async fn agent_exit_racing_rm_ends_the_session_once() {
    let h = Plane::start().await;
    let s = h.create("exit-vs-rm", |_| {});
    let row = h.wait_status(s.id, S::Running).await;
    let rm = h.spawn_terminate(s.id);
    h.agent.exit(row.main_kernel_id, 0, false);
    let st = rm.await.expect("join").expect("terminate");
    assert_eq!(st, S::Terminated);
    let row = h.wait_status(s.id, S::Terminated).await;
    assert_eq!(h.entered(s.id, S::Terminated), 1);
    let ended = h
        .events(s.id)
        .iter()
        .filter(|e| *e == "session_terminated")
        .count();
    assert_eq!(ended, 1, "{:?}", h.events(s.id));
    let reason = row.state.status_info.as_deref().map(Reason::parse);
    assert!(
        matches!(
            reason,
            Some(Reason::UserRequested | Reason::SelfTerminated(None))
        ),
        "{reason:?}"
    );
    assert!(h.agent.live().is_empty());
}

/// Users remove sessions while the scheduler places them: every session ends CANCELLED (it
/// was still queued) or TERMINATED (it had been placed), once, and no kernel is left.
#[tokio::test(start_paused = true)]
async fn rm_racing_the_scheduler_never_leaves_a_kernel() {
    let h = Plane::start().await;
    let sessions: Vec<_> = (0..12)
        .map(|i| h.create(&format!("race-{i:02}"), |_| {}))
        .collect();
    let rms: Vec<_> = sessions.iter().map(|s| h.spawn_terminate(s.id)).collect();
    for (s, rm) in sessions.iter().zip(rms) {
        let st = rm.await.expect("join").expect("terminate");
        assert!(
            matches!(st, S::Cancelled | S::Terminated),
            "{}: {st}",
            s.name
        );
        let row = h
            .wait(s.id, "ended", |r| r.state.status.is_terminal())
            .await;
        let finals = h
            .events(s.id)
            .iter()
            .filter(|e| *e == "session_terminated" || *e == "session_cancelled")
            .count();
        assert_eq!(finals, 1, "{}: {:?}", row.name, h.events(s.id));
    }
    assert!(h.agent.live().is_empty(), "{:?}", h.agent.live());
}

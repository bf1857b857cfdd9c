//! A control plane that starts again (after a crash) finds sessions in every intermediate status:
//! each ends RUNNING, queued, or ended with a reason, and no kernel is doubled or left.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod harness;

use bai_core::Reason;
use bai_core::agent::{AgentRpc, KernelSpec};
use bai_core::status::SessionStatus as S;
use bai_store::{NewSession, StatusChange, Store};
use harness::Plane;
use std::sync::Arc;

fn queued(name: &str) -> NewSession {
    let mut n = bai_store::testing::new_session(name, "AKUSER", "u1");
    n.spec.image = harness::IMAGE.into();
    n
}

/// Leaves a session in `at` as a crashed manager would: moved there through the legal path,
/// with no task behind it.
fn crashed_at(store: &Store, name: &str, at: S) -> NewSession {
    let n = queued(name);
    store.insert_session(&n).expect("insert");
    let path = [
        S::Pending,
        S::Scheduled,
        S::Preparing,
        S::Prepared,
        S::Creating,
        S::Running,
        S::Terminating,
    ];
    let route: Vec<S> = if at == S::Pulling {
        vec![S::Pending, S::Scheduled, S::Preparing, S::Pulling]
    } else {
        let end = path.iter().position(|s| *s == at).expect("on the path");
        path[..=end].to_vec()
    };
    for w in route.windows(2) {
        let c = StatusChange::new(w[0], w[1], Reason::Other("crash test".into()), "test")
            .agent("dummy-a");
        store.cas_status(n.id, &c).expect("legal").expect("moved");
    }
    n
}

fn spec(n: &NewSession) -> KernelSpec {
    KernelSpec {
        kernel_id: n.main_kernel_id,
        session_id: n.id,
        session_name: n.name.clone(),
        session_type: n.spec.session_type,
        image: n.spec.image.clone(),
        slots: n.spec.requested_slots.clone(),
        shmem: n.spec.shmem,
        environ: Default::default(),
        startup_command: None,
        bootstrap_script: None,
        owner_access_key: n.spec.access_key.clone(),
        mounts: Vec::new(),
        cluster: None,
        egress: Default::default(),
        dotfiles: Vec::new(),
    }
}

/// What the restarted control plane makes of a session left in `at`, with or without its kernel
/// still on the agent.
async fn after_restart(at: S, kernel_alive: bool) -> (Plane, NewSession) {
    let store = harness::store();
    let agent = harness::agent();
    let n = crashed_at(&store, &format!("crash-{}", at.as_str().to_lowercase()), at);
    if kernel_alive {
        agent.create_kernel(spec(&n)).await.expect("kernel");
    }
    let h = Plane::start_on(Arc::clone(&store), agent, harness::config()).await;
    (h, n)
}

#[tokio::test(start_paused = true)]
async fn creation_phases_are_requeued_and_run_once() {
    for at in [
        S::Scheduled,
        S::Preparing,
        S::Pulling,
        S::Prepared,
        S::Creating,
    ] {
        // A crash in SCHEDULED comes before any kernel was asked for.
        let alive_cases: &[bool] = if at == S::Scheduled {
            &[false]
        } else {
            &[false, true]
        };
        for &kernel_alive in alive_cases {
            let (h, n) = after_restart(at, kernel_alive).await;
            let row = h.wait_status(n.id, S::Running).await;
            // One kernel, the session's own: a partial one was destroyed first.
            assert_eq!(
                h.agent.live(),
                [row.main_kernel_id],
                "{at} alive={kernel_alive}"
            );
            assert_eq!(h.entered(n.id, S::Running), 1, "{at}");
            // The partial kernel was destroyed before the session was placed again.
            let destroyed: &[uuid::Uuid] = if kernel_alive {
                &[n.main_kernel_id]
            } else {
                &[]
            };
            assert_eq!(h.agent.destroyed(), destroyed, "{at} alive={kernel_alive}");
            if at != S::Scheduled {
                let requeued = h
                    .store
                    .history(n.id)
                    .expect("history")
                    .iter()
                    .any(|r| r.message.starts_with("requeued: "));
                assert!(requeued, "{at}: requeued");
                // The next launch made a kernel of its own: nothing left of the interrupted
                // one (a late removal, a late exit) names it.
                assert_ne!(row.main_kernel_id, n.main_kernel_id, "{at}: new kernel id");
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_running_session_keeps_its_kernel_or_ends_as_lost() {
    let (h, n) = after_restart(S::Running, true).await;
    assert_eq!(h.row(n.id).state.status, S::Running);
    assert!(
        h.agent.asked().len() == 1,
        "no second kernel: {:?}",
        h.agent.asked()
    );
    assert_eq!(h.agent.live(), [n.main_kernel_id]);

    let (h, n) = after_restart(S::Running, false).await;
    let row = h.wait_status(n.id, S::Terminated).await;
    assert_eq!(
        row.state.status_info.as_deref().map(Reason::parse),
        Some(Reason::KernelLost("its container is gone".into()))
    );
}

#[tokio::test(start_paused = true)]
async fn a_termination_in_flight_is_finished() {
    for kernel_alive in [true, false] {
        let (h, n) = after_restart(S::Terminating, kernel_alive).await;
        h.wait_status(n.id, S::Terminated).await;
        assert!(h.agent.live().is_empty(), "alive={kernel_alive}");
        let ended = h
            .events(n.id)
            .iter()
            .filter(|e| *e == "session_terminated")
            .count();
        assert_eq!(ended, 1);
    }
}

/// A kernel no session owns (its session ended while the manager was down) is removed.
#[tokio::test(start_paused = true)]
async fn orphan_kernels_are_removed() {
    let store = harness::store();
    let agent = harness::agent();
    let n = queued("orphan");
    agent.create_kernel(spec(&n)).await.expect("kernel");
    let h = Plane::start_on(store, agent, harness::config()).await;
    assert!(h.agent.live().is_empty());
    assert_eq!(h.agent.destroyed(), [n.main_kernel_id]);
}

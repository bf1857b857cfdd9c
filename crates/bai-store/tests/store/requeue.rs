//! Sessions sent back to the queue or preempted: a requeued session's kernels, and the
//! victims of a preemption marked together.

use super::{change, new_session, store_with_user};
use bai_core::event::EventKind;
use bai_core::status::SessionStatus;
use bai_store::{PassEntry, PassWrite, StatusChange, Store};
use uuid::Uuid;

#[test]
fn a_requeued_session_gets_new_kernel_ids_and_keeps_its_sub_kernels_places() {
    let s = store_with_user();
    let mut a = new_session("requeued");
    a.spec.cluster_mode = bai_core::cluster::ClusterMode::MultiNode;
    a.spec.cluster_size = 3;
    a.sub_kernels = vec![Uuid::new_v4(), Uuid::new_v4()];
    s.insert_session(&a).unwrap();
    s.apply_pass(&[PassEntry {
        id: a.id,
        write: PassWrite::Placed {
            agent: "n1".into(),
            subs: vec!["n2".into(), "n1".into()],
        },
        sub_steps: "[]".into(),
    }])
    .unwrap();
    let first = s.sub_kernels(a.id).unwrap();
    s.set_sub_kernel_started(first[0].id, "n2", "c-old")
        .unwrap();
    s.set_sub_kernel_exit(first[0].id, Some(3), "old logs")
        .unwrap();
    let (row, _) = s
        .cas_status(
            a.id,
            &StatusChange::new(
                SessionStatus::Scheduled,
                SessionStatus::Pending,
                bai_core::Reason::Requeued("test".into()),
                "test",
            ),
        )
        .unwrap()
        .unwrap();
    assert_ne!(row.main_kernel_id, a.main_kernel_id);
    assert_eq!(
        s.session(a.id).unwrap().unwrap().main_kernel_id,
        row.main_kernel_id
    );
    let again = s.sub_kernels(a.id).unwrap();
    assert_eq!(again.len(), 2);
    for (old, new) in first.iter().zip(&again) {
        assert_ne!(old.id, new.id, "sub{} kept its id", old.idx);
        assert_eq!((old.idx, &old.agent_id), (new.idx, &new.agent_id));
        assert_eq!((new.container_id.as_deref(), new.exit_code), (None, None));
    }
    assert_eq!(s.sub_kernel_logs(first[0].id).unwrap(), None);
    assert_eq!(s.sub_kernel_logs(again[0].id).unwrap(), None);
    // Any other change keeps the kernels.
    let (row2, _) = s
        .cas_status(
            a.id,
            &change(SessionStatus::Pending, SessionStatus::Scheduled),
        )
        .unwrap()
        .unwrap();
    assert_eq!(row2.main_kernel_id, row.main_kernel_id);
    assert_eq!(s.sub_kernels(a.id).unwrap(), again);
}

/// Brings a new session to RUNNING through the door.
fn running(s: &Store, name: &str) -> Uuid {
    let n = new_session(name);
    s.insert_session(&n).unwrap();
    for (from, to) in [
        (SessionStatus::Pending, SessionStatus::Scheduled),
        (SessionStatus::Scheduled, SessionStatus::Preparing),
        (SessionStatus::Preparing, SessionStatus::Prepared),
        (SessionStatus::Prepared, SessionStatus::Creating),
        (SessionStatus::Creating, SessionStatus::Running),
    ] {
        s.cas_status(n.id, &change(from, to)).unwrap().unwrap();
    }
    n.id
}

#[test]
fn the_victims_of_a_preemption_are_marked_all_together_or_not_at_all() {
    let s = store_with_user();
    let a = running(&s, "victim-a");
    let b = running(&s, "victim-b");
    let urgent = new_session("urgent");
    s.insert_session(&urgent).unwrap();
    // One of them ended meanwhile: nothing is marked.
    let gone = running(&s, "gone");
    s.cas_status(
        gone,
        &change(SessionStatus::Running, SessionStatus::Terminating),
    )
    .unwrap()
    .unwrap();
    assert!(
        s.preempt(urgent.id, &[a, gone], "priority 80 over 5")
            .unwrap()
            .is_none()
    );
    assert_eq!(
        s.session(a).unwrap().unwrap().state.status,
        SessionStatus::Running
    );

    let marked = s
        .preempt(urgent.id, &[a, b], "priority 80 over 5")
        .unwrap()
        .unwrap();
    assert_eq!(marked.len(), 2);
    for id in [a, b] {
        let row = s.session(id).unwrap().unwrap();
        assert_eq!(row.state.status, SessionStatus::Preempted);
        assert_eq!(row.state.preempted_by, Some(urgent.id));
        assert_eq!(
            row.state.status_info.as_deref(),
            Some(format!("preempted: for session {} (priority 80 over 5)", urgent.id).as_str())
        );
        assert!(
            s.events_of(id)
                .unwrap()
                .iter()
                .any(|e| e.kind == EventKind::SessionPreempted)
        );
    }
    // A second mark of the same victims changes nothing.
    assert!(s.preempt(urgent.id, &[a], "again").unwrap().is_none());

    // Requeued, `a` waits behind its preemptor while that one is pending, not after.
    s.cas_status(a, &change(SessionStatus::Preempted, SessionStatus::Pending))
        .unwrap()
        .unwrap();
    assert_eq!(s.requeued_behind().unwrap(), vec![(a, urgent.id)]);
    s.cas_status(
        urgent.id,
        &change(SessionStatus::Pending, SessionStatus::Scheduled),
    )
    .unwrap()
    .unwrap();
    assert!(s.requeued_behind().unwrap().is_empty());
}

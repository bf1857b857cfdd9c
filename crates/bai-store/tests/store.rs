#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect
use bai_core::event::EventKind;
use bai_core::history::HistoryResult;
use bai_core::status::SessionStatus;
use bai_store::{NewSession, PassEntry, PassWrite, SessionFilter, StatusChange, Store, UserRow};
use uuid::Uuid;

#[path = "store/accounts.rs"]
mod accounts;
#[path = "store/requeue.rs"]
mod requeue;

fn store_with_user() -> Store {
    let s = Store::open_for_tests().unwrap();
    s.create_user_with_keypair(
        &UserRow {
            id: "u1".into(),
            email: "u@x".into(),
            role: "user".into(),
        },
        "AK1",
        "SK1",
        false,
    )
    .unwrap();
    s
}

fn new_session(name: &str) -> NewSession {
    let mut n = bai_store::testing::new_session(name, "AK1", "u1");
    n.spec.image = "img".into();
    n
}

fn change(from: SessionStatus, to: SessionStatus) -> StatusChange<'static> {
    StatusChange::new(from, to, bai_core::Reason::Other("test".into()), "test")
        .events(&[EventKind::SessionScheduled])
        .agent("agent-1")
}

#[test]
fn cas_moves_once_and_records_history_and_events() {
    let s = store_with_user();
    let n = new_session("first");
    s.insert_session(&n).unwrap();
    let moved = s
        .cas_status(
            n.id,
            &change(SessionStatus::Pending, SessionStatus::Scheduled),
        )
        .unwrap();
    assert!(moved.is_some());
    // A second actor with a stale view changes nothing.
    let again = s
        .cas_status(
            n.id,
            &change(SessionStatus::Pending, SessionStatus::Scheduled),
        )
        .unwrap();
    assert!(again.is_none());
    let row = s.session(n.id).unwrap().unwrap();
    assert_eq!(row.state.status, SessionStatus::Scheduled);
    assert_eq!(row.state.agent_id.as_deref(), Some("agent-1"));
    assert!(
        row.state
            .status_history
            .contains_key(&SessionStatus::Pending)
            && row
                .state
                .status_history
                .contains_key(&SessionStatus::Scheduled)
    );
    let ev = s.events_of(n.id).unwrap();
    assert_eq!(
        ev.iter().map(|e| e.kind).collect::<Vec<_>>(),
        vec![EventKind::SessionEnqueued, EventKind::SessionScheduled]
    );
    assert_eq!(s.history(n.id).unwrap().len(), 2);
}

#[test]
fn repeated_attempts_merge_and_keep_the_latest_message() {
    let s = store_with_user();
    let n = new_session("merge");
    s.insert_session(&n).unwrap();
    for msg in [
        "cpu short on 2 of 2 agents",
        "cpu short on 1 of 2 agents",
        "cpu short",
    ] {
        s.add_history(
            n.id,
            "schedule",
            HistoryResult::NeedRetry,
            Some("no-available-instances"),
            msg,
        )
        .unwrap();
    }
    s.add_history(
        n.id,
        "schedule",
        HistoryResult::NeedRetry,
        Some("concurrency-limit"),
        "1 of at most 1",
    )
    .unwrap();
    let h = s.history(n.id).unwrap();
    assert_eq!(h.len(), 3);
    assert_eq!(h[1].attempts, 3);
    assert_eq!(h[1].message, "cpu short");
    assert_eq!(h[2].attempts, 1);
    assert_eq!(h[2].error_code.as_deref(), Some("concurrency-limit"));
}

#[test]
fn a_pass_is_committed_as_one_with_sub_steps() {
    let s = store_with_user();
    let (a, b, c) = (
        new_session("placed"),
        new_session("waits"),
        new_session("gives-up"),
    );
    for n in [&a, &b, &c] {
        s.insert_session(n).unwrap();
    }
    let steps = r#"[{"step":"agent_selection","result":"FAILURE","message":"cpu short","error_code":"no-available-instances","started_at":"t","ended_at":"t"}]"#;
    let out = s
        .apply_pass(&[
            PassEntry {
                id: a.id,
                write: PassWrite::Placed {
                    agent: "agent-1".into(),
                    subs: vec![],
                },
                sub_steps: "[]".into(),
            },
            PassEntry {
                id: b.id,
                write: PassWrite::Wait {
                    code: "no-available-instances".into(),
                    info: "no-available-instances: cpu short".into(),
                    message: "cpu short".into(),
                },
                sub_steps: steps.into(),
            },
            PassEntry {
                id: c.id,
                write: PassWrite::GiveUp {
                    code: "dependency-failed".into(),
                    message: "dependency x did not end successfully".into(),
                },
                sub_steps: "[]".into(),
            },
        ])
        .unwrap();
    let placed: Vec<Uuid> = out.placed.iter().map(|(id, _)| *id).collect();
    assert_eq!(placed, vec![a.id]);
    let cancelled: Vec<(Uuid, SessionStatus)> = out
        .cancelled
        .iter()
        .map(|(r, _)| (r.id, r.state.status))
        .collect();
    assert_eq!(cancelled, vec![(c.id, SessionStatus::Cancelled)]);
    let row = s.session(a.id).unwrap().unwrap();
    assert_eq!(row.state.status, SessionStatus::Scheduled);
    assert!(
        row.state
            .status_history
            .contains_key(&SessionStatus::Scheduled)
    );
    assert_eq!(
        s.events_of(a.id).unwrap().last().map(|e| e.kind),
        Some(EventKind::SessionScheduled)
    );
    assert_eq!(
        s.session(a.id).unwrap().unwrap().state.agent_id.as_deref(),
        Some("agent-1")
    );
    let waiting = s.session(b.id).unwrap().unwrap();
    assert_eq!(waiting.state.status, SessionStatus::Pending);
    assert_eq!(
        waiting.state.status_info.as_deref(),
        Some("no-available-instances: cpu short")
    );
    let h = s.history(b.id).unwrap();
    assert_eq!(h[1].result, HistoryResult::NeedRetry);
    assert_eq!(h[1].sub_steps[0].step, "agent_selection");
    let h = s.history(c.id).unwrap();
    assert_eq!(h[1].result, HistoryResult::GiveUp);
    assert_eq!(h[1].error_code.as_deref(), Some("dependency-failed"));
    // A second pass cannot place a session twice.
    let again = s
        .apply_pass(&[PassEntry {
            id: a.id,
            write: PassWrite::Placed {
                agent: "agent-2".into(),
                subs: vec![],
            },
            sub_steps: "[]".into(),
        }])
        .unwrap();
    assert!(again.placed.is_empty());
    assert_eq!(
        s.session(a.id).unwrap().unwrap().state.agent_id.as_deref(),
        Some("agent-1")
    );
    // ... and says so: the second decision was taken on a stale view (STALE, where it is now).
    let h = s.history(a.id).unwrap();
    let last = h.last().unwrap();
    assert_eq!(last.result, HistoryResult::Stale);
    assert_eq!(last.error_code.as_deref(), Some("stale-snapshot"));
    assert_eq!(last.to_status, Some(SessionStatus::Scheduled));
    // Record ids are UUIDs, each its own.
    let mut ids: Vec<Uuid> = h.iter().map(|r| r.id).collect();
    assert!(
        ids.iter().all(|i| !i.is_nil() && i.get_version_num() == 4),
        "{ids:?}"
    );
    ids.dedup();
    assert_eq!(ids.len(), h.len());
    // A session that waited past its group's limit: CANCELLED, recorded as EXPIRED.
    let d = new_session("waited-long");
    s.insert_session(&d).unwrap();
    let out = s
        .apply_pass(&[PassEntry {
            id: d.id,
            write: PassWrite::Expire {
                code: "pending-timeout".into(),
                message: "waited 61s, longer than the 60s resource group default allows".into(),
            },
            sub_steps: "[]".into(),
        }])
        .unwrap();
    assert_eq!(out.cancelled.len(), 1);
    let h = s.history(d.id).unwrap();
    assert_eq!(h.last().map(|r| r.result), Some(HistoryResult::Expired));
    assert_eq!(
        s.session(d.id).unwrap().unwrap().state.status,
        SessionStatus::Cancelled
    );
}

#[test]
fn lookup_by_name_prefix_and_owner() {
    let s = store_with_user();
    let n = new_session("named");
    s.insert_session(&n).unwrap();
    assert_eq!(s.find_session("named", Some("AK1")).unwrap().len(), 1);
    assert!(s.find_session("named", Some("OTHER")).unwrap().is_empty());
    let prefix = &n.id.to_string()[..8];
    assert_eq!(s.find_session(prefix, Some("AK1")).unwrap().len(), 1);
    assert!(s.live_session_named("AK1", "named").unwrap().is_some());
    let (rows, total) = s
        .list_sessions(&SessionFilter {
            statuses: vec![SessionStatus::Pending],
            access_key: None,
            system: false,
            limit: 10,
            offset: 0,
            after: None,
        })
        .unwrap();
    assert_eq!((rows.len(), total), (1, 1));
}

#[test]
fn reopening_a_file_keeps_data() {
    let dir = std::env::temp_dir().join(format!("bai-store-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bai.db");
    {
        let s = Store::open(&path).unwrap();
        s.meta_set("k", "v").unwrap();
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(s.meta_get("k").unwrap().as_deref(), Some("v"));
    std::fs::remove_dir_all(&dir).ok();
}

/// The one door: a change the state machine does not allow is refused with an error and
/// writes nothing (no row change, no history record, no event), whoever asks.
#[test]
fn illegal_changes_are_refused_and_write_nothing() {
    let s = store_with_user();
    let n = new_session("illegal");
    s.insert_session(&n).unwrap();
    let before = (
        s.history(n.id).unwrap().len(),
        s.events_of(n.id).unwrap().len(),
    );
    for to in [
        SessionStatus::Running,
        SessionStatus::Terminated,
        SessionStatus::Creating,
    ] {
        let err = s
            .cas_status(n.id, &change(SessionStatus::Pending, to))
            .unwrap_err();
        assert!(
            matches!(err, bai_store::StoreError::IllegalTransition { from: SessionStatus::Pending, to: t } if t == to),
            "{err}"
        );
    }
    let row = s.session(n.id).unwrap().unwrap();
    assert_eq!(row.state.status, SessionStatus::Pending);
    assert_eq!(
        before,
        (
            s.history(n.id).unwrap().len(),
            s.events_of(n.id).unwrap().len()
        )
    );
}

/// Reasons are stored as Backend.AI's text and read back typed; the history of statuses is
/// keyed by status, in lifecycle order.
#[test]
fn reasons_and_status_history_are_typed() {
    let s = store_with_user();
    let n = new_session("typed");
    s.insert_session(&n).unwrap();
    let row = s.session(n.id).unwrap().unwrap();
    assert_eq!(row.state.status_info.as_deref(), Some("enqueued"));
    let c = StatusChange::new(
        SessionStatus::Pending,
        SessionStatus::Cancelled,
        bai_core::Reason::Scheduler {
            code: "dependency-failed".into(),
            message: "prep ended with FAILURE".into(),
        },
        "schedule",
    );
    let (row, _) = s.cas_status(n.id, &c).unwrap().unwrap();
    assert_eq!(
        row.state.status_info.as_deref(),
        Some("dependency-failed: prep ended with FAILURE")
    );
    let keys: Vec<_> = row.state.status_history.keys().copied().collect();
    assert_eq!(keys, [SessionStatus::Pending, SessionStatus::Cancelled]);
    let wire = serde_json::to_value(&row.state.status_history).unwrap();
    assert!(wire["PENDING"].is_string() && wire["CANCELLED"].is_string());
}

#[test]
fn a_new_session_whose_kernels_do_not_match_its_cluster_size_is_refused() {
    let s = store_with_user();
    let mut a = new_session("mismatched");
    a.spec.cluster_size = 3;
    let err = s.insert_session(&a).unwrap_err();
    assert!(
        err.to_string().contains("0 sub kernels for a cluster of 3"),
        "{err}"
    );
    assert!(s.session(a.id).unwrap().is_none(), "nothing was stored");
    // `NewSession::new` makes the kernels the spec asks for.
    let b = NewSession::new("matched", a.spec.clone());
    assert_eq!(b.sub_kernels.len(), 2);
    s.insert_session(&b).unwrap();
    assert_eq!(s.session(b.id).unwrap().unwrap().spec.cluster_size, 3);
}

#[test]
fn multi_node_placements_and_overlay_slots() {
    let s = store_with_user();
    let mut a = new_session("multi-a");
    a.spec.cluster_mode = bai_core::cluster::ClusterMode::MultiNode;
    a.spec.cluster_size = 3;
    a.sub_kernels = vec![Uuid::new_v4(), Uuid::new_v4()];
    let b = new_session("multi-b");
    s.insert_session(&a).unwrap();
    s.insert_session(&b).unwrap();
    assert_eq!(s.pending_queue().unwrap()[0].kernels, 3);
    // The pass writes each sub kernel's agent with main1's.
    s.apply_pass(&[PassEntry {
        id: a.id,
        write: PassWrite::Placed {
            agent: "n1".into(),
            subs: vec!["n2".into(), "n1".into()],
        },
        sub_steps: "[]".into(),
    }])
    .unwrap();
    let placed = s
        .multi_node_placements(&[SessionStatus::Scheduled])
        .unwrap();
    assert_eq!(
        placed.get(&a.id).cloned().unwrap_or_default(),
        vec![(1, Some("n2".to_string())), (2, Some("n1".to_string()))]
    );
    assert_eq!(s.sessions_with_subs_on("n2").unwrap(), vec![a.id]);

    // Overlay slots: a free one (where the search starts depends on the session's id), kept
    // by its session, distinct from the others', free again once it ended.
    let slot_a = s.claim_overlay_slot(a.id, 2).unwrap().expect("a slot");
    assert!(slot_a < 2);
    assert_eq!(s.claim_overlay_slot(a.id, 2).unwrap(), Some(slot_a));
    assert_eq!(s.claim_overlay_slot(b.id, 2).unwrap(), Some(1 - slot_a));
    let c = new_session("multi-c");
    s.insert_session(&c).unwrap();
    assert_eq!(s.claim_overlay_slot(c.id, 2).unwrap(), None, "all taken");
    s.cas_status(
        a.id,
        &StatusChange::new(
            SessionStatus::Scheduled,
            SessionStatus::Cancelled,
            bai_core::Reason::Other("test".into()),
            "test",
        ),
    )
    .unwrap();
    assert_eq!(s.claim_overlay_slot(c.id, 2).unwrap(), Some(slot_a));
    // Sessions start their search at different places, not at the lowest free slot: of a
    // hundred over 4,096 slots some land far up (the lowest-free rule would give 2..=101).
    let firsts: std::collections::HashSet<u32> = (0..100)
        .map(|i| {
            let x = new_session(&format!("spread-{i}"));
            s.insert_session(&x).unwrap();
            s.claim_overlay_slot(x.id, 4096).unwrap().expect("a slot")
        })
        .collect();
    assert!(firsts.iter().any(|&x| x >= 1000), "{firsts:?}");
}

#[test]
fn progress_within_a_status_never_overwrites_a_later_reason() {
    let s = store_with_user();
    let n = new_session("pulls");
    s.insert_session(&n).unwrap();
    assert!(
        !s.set_status_info_while(n.id, SessionStatus::Pulling, "12 of 500 MB")
            .unwrap(),
        "not PULLING yet"
    );
    assert_ne!(
        s.session(n.id)
            .unwrap()
            .unwrap()
            .state
            .status_info
            .as_deref(),
        Some("12 of 500 MB")
    );
    assert!(
        s.set_status_info_while(n.id, SessionStatus::Pending, "waiting")
            .unwrap()
    );
    assert_eq!(
        s.session(n.id)
            .unwrap()
            .unwrap()
            .state
            .status_info
            .as_deref(),
        Some("waiting")
    );
}

#[test]
fn an_idempotency_key_names_one_session_and_survives_reopening() {
    let dir = std::env::temp_dir().join(format!("bai-store-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bai.db");
    let first = new_session("once");
    {
        let s = Store::open(&path).unwrap();
        s.create_user_with_keypair(
            &UserRow {
                id: "u1".into(),
                email: "u@x".into(),
                role: "user".into(),
            },
            "AK1",
            "sk",
            false,
        )
        .unwrap();
        s.insert_session_keyed(&first, Some(("retry-1", "digest-a")))
            .unwrap();
        // The same key again inserts nothing, not even the session.
        let again = new_session("twice");
        assert!(
            s.insert_session_keyed(&again, Some(("retry-1", "digest-a")))
                .is_err()
        );
        assert!(s.session(again.id).unwrap().is_none());
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(
        s.session_by_idempotency_key("AK1", "retry-1").unwrap(),
        Some((first.id, "digest-a".to_string()))
    );
    assert_eq!(
        s.session_by_idempotency_key("AK2", "retry-1").unwrap(),
        None
    );
    std::fs::remove_dir_all(&dir).ok();
}

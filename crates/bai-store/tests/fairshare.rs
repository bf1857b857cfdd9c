//! Fair share's records on either engine: usage rows replaced in place per account, the
//! group's tick, shares set and reset, a group's policy kept, and a pending session's
//! account and batch timeout read with the queue.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_store::{ResourceGroupRow, Store, UsageRow, UserRow};

fn row(group: &str, user: &str, usage: f64, at: i64) -> UsageRow {
    UsageRow {
        resource_group: group.into(),
        domain: "default".into(),
        project: "default".into(),
        user_id: user.into(),
        usage,
        updated_ms: at,
    }
}

#[test]
fn usage_rows_are_kept_per_account_and_replaced() {
    let s = Store::open_for_tests().unwrap();
    assert!(s.fairshare_usage(None).unwrap().is_empty());
    assert_eq!(s.fairshare_tick("gpu").unwrap(), None);
    s.charge_fairshare(
        "gpu",
        &[row("gpu", "u1", 10.5, 1000), row("gpu", "u2", 3.0, 1000)],
        1000,
    )
    .unwrap();
    s.charge_fairshare("cpu", &[row("cpu", "u1", 1.0, 1500)], 1500)
        .unwrap();
    // A later charge replaces u1's row in gpu, leaves u2's.
    s.charge_fairshare("gpu", &[row("gpu", "u1", 20.25, 2000)], 2000)
        .unwrap();
    let gpu = s.fairshare_usage(Some("gpu")).unwrap();
    assert_eq!(
        gpu,
        vec![row("gpu", "u1", 20.25, 2000), row("gpu", "u2", 3.0, 1000)]
    );
    assert_eq!(s.fairshare_usage(None).unwrap().len(), 3);
    assert_eq!(s.fairshare_tick("gpu").unwrap(), Some(2000));
    assert_eq!(s.fairshare_tick("cpu").unwrap(), Some(1500));
}

/// A charge of more accounts than one statement carries (256) writes every row, and a later
/// one across the batches' edges replaces exactly its own.
#[test]
fn a_charge_of_many_accounts_writes_every_row() {
    let s = Store::open_for_tests().unwrap();
    let user = |i: usize| format!("u{i:04}");
    let first: Vec<UsageRow> = (0..600)
        .map(|i| row("gpu", &user(i), i as f64, 1000))
        .collect();
    s.charge_fairshare("gpu", &first, 1000).unwrap();
    let again: Vec<UsageRow> = (200..500)
        .map(|i| row("gpu", &user(i), i as f64 + 0.5, 2000))
        .collect();
    s.charge_fairshare("gpu", &again, 2000).unwrap();
    let got = s.fairshare_usage(Some("gpu")).unwrap();
    assert_eq!(got.len(), 600);
    for (i, r) in got.iter().enumerate() {
        let want = if (200..500).contains(&i) {
            row("gpu", &user(i), i as f64 + 0.5, 2000)
        } else {
            row("gpu", &user(i), i as f64, 1000)
        };
        assert_eq!(r, &want);
    }
    assert_eq!(s.fairshare_tick("gpu").unwrap(), Some(2000));
}

#[test]
fn shares_are_set_and_reset() {
    let s = Store::open_for_tests().unwrap();
    s.set_fairshare_share("project", "big", Some(2.0)).unwrap();
    s.set_fairshare_share("user", "u1", Some(0.5)).unwrap();
    s.set_fairshare_share("project", "big", Some(3.0)).unwrap();
    let got: Vec<(String, String, f64)> = s
        .fairshare_shares()
        .unwrap()
        .into_iter()
        .map(|r| (r.level, r.name, r.shares))
        .collect();
    assert_eq!(
        got,
        vec![
            ("project".into(), "big".into(), 3.0),
            ("user".into(), "u1".into(), 0.5)
        ]
    );
    s.set_fairshare_share("project", "big", None).unwrap();
    assert_eq!(s.fairshare_shares().unwrap().len(), 1);
}

#[test]
fn a_group_keeps_its_fairshare_policy_and_pending_rows_name_their_account() {
    let s = Store::open_for_tests().unwrap();
    let mut g = ResourceGroupRow::new("gpu");
    g.scheduler = "fairshare".into();
    g.fairshare = r#"{"half_life_secs":3600}"#.into();
    s.put_resource_group(&g).unwrap();
    let back = s.resource_group("gpu").unwrap().unwrap();
    assert_eq!(back.scheduler, "fairshare");
    assert_eq!(back.fairshare, r#"{"half_life_secs":3600}"#);
    assert_eq!(
        s.resource_group("default").unwrap().unwrap().fairshare,
        "{}"
    );

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
    let n = bai_store::testing::new_session("s1", "AK1", "u1");
    s.insert_session(&n).unwrap();
    let q = s.pending_queue().unwrap();
    assert_eq!(q.len(), 1);
    assert_eq!(q[0].user_id, "u1");
    assert_eq!(q[0].domain_name, n.spec.domain_name);
    assert_eq!(q[0].group_name, n.spec.group_name);
}

#[test]
fn a_batch_sessions_timeout_is_read_with_the_queue() {
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
    let mut batch = bai_store::testing::new_session("batch", "AK1", "u1");
    batch.spec.session_type = bai_core::status::SessionType::Batch;
    batch.spec.batch_timeout = Some(600);
    let plain = bai_store::testing::new_session("plain", "AK1", "u1");
    let mut zero = bai_store::testing::new_session("zero", "AK1", "u1");
    zero.spec.session_type = bai_core::status::SessionType::Batch;
    zero.spec.batch_timeout = Some(0);
    for n in [&batch, &plain, &zero] {
        s.insert_session(n).unwrap();
    }
    let q = s.pending_queue().unwrap();
    let timeout = |id| q.iter().find(|r| r.id == id).unwrap().batch_timeout;
    assert_eq!(timeout(batch.id), Some(600));
    assert_eq!(timeout(plain.id), None);
    // 0 is no timeout, as a running session's end counts it.
    assert_eq!(timeout(zero.id), None);
}

//! What several of the store's test files make: sessions, users, status changes.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]
use bai_core::status::{SessionStatus, SessionType};
use bai_store::{NewSession, StatusChange, Store, UserRow};
use uuid::Uuid;

/// A new session `s{i}` of `owner` (whose user is `u-{owner}`).
pub fn session(i: usize, owner: &str, kind: SessionType) -> NewSession {
    let mut n = bai_store::testing::new_session(&format!("s{i}"), owner, &format!("u-{owner}"));
    n.spec.session_type = kind;
    n
}

/// Moves a session, which must be in `from`.
pub fn moved(s: &Store, id: Uuid, from: SessionStatus, to: SessionStatus) {
    let change = StatusChange::new(from, to, bai_core::Reason::Other("test".into()), "test");
    assert!(s.cas_status(id, &change).unwrap().is_some());
}

/// A store with the users of `owners` (user `u-{owner}`, keypair `owner`).
pub fn store_with(owners: &[&str]) -> Store {
    let s = Store::open_for_tests().unwrap();
    for ak in owners {
        s.create_user_with_keypair(
            &UserRow {
                id: format!("u-{ak}"),
                email: format!("{ak}@x"),
                role: "user".into(),
            },
            ak,
            "SK",
            false,
        )
        .unwrap();
    }
    s
}

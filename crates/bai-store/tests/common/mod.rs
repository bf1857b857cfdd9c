//! What several of the store's test files make: sessions, users, status changes.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]
use bai_core::resources::ResourceSlots;
use bai_core::status::{SessionStatus, SessionType};
use bai_store::{NewSession, StatusChange, Store, UserRow};
use uuid::Uuid;

/// A new session `s{i}` of `owner` (whose user is `u-{owner}`).
pub fn session(i: usize, owner: &str, kind: SessionType) -> NewSession {
    NewSession {
        id: Uuid::new_v4(),
        name: format!("s{i}"),
        access_key: owner.into(),
        user_id: format!("u-{owner}"),
        domain_name: "default".into(),
        group_name: "default".into(),
        scaling_group: "default".into(),
        session_type: kind,
        image: "img".into(),
        tag: None,
        priority: 10,
        starts_at: None,
        batch_timeout: None,
        startup_command: None,
        bootstrap_script: None,
        environ: Default::default(),
        requested_slots: ResourceSlots {
            cpu_milli: 1000,
            mem: 1 << 30,
            accel: Default::default(),
        },
        shmem: 64 << 20,
        main_kernel_id: Uuid::new_v4(),
        designated_agent: None,
        dependencies: Vec::new(),
        mounts: Vec::new(),
        preopen_ports: Vec::new(),
        cluster_mode: Default::default(),
        sub_kernels: Vec::new(),
    }
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

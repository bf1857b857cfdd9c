//! The warm pools' side of the store, on either engine: a group's pool policy kept, and the
//! automatic mode's recent shapes (single-kernel sessions without folders of the group,
//! created since a time, the most launched first).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_core::pool::{PoolShape, WarmPoolPolicy};
use bai_store::{ResourceGroupRow, Store, UserRow};

fn store() -> Store {
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

#[test]
fn recent_shapes_are_the_most_launched_plain_sessions_of_the_group() {
    let s = store();
    let before = bai_store::now_str();
    let launch =
        |name: &str, image: &str, mem_mib: u64, tweak: &dyn Fn(&mut bai_store::NewSession)| {
            let mut n = bai_store::testing::new_session(name, "AK1", "u1");
            n.spec.image = image.into();
            n.spec.requested_slots.mem = mem_mib << 20;
            tweak(&mut n);
            s.insert_session(&n).unwrap();
        };
    let plain = |_: &mut bai_store::NewSession| {};
    for i in 0..3 {
        launch(&format!("a{i}"), "img-a", 1024, &plain);
    }
    for i in 0..2 {
        launch(&format!("b{i}"), "img-b", 512, &plain);
    }
    launch("c", "img-c", 256, &plain);
    // Not a pool's: another group, a GPU.
    for i in 0..5 {
        launch(&format!("other{i}"), "img-other", 256, &|n| {
            n.spec.scaling_group = "other".into()
        });
    }
    launch("gpu", "img-gpu", 256, &|n| {
        n.spec
            .requested_slots
            .accel
            .insert("cuda.shares".into(), 500);
    });
    launch("gpu2", "img-gpu", 256, &|n| {
        n.spec
            .requested_slots
            .accel
            .insert("cuda.shares".into(), 500);
    });
    let shapes = s.recent_shapes("default", &before, 2).unwrap();
    let shape = |image: &str, mem_mib: u64| PoolShape {
        image: image.into(),
        cpu_milli: 1000,
        mem: mem_mib << 20,
        shmem: 64 << 20,
    };
    assert_eq!(shapes, vec![shape("img-a", 1024), shape("img-b", 512)]);
    // Nothing was launched after now.
    let later = bai_store::now_str();
    assert!(s.recent_shapes("default", &later, 2).unwrap().is_empty());
}

#[test]
fn a_groups_pool_policy_is_kept() {
    let s = store();
    let mut g = ResourceGroupRow::new("gpu");
    assert_eq!(g.warm_pool, WarmPoolPolicy::default());
    g.warm_pool = WarmPoolPolicy {
        targets: bai_core::pool::parse_targets("img,cpu=0.5,mem=512m,count=3").unwrap(),
        auto: 0,
    };
    s.put_resource_group(&g).unwrap();
    assert_eq!(
        s.resource_group("gpu").unwrap().unwrap().warm_pool,
        g.warm_pool
    );
}

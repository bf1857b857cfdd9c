//! Accounts in the store: user resource policies, keypairs (deactivated, rate-limited), and
//! the ids and usernames projects and users are given.

use super::store_with_user;
use bai_store::{Store, UserRow};

#[test]
fn user_resource_policies_apply_per_user_and_a_held_one_stays() {
    let s = store_with_user();
    // Every user starts on `default` (3 customized images, 16 replicas).
    let d = s.user_policy_of("u1").unwrap();
    assert_eq!(
        (d.name.as_str(), d.max_customized_image_count),
        ("default", 3)
    );
    let mut p = bai_store::UserPolicyRow::new("tight");
    p.max_customized_image_count = 1;
    assert!(s.create_user_policy(&p).unwrap());
    assert!(!s.create_user_policy(&p).unwrap(), "names are unique");
    assert!(s.set_user_policy("u@x", "tight").unwrap());
    assert!(!s.set_user_policy("nobody@x", "tight").unwrap());
    assert_eq!(
        s.user_policy_of("u1").unwrap().max_customized_image_count,
        1
    );
    p.max_customized_image_count = 5;
    assert!(s.modify_user_policy(&p).unwrap());
    assert_eq!(
        s.user_policy_of("u1").unwrap().max_customized_image_count,
        5
    );
    assert_eq!(s.users_with_policy("tight").unwrap(), 1);
    assert!(!s.delete_user_policy("tight").unwrap(), "held by u1");
    assert!(s.set_user_policy("u@x", "default").unwrap());
    assert!(s.delete_user_policy("tight").unwrap());
    assert_eq!(
        s.user_policies()
            .unwrap()
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>(),
        vec!["default"]
    );
}

#[test]
fn a_keypair_can_be_deactivated_and_given_a_rate_limit() {
    let s = store_with_user();
    let kp = s.keypair("AK1").unwrap().unwrap();
    assert!(kp.is_active);
    assert_eq!(kp.rate_limit, 10_000);
    assert!(
        s.modify_keypair(
            "AK1",
            &bai_store::KeypairChange {
                is_active: Some(false),
                rate_limit: Some(5),
                ..Default::default()
            }
        )
        .unwrap()
    );
    let kp = s.keypair("AK1").unwrap().unwrap();
    assert!(!kp.is_active);
    assert_eq!(kp.rate_limit, 5);
    assert!(!s.modify_keypair("AKNONE", &Default::default()).unwrap());
}

#[test]
fn projects_get_distinct_ids_and_users_a_username_from_their_email() {
    let s = Store::open_for_tests().unwrap();
    assert!(s.create_project("p1", "").unwrap());
    assert!(s.create_project("p2", "").unwrap());
    let rows = s.project_rows(None).unwrap();
    let ids: std::collections::HashSet<&str> = rows.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids.len(), rows.len(), "{rows:?}");
    assert!(rows.iter().all(|p| p.id.len() == 36));
    s.create_user_with_keypair(
        &UserRow {
            id: "u1".into(),
            email: "ada@example.org".into(),
            role: "user".into(),
        },
        "AKADA",
        "secret",
        false,
    )
    .unwrap();
    let u = s.user_by_email("ada@example.org").unwrap().unwrap();
    assert_eq!(u.username, "ada");
    assert_eq!(u.domain_name, "default");
    assert_eq!(u.main_access_key.as_deref(), Some("AKADA"));
    assert!(s.keypair("AKADA").unwrap().unwrap().user_active);
}

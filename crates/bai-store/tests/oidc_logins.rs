#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect
//! OpenID Connect logins under way (issue 60), on the engine the run asks for
//! (`BAI_TEST_STORE=postgres`): taken once by their browser, refused when expired, swept,
//! and never more than the bound kept.

use bai_store::{OidcLoginRow, OidcTake, Store, testing};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(600);

fn login(state: &str) -> OidcLoginRow {
    OidcLoginRow {
        state: state.into(),
        binding_hash: format!("binding-of-{state}"),
        nonce: format!("nonce-{state}"),
        verifier: format!("verifier-{state}"),
        redirect_uri: "http://127.0.0.1:1/server/oidc/callback".into(),
    }
}

#[test]
fn a_login_is_taken_once_by_its_browser() {
    let store = testing::store().unwrap();
    let l = login("s1");
    store.oidc_login_put(&l, LONG, 100).unwrap();
    assert_eq!(
        store.oidc_login_take("forged", &l.binding_hash).unwrap(),
        OidcTake::Unknown
    );
    // Another browser's callback does not use it up.
    assert_eq!(
        store.oidc_login_take("s1", "another-binding").unwrap(),
        OidcTake::OtherBrowser
    );
    assert_eq!(
        store.oidc_login_take("s1", &l.binding_hash).unwrap(),
        OidcTake::Taken(l.clone())
    );
    // A replay finds nothing.
    assert_eq!(
        store.oidc_login_take("s1", &l.binding_hash).unwrap(),
        OidcTake::Unknown
    );
    assert_eq!(store.oidc_logins_kept().unwrap(), 0);
}

#[test]
fn a_login_survives_the_store_being_opened_again() {
    // What another manager on the same database, or this one restarted, sees.
    let dir = tempfile::tempdir().unwrap();
    let url = if testing::on_postgres() {
        testing::fresh_database().unwrap()
    } else {
        dir.path().join("bai.db").display().to_string()
    };
    let l = login("s2");
    let first = Store::open_database(&url).unwrap();
    first.oidc_login_put(&l, LONG, 100).unwrap();
    drop(first);
    let second = Store::open_database(&url).unwrap();
    assert_eq!(
        second.oidc_login_take("s2", &l.binding_hash).unwrap(),
        OidcTake::Taken(l)
    );
}

#[test]
fn expired_logins_are_refused_and_swept() {
    let store = testing::store().unwrap();
    let old = login("old");
    store.oidc_login_put(&old, Duration::ZERO, 100).unwrap();
    assert_eq!(
        store.oidc_login_take("old", &old.binding_hash).unwrap(),
        OidcTake::Expired
    );
    // Gone with the refusal.
    assert_eq!(
        store.oidc_login_take("old", &old.binding_hash).unwrap(),
        OidcTake::Unknown
    );
    // Expired ones nobody came back for are swept when the next login begins.
    for i in 0..3 {
        store
            .oidc_login_put(&login(&format!("gone{i}")), Duration::ZERO, 100)
            .unwrap();
    }
    store.oidc_login_put(&login("fresh"), LONG, 100).unwrap();
    assert_eq!(store.oidc_logins_kept().unwrap(), 1);
}

#[test]
fn at_most_the_bound_is_kept_the_oldest_going_first() {
    let store: Store = testing::store().unwrap();
    // Lifetimes that grow, so "oldest" (the soonest to expire) is well defined.
    for i in 0..5u64 {
        store
            .oidc_login_put(
                &login(&format!("n{i}")),
                LONG + Duration::from_secs(i * 10),
                3,
            )
            .unwrap();
    }
    assert_eq!(store.oidc_logins_kept().unwrap(), 3);
    for gone in ["n0", "n1"] {
        assert_eq!(
            store
                .oidc_login_take(gone, &login(gone).binding_hash)
                .unwrap(),
            OidcTake::Unknown
        );
    }
    for kept in ["n2", "n3", "n4"] {
        assert!(matches!(
            store
                .oidc_login_take(kept, &login(kept).binding_hash)
                .unwrap(),
            OidcTake::Taken(_)
        ));
    }
}

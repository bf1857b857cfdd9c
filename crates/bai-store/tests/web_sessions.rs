#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect
//! Web sessions in the store (issue 60), on the engine the run asks for
//! (`BAI_TEST_STORE=postgres`): opened, touched, closed, refused and removed when idle,
//! swept, ended by a back-channel logout's `sid` or `sub` (of their issuer only), kept
//! across the store being opened again, and never more than the bound per access key.

use bai_store::{Store, WebOrigin, WebSessionEnded, WebSessionRow, testing};
use std::time::Duration;

const IDLE: Duration = Duration::from_secs(3600);
const MOST: usize = 100;
const OP: &str = "https://sso.example.org";

fn local(hash: &str, ak: &str) -> WebSessionRow {
    WebSessionRow {
        token_hash: hash.into(),
        access_key: ak.into(),
        origin: None,
    }
}

fn from(hash: &str, ak: &str, issuer: &str, sub: &str, sid: Option<&str>) -> WebSessionRow {
    WebSessionRow {
        origin: Some(WebOrigin {
            issuer: issuer.into(),
            sub: sub.into(),
            sid: sid.map(str::to_string),
        }),
        ..local(hash, ak)
    }
}

fn live(store: &Store, hash: &str) -> Option<String> {
    store.web_session_touch(hash, IDLE).unwrap()
}

#[test]
fn a_session_is_opened_touched_and_closed() {
    let store = testing::store().unwrap();
    store
        .web_session_open(&local("h1", "AK1"), IDLE, MOST)
        .unwrap();
    assert_eq!(live(&store, "h1").as_deref(), Some("AK1"));
    assert_eq!(live(&store, "h1").as_deref(), Some("AK1"));
    assert_eq!(live(&store, "unknown"), None);
    assert!(store.web_session_close("h1").unwrap());
    assert_eq!(live(&store, "h1"), None);
    assert!(!store.web_session_close("h1").unwrap());
    assert_eq!(store.web_sessions_kept().unwrap(), 0);
}

#[test]
fn a_session_survives_the_store_being_opened_again() {
    // What another manager on the same database, or this one restarted, sees.
    let dir = tempfile::tempdir().unwrap();
    let url = if testing::on_postgres() {
        testing::fresh_database().unwrap()
    } else {
        dir.path().join("bai.db").display().to_string()
    };
    let first = Store::open_database(&url).unwrap();
    first
        .web_session_open(&from("h2", "AK2", OP, "ada", Some("s1")), IDLE, MOST)
        .unwrap();
    drop(first);
    let second = Store::open_database(&url).unwrap();
    assert_eq!(live(&second, "h2").as_deref(), Some("AK2"));
    // Its origin came along: a back-channel logout through the second ends it.
    let ended = second
        .web_sessions_close_from(OP, None, Some("s1"))
        .unwrap();
    assert_eq!(
        ended,
        [WebSessionEnded {
            token_hash: "h2".into(),
            access_key: "AK2".into()
        }]
    );
}

#[test]
fn an_idle_session_is_refused_and_removed_and_the_idle_ones_are_swept() {
    let store = testing::store().unwrap();
    store
        .web_session_open(&local("old", "AK1"), IDLE, MOST)
        .unwrap();
    // Unused for longer than the idle limit (zero here): refused, and gone with it.
    assert_eq!(
        store.web_session_touch("old", Duration::ZERO).unwrap(),
        None
    );
    assert_eq!(store.web_sessions_kept().unwrap(), 0);
    // Used, it lives on: a touch moves its last use.
    store
        .web_session_open(&local("used", "AK1"), IDLE, MOST)
        .unwrap();
    assert_eq!(live(&store, "used").as_deref(), Some("AK1"));
    // The idle ones are swept: by the sweep, and by the next login.
    for i in 0..3 {
        store
            .web_session_open(&local(&format!("gone{i}"), "AK2"), IDLE, MOST)
            .unwrap();
    }
    assert_eq!(store.web_sessions_sweep(IDLE).unwrap(), 0);
    assert_eq!(store.web_sessions_kept().unwrap(), 4);
    assert_eq!(store.web_sessions_sweep(Duration::ZERO).unwrap(), 4);
    for i in 0..3 {
        store
            .web_session_open(&local(&format!("again{i}"), "AK2"), IDLE, MOST)
            .unwrap();
    }
    store
        .web_session_open(&local("fresh", "AK3"), Duration::ZERO, MOST)
        .unwrap();
    assert_eq!(store.web_sessions_kept().unwrap(), 1);
    assert_eq!(live(&store, "fresh").as_deref(), Some("AK3"));
}

#[test]
fn a_back_channel_logout_ends_the_sessions_it_names() {
    let store = testing::store().unwrap();
    let open = |r: WebSessionRow| store.web_session_open(&r, IDLE, MOST).unwrap();
    open(local("local", "AKLOCAL"));
    open(from("a1", "AKADA", OP, "ada", Some("s1")));
    open(from("a2", "AKADA", OP, "ada", Some("s2")));
    open(from("b", "AKBOB", OP, "bob", Some("s3")));
    // Another provider's person of the same `sub` and `sid`.
    open(from(
        "x",
        "AKX",
        "https://other.example.org",
        "ada",
        Some("s1"),
    ));
    let keys = |e: Vec<WebSessionEnded>| e.into_iter().map(|e| e.access_key).collect::<Vec<_>>();
    // A sid: that provider session only (and not when the sub is another's).
    assert!(
        store
            .web_sessions_close_from(OP, Some("bob"), Some("s1"))
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        keys(store.web_sessions_close_from(OP, None, Some("s1")).unwrap()),
        ["AKADA"]
    );
    assert_eq!(live(&store, "a1"), None);
    assert!(live(&store, "a2").is_some());
    // A sub alone: every one of that person's from the provider.
    open(from("a3", "AKADA", OP, "ada", None));
    assert_eq!(
        keys(
            store
                .web_sessions_close_from(OP, Some("ada"), None)
                .unwrap()
        ),
        ["AKADA", "AKADA"]
    );
    assert_eq!(live(&store, "a2"), None);
    assert!(
        store
            .web_sessions_close_from(OP, None, None)
            .unwrap()
            .is_empty()
    );
    // Others, logins the provider did not vouch for, and the other issuer's, stay.
    assert!(live(&store, "b").is_some());
    assert!(live(&store, "local").is_some());
    assert!(live(&store, "x").is_some());
    assert_eq!(
        keys(
            store
                .web_sessions_close_from(OP, Some("bob"), Some("s3"))
                .unwrap()
        ),
        ["AKBOB"]
    );
}

#[test]
fn at_most_the_bound_per_access_key_is_kept_the_least_recently_used_going_first() {
    let store = testing::store().unwrap();
    for i in 0..5 {
        store
            .web_session_open(&local(&format!("n{i}"), "AK1"), IDLE, 3)
            .unwrap();
        // Distinct last uses, so "least recently used" is well defined.
        std::thread::sleep(Duration::from_millis(5));
    }
    // Another key's sessions are not counted against AK1's, nor taken by them.
    store
        .web_session_open(&local("m0", "AK2"), IDLE, 3)
        .unwrap();
    assert_eq!(store.web_sessions_kept().unwrap(), 4);
    for gone in ["n0", "n1"] {
        assert_eq!(live(&store, gone), None, "{gone}");
    }
    for kept in ["n2", "n3", "n4", "m0"] {
        assert!(live(&store, kept).is_some(), "{kept}");
    }
}

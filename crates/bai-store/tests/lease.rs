#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect
//! The leader's lease: a takeover only after expiry and with a higher term, by the
//! database's clock; and (PostgreSQL) the term fencing the deposed leader's writes, a
//! takeover waiting for a write in flight.

use bai_store::{Claim, LeaseBid, Store, testing};
use std::time::Duration;

fn bid(holder: &str) -> LeaseBid {
    LeaseBid {
        holder: holder.into(),
        address: format!("{holder}.example:8090"),
        version: "1.0".into(),
    }
}

const LONG: Duration = Duration::from_secs(600);

#[test]
fn a_claim_wins_a_free_lease_and_renews_it() {
    let store = testing::store().unwrap();
    let Claim::Won(first) = store.lease_claim("manager", &bid("a"), LONG).unwrap() else {
        panic!("a free lease is won");
    };
    assert_eq!((first.holder.as_str(), first.term), ("a", 1));
    assert_eq!(first.address, "a.example:8090");
    assert!(first.left_ms > 0 && first.left_ms <= 600_000, "{first:?}");
    assert!(store.lease_renew("manager", "a", 1, LONG).unwrap());
    assert!(
        !store.lease_renew("manager", "a", 2, LONG).unwrap(),
        "a term it never had"
    );
    assert!(
        !store.lease_renew("manager", "b", 1, LONG).unwrap(),
        "another holder"
    );
    // Released, it is won at once, under the next term.
    store.lease_release("manager", "a", 1).unwrap();
    let Claim::Won(next) = store.lease_claim("manager", &bid("b"), LONG).unwrap() else {
        panic!("a released lease is won");
    };
    assert_eq!((next.holder.as_str(), next.term), ("b", 2));
    assert!(
        !store.lease_renew("manager", "a", 1, LONG).unwrap(),
        "the old holder lost it"
    );
}

/// Two managers on one PostgreSQL database (two stores).
fn two_managers() -> Option<(Store, Store)> {
    if !testing::on_postgres() {
        return None;
    }
    let url = testing::fresh_database().expect("a new database");
    let a = Store::open_postgres(&url).expect("manager a's store");
    let b = Store::open_postgres(&url).expect("manager b's store");
    Some((a, b))
}

#[test]
fn a_held_lease_is_taken_over_only_after_it_expired() {
    let Some((a, b)) = two_managers() else {
        return;
    };
    let short = Duration::from_millis(300);
    assert!(matches!(
        a.lease_claim("manager", &bid("a"), short).unwrap(),
        Claim::Won(_)
    ));
    let Claim::Held(held) = b.lease_claim("manager", &bid("b"), LONG).unwrap() else {
        panic!("a live lease is not taken over");
    };
    assert_eq!((held.holder.as_str(), held.term), ("a", 1));
    assert_eq!(held.version, "1.0");
    // Wait for the database to say it expired (its clock, not ours).
    while b.lease("manager").unwrap().unwrap().left_ms > 0 {
        std::thread::sleep(Duration::from_millis(50));
    }
    let Claim::Won(won) = b.lease_claim("manager", &bid("b"), LONG).unwrap() else {
        panic!("an expired lease is taken over");
    };
    assert_eq!((won.holder.as_str(), won.term), ("b", 2));
    assert!(!a.lease_renew("manager", "a", 1, LONG).unwrap());
}

#[test]
fn a_deposed_leader_writes_nothing() {
    let Some((a, b)) = two_managers() else {
        return;
    };
    let short = Duration::from_millis(300);
    let Claim::Won(lease) = a.lease_claim("manager", &bid("a"), short).unwrap() else {
        panic!("a free lease is won");
    };
    a.fence("manager", lease.term).unwrap();
    // Its writes go through while it holds the term: one alone, and one in a transaction.
    a.meta_set("written-by", "a").unwrap();
    assert_eq!(b.meta_get("written-by").unwrap().as_deref(), Some("a"));
    while b.lease("manager").unwrap().unwrap().left_ms > 0 {
        std::thread::sleep(Duration::from_millis(50));
    }
    // Expired but not taken over: still its term, still written.
    a.meta_set("written-by", "a again").unwrap();
    assert!(matches!(
        b.lease_claim("manager", &bid("b"), LONG).unwrap(),
        Claim::Won(_)
    ));
    let e = a.meta_set("written-by", "a, deposed").unwrap_err();
    assert!(e.is_fenced(), "{e}");
    let problem = bai_core::Problem::from(e);
    assert_eq!(problem.status, 503);
    assert!(problem.kind.ends_with("not-leader"), "{}", problem.kind);
    // Reads still answer; the value is the last one written before the takeover.
    assert_eq!(
        a.meta_get("written-by").unwrap().as_deref(),
        Some("a again")
    );
    // A session insert (a transaction of several statements) is refused whole.
    let e = a
        .insert_session(&testing::new_session("late", "AKIA", "u"))
        .unwrap_err();
    assert!(e.is_fenced(), "{e}");
    assert!(b.live_session_named("AKIA", "late").unwrap().is_none());
}

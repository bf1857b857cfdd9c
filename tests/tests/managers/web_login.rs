//! A web UI login outlives the leader it was made at (issue 60): web sessions are kept in
//! the database, so after the leader is killed (SIGKILL) the standby, once it leads, answers
//! the same cookie, and a logout through it ends the session.

use super::{managers, wait_leads};
use bai_e2e::oidc::Browser;

const EMAIL: &str = "user@bai.local";

/// How many web sessions the database holds whose key is `token_hash`.
fn rows_keyed(url: &str, token_hash: &str) -> i64 {
    let mut db = postgres::Client::connect(url, postgres::NoTls).unwrap();
    db.query_one(
        "SELECT count(*) FROM web_sessions WHERE token_hash = $1",
        &[&token_hash],
    )
    .unwrap()
    .get(0)
}

#[test]
fn a_web_login_outlives_a_killed_leader() {
    let url = bai_store::testing::fresh_database().expect("a database in the test cluster");
    let m = managers(&url, &url, &[]);
    let password = m.a.web_password(EMAIL);
    let (a_at, b_at) = (m.a.endpoint.clone(), m.b.endpoint.clone());

    // Logged in at the leader; the cookie answers through the standby too (relayed).
    let mut browser = Browser::new();
    assert_eq!(
        browser.web_login(&a_at, EMAIL, &password),
        200,
        "{}",
        m.a.log()
    );
    let token = browser
        .cookie("bai_web")
        .expect("the login's cookie")
        .clone();
    for at in [&a_at, &b_at] {
        let (status, me) = browser.get_json(&format!("{at}/server/me"));
        assert_eq!(status, 200, "{at}: {me}");
        assert_eq!(me["email"], EMAIL, "{me}");
    }
    // The database keeps the token's hash, never the token.
    assert_eq!(rows_keyed(&url, &token), 0);

    // The leader is killed: the standby leads and knows the login.
    let data_a = m.a.crash();
    wait_leads(&m.b);
    let (status, me) = browser.get_json(&format!("{b_at}/server/me"));
    assert_eq!(
        status,
        200,
        "the login did not survive: {me}\n{}",
        m.b.log()
    );
    assert_eq!(me["email"], EMAIL, "{me}");

    // A logout through the new leader ends it.
    assert_eq!(browser.web_logout(&b_at), 200);
    assert!(browser.cookie("bai_web").is_none());
    let (status, _) = browser.get_json(&format!("{b_at}/server/me"));
    assert_eq!(status, 401);
    // The old cookie, sent again, opens nothing either.
    let mut stale = Browser::new();
    stale.set_cookie("bai_web", &token);
    assert_eq!(stale.get_json(&format!("{b_at}/server/me")).0, 401);
    drop(data_a);
}

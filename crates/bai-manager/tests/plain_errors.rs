//! The refusals axum makes itself (a method a route does not take, a query that does not
//! parse, a WebSocket route called without the upgrade) leave as JSON problems with `type`,
//! `title` and `msg`, like every other API error; the app proxy's own refusals stay pages for
//! the browser.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod common;

use common::{Api, USER};

fn assert_problem(r: &common::Reply, status: u16, kind: &str, what: &str) -> String {
    assert_eq!(
        r.status,
        status,
        "{what}: {:?}",
        String::from_utf8_lossy(&r.body)
    );
    assert!(
        r.content_type().contains("json"),
        "{what}: {}",
        r.content_type()
    );
    let p = r.json();
    assert_eq!(
        p["type"],
        format!("https://api.backend.ai/probs/{kind}"),
        "{what}: {p}"
    );
    assert!(
        p["title"].as_str().is_some_and(|t| !t.is_empty()),
        "{what}: {p}"
    );
    let msg = p["msg"].as_str().unwrap_or("").to_string();
    assert!(!msg.is_empty(), "{what}: {p}");
    msg
}

#[tokio::test]
async fn axums_own_refusals_are_json_problems() {
    let api = Api::start().await;
    // A method the route does not take (Backend.AI answers these with a problem too).
    let r = api
        .send(
            "PUT",
            "/session",
            Some(USER),
            "application/json",
            &[],
            b"{}".to_vec(),
        )
        .await;
    assert_problem(&r, 405, "method-not-allowed", "PUT /session");
    // A query that does not parse: axum's words are the message.
    let r = api
        .send(
            "GET",
            "/resource-groups?all=maybe",
            Some(USER),
            "",
            &[],
            Vec::new(),
        )
        .await;
    let msg = assert_problem(&r, 400, "invalid-api-params", "?all=maybe");
    assert!(msg.contains("all"), "{msg}");
    // A WebSocket route without the upgrade.
    let r = api
        .send(
            "GET",
            "/stream/session/some-session/execute",
            Some(USER),
            "",
            &[],
            Vec::new(),
        )
        .await;
    assert_problem(&r, 400, "invalid-api-params", "execute without an upgrade");
    // The app proxy's refusal is a page, with its media type.
    let r = api.send("GET", "/app/0/0", None, "", &[], Vec::new()).await;
    assert_eq!(r.status, 404);
    assert!(
        r.content_type().starts_with("text/html"),
        "{}",
        r.content_type()
    );
}

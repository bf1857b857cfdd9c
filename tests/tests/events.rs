//! The lifecycle event stream end to end: `baid up` with dummy agents, the stream read
//! through our SDK as the web UI and `bai events` read it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::Server;
use futures::StreamExt;
use std::collections::BTreeSet;

/// `sessionName=*` (the web UI's Sessions page) follows every session for as long as the
/// client stays: several sessions end one after another on one stream, and the stream is
/// still there after the last of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_all_sessions_stream_survives_several_terminations() {
    let s = Server::start_dummy(1, "cpu=8,mem=16g");
    let client = s.client(&s.user);
    let mut stream = client.events("*", "*").await.expect("event stream");
    let names = ["ev-one", "ev-two", "ev-three"];
    for name in names {
        s.bai(
            &s.user,
            &[
                "start",
                "--enqueue-only",
                "--type",
                "batch",
                "-c",
                "sleep 1",
                "-t",
                name,
                "python",
            ],
        )
        .expect_ok();
    }
    let mut ended = BTreeSet::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(300);
    while ended.len() < names.len() {
        let ev = tokio::time::timeout_at(deadline, stream.next())
            .await
            .expect("every session ended within the test's bound")
            .expect("the stream went on after a termination")
            .expect("a well-formed event");
        assert_ne!(ev.name, "server_close", "the * stream was closed");
        if ev.name == "session_terminated"
            && let Some(name) = ev
                .json()
                .and_then(|j| j["sessionName"].as_str().map(String::from))
        {
            ended.insert(name);
        }
    }
    assert_eq!(ended, names.iter().map(|n| n.to_string()).collect());
    // Still open: a session started now is seen on the same stream.
    s.bai(
        &s.user,
        &["start", "--enqueue-only", "-t", "ev-after", "python"],
    )
    .expect_ok();
    loop {
        let ev = tokio::time::timeout_at(deadline, stream.next())
            .await
            .expect("the new session's event within the bound")
            .expect("the stream is still open")
            .expect("a well-formed event");
        if ev.json().is_some_and(|j| j["sessionName"] == "ev-after") {
            break;
        }
    }
}

//! A reconnecting event stream is sent what it missed, once: `Last-Event-ID` on a
//! `sessionName=*` stream and on a one-session stream, through the real router and the
//! official-shaped client that `bai events` uses.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod common;

use bai_api::sessions::CreateRequest;
use bai_client::{Client, Config, EventStream};
use bai_core::event::EventKind;
use common::{ADMIN, Api, IMAGE, Keypair, USER};
use futures::StreamExt;
use serde_json::Value;
use std::time::Duration;

fn client(api: &Api, who: Keypair) -> Client {
    let config = Config::new(
        &format!("http://{}", api.addr),
        who.access_key,
        who.secret_key,
    )
    .expect("config");
    Client::new(config).expect("client")
}

async fn create(api: &Api, who: Keypair, name: &str) {
    let req = CreateRequest {
        name: Some(name.into()),
        ..CreateRequest::new(IMAGE)
    };
    let r = api
        .call(
            "POST",
            "/session",
            who,
            &serde_json::to_value(&req).unwrap(),
        )
        .await;
    assert!(
        r.status == 201 || r.status == 200,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
}

async fn remove(api: &Api, who: Keypair, name: &str) {
    let r = api
        .call("DELETE", &format!("/session/{name}"), who, &Value::Null)
        .await;
    assert!(r.status < 300, "{}", String::from_utf8_lossy(&r.body));
}

/// `(id, name, sessionName)` of the next event; a hang guard only, not a timing check.
async fn next(stream: &mut EventStream) -> (i64, String, String) {
    let ev = tokio::time::timeout(Duration::from_secs(120), stream.next())
        .await
        .expect("an event within two minutes")
        .expect("the stream goes on")
        .expect("an event");
    let data: Value = ev.json().expect("JSON data");
    let id = ev.id.as_deref().expect("an id").parse().expect("a number");
    let session = data["sessionName"].as_str().unwrap_or_default().to_string();
    (id, ev.name, session)
}

/// Reads until `name` of `session` arrived; every event read, in order.
async fn until(stream: &mut EventStream, session: &str, name: &str) -> Vec<(i64, String, String)> {
    let mut seen = Vec::new();
    loop {
        let ev = next(stream).await;
        let done = ev.1 == name && ev.2 == session;
        seen.push(ev);
        if done {
            return seen;
        }
    }
}

#[tokio::test]
async fn a_reconnecting_stream_of_every_session_gets_what_it_missed_once() {
    let api = Api::start_with_agent().await;
    let user = client(&api, USER);

    let mut first = user.events_after("*", "session", None).await.unwrap();
    create(&api, USER, "resume-1").await;
    let before = until(&mut first, "resume-1", "session_started").await;
    let last = before.last().unwrap().0;
    drop(first);

    // While nobody listens: the user's second session starts and the first ends; another
    // user's session starts too.
    create(&api, USER, "resume-2").await;
    create(&api, ADMIN, "resume-other").await;
    remove(&api, USER, "resume-1").await;

    let mut again = user
        .events_after("*", "session", Some(&last.to_string()))
        .await
        .unwrap();
    let mut missed = until(&mut again, "resume-2", "session_started").await;
    if !missed
        .iter()
        .any(|e| e.2 == "resume-1" && e.1 == "session_terminated")
    {
        missed.extend(until(&mut again, "resume-1", "session_terminated").await);
    }
    // Nothing sent twice, nothing out of order, nothing of another user's.
    assert!(missed.iter().all(|e| e.0 > last), "{missed:?} after {last}");
    assert!(missed.windows(2).all(|w| w[0].0 < w[1].0), "{missed:?}");
    assert!(
        missed
            .iter()
            .all(|e| e.2.starts_with("resume-") && e.2 != "resume-other"),
        "{missed:?}"
    );
    // Exactly the stored session events of this user after `last`, up to the last one read.
    let upto = missed.last().unwrap().0;
    let stored: Vec<i64> = api
        .m
        .store
        .events_since(last, Some(USER.access_key), 1000)
        .unwrap()
        .into_iter()
        .filter(|e| !e.kind.is_kernel() && e.seq <= upto)
        .map(|e| e.seq)
        .collect();
    let got: Vec<i64> = missed.iter().map(|e| e.0).collect();
    assert_eq!(got, stored);
    assert!(
        missed
            .iter()
            .any(|e| e.2 == "resume-2" && e.1 == EventKind::SessionEnqueued.as_str()),
        "the replay starts before the live part: {missed:?}"
    );
}

#[tokio::test]
async fn a_reconnecting_stream_of_one_session_resumes_after_its_id() {
    let api = Api::start_with_agent().await;
    let user = client(&api, USER);
    let mut first = user
        .events_after("resume-one", "session", None)
        .await
        .unwrap();
    create(&api, USER, "resume-one").await;
    let before = until(&mut first, "resume-one", "session_started").await;
    let last = before.last().unwrap().0;
    drop(first);
    remove(&api, USER, "resume-one").await;

    let mut again = user
        .events_after("resume-one", "session", Some(&last.to_string()))
        .await
        .unwrap();
    let rest = until(&mut again, "resume-one", "session_terminated").await;
    assert!(rest.iter().all(|e| e.0 > last), "{rest:?} after {last}");
    assert!(
        tokio::time::timeout(Duration::from_secs(120), again.next())
            .await
            .expect("the stream ends")
            .is_none()
    );
    assert!(again.closed_by_server());

    // Resumed after its final event: only `server_close`.
    let end = rest.last().unwrap().0;
    let mut done = user
        .events_after("resume-one", "session", Some(&end.to_string()))
        .await
        .unwrap();
    assert!(done.next().await.is_none());
    assert!(done.closed_by_server());

    // An id this stream never sent is a clear 400.
    let bad = user
        .events_after("resume-one", "session", Some("yesterday"))
        .await;
    let Err(bai_client::ClientError::Api { status, msg, .. }) = bad else {
        panic!("a bad Last-Event-ID is refused");
    };
    assert_eq!(status, 400);
    assert!(msg.contains("Last-Event-ID"), "{msg}");
}

//! `bai` while the platform switches managers, against a scripted manager: answers of
//! `503 no-leader` / `database-unavailable` and a manager that is not listening for a moment
//! are waited through (one notice line), creates keep their `Idempotency-Key`, and what is
//! not safe to send twice is not.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::process::Output;
use std::sync::{Arc, Mutex};

const SID: &str = "5f0c9a43-3f76-4bd3-8d7c-6a8f7f0b2d11";

/// What the scripted manager answers, in order (then 200s): each entry a problem kind, and
/// whether the problem says the request had been relayed to a leader.
#[derive(Default)]
struct Script {
    refusals: Mutex<VecDeque<(&'static str, bool)>>,
    /// `METHOD /path` and the `Idempotency-Key` of every request.
    seen: Mutex<Vec<(String, Option<String>)>>,
}

type S = Arc<Script>;

async fn answer(
    State(s): State<S>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let key = headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    s.seen
        .lock()
        .unwrap()
        .push((format!("{method} {}", uri.path()), key));
    if let Some((kind, relayed)) = s.refusals.lock().unwrap().pop_front() {
        let mut p = json!({"type": format!("https://api.backend.ai/probs/{kind}"),
                           "title": "T.", "msg": format!("{kind} now")});
        if relayed {
            p["data"] = json!({"relayed": true});
        }
        return (StatusCode::SERVICE_UNAVAILABLE, axum::Json(p)).into_response();
    }
    if uri.path() == "/session" {
        let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let name = v["name"].as_str().unwrap_or("s");
        return axum::Json(
            json!({"sessionId": SID, "sessionName": name, "status": "RUNNING",
                                 "servicePorts": [], "created": true}),
        )
        .into_response();
    }
    if uri.path().ends_with("/logs") {
        return axum::Json(json!({"result": {"logs": "hello\n"}})).into_response();
    }
    axum::Json(json!({})).into_response()
}

/// A scripted manager at a fixed address: started now, or only after `late` (it does not
/// listen meanwhile, as a standby that just took over).
async fn manager(
    refusals: &[(&'static str, bool)],
    late: Option<std::time::Duration>,
) -> (String, S) {
    let script = Arc::new(Script {
        refusals: Mutex::new(refusals.iter().copied().collect()),
        ..Default::default()
    });
    let probe = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = probe.local_addr().unwrap();
    // Started now: listening before this returns (a task that binds later could lose the
    // race with the client on a busy machine). Started late: the probe is dropped here, so
    // nothing listens meanwhile.
    let now = late.is_none().then_some(probe);
    let app = Router::new()
        .fallback(any(answer))
        .with_state(script.clone());
    tokio::spawn(async move {
        let l = match now {
            Some(l) => l,
            None => {
                tokio::time::sleep(late.unwrap_or_default()).await;
                tokio::net::TcpListener::bind(at).await.unwrap()
            }
        };
        let _ = axum::serve(l, app).await;
    });
    (format!("http://{at}"), script)
}

async fn bai(endpoint: &str, args: &[&str]) -> (String, String, i32, Output) {
    let o = tokio::process::Command::new(env!("CARGO_BIN_EXE_bai"))
        .args(args)
        .env("BACKEND_ENDPOINT", endpoint)
        .env("BACKEND_ACCESS_KEY", "AKIAIOSFODNN7EXAMPLE")
        .env(
            "BACKEND_SECRET_KEY",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        )
        .env_remove("BACKEND_ENDPOINT_TYPE")
        .env_remove("BAI_FAILOVER_WAIT")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code().unwrap_or(-1),
        o,
    )
}

const NOTICE: &str = "the platform is switching managers; retrying for up to";

/// A create answered `no-leader` (before and after being relayed) and
/// `database-unavailable` is sent again with its key until it goes through: one notice line,
/// one key for every try.
#[tokio::test]
async fn a_create_waits_through_the_switch_with_one_key() {
    let (ep, script) = manager(
        &[
            ("no-leader", false),
            ("no-leader", true),
            ("database-unavailable", false),
        ],
        None,
    )
    .await;
    let (stdout, stderr, code, _) = bai(&ep, &["start", "-t", "fo-1", "python"]).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(SID), "{stdout}");
    assert_eq!(stderr.matches(NOTICE).count(), 1, "{stderr}");
    let seen = script.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 4, "{seen:?}");
    let key = seen[0].1.clone().expect("an Idempotency-Key");
    assert!(
        seen.iter()
            .all(|(r, k)| r == "POST /session" && k.as_deref() == Some(&*key))
    );
}

/// A read waits too; a request that is not safe to send twice and that a standby had
/// relayed to a leader that stopped is not sent again: its answer is the error.
#[tokio::test]
async fn reads_wait_and_unsafe_relayed_requests_are_not_repeated() {
    let (ep, script) = manager(&[("no-leader", true), ("no-leader", false)], None).await;
    let (_, stderr, code, _) = bai(&ep, &["logs", "x"]).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr.matches(NOTICE).count(), 1, "{stderr}");
    assert_eq!(script.seen.lock().unwrap().len(), 3);

    let (ep, script) = manager(&[("no-leader", true)], None).await;
    let (_, stderr, code, _) = bai(&ep, &["session", "rename", "sess-x", "sess-y"]).await;
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("no-leader now"), "{stderr}");
    assert!(!stderr.contains(NOTICE), "{stderr}");
    assert_eq!(script.seen.lock().unwrap().len(), 1);
}

/// A manager that is simply not there is said at once; but once a standby said that no
/// manager leads, the refused connections of a new leader that does not listen yet are
/// waited through.
#[tokio::test]
async fn a_manager_starting_after_the_switch_is_waited_for() {
    let (ep, script) = manager(&[], Some(std::time::Duration::from_secs(3))).await;
    let started = std::time::Instant::now();
    let (_, stderr, code, _) = bai(&ep, &["logs", "x"]).await;
    assert_eq!(code, 1, "nothing said the platform switches: {stderr}");
    assert!(stderr.contains("cannot reach the manager"), "{stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(3));
    assert!(script.seen.lock().unwrap().is_empty());

    // A standby answers one 503 on the address and gives it up; the new leader listens
    // there a second later.
    let standby = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = standby.local_addr().unwrap();
    let script = Arc::new(Script::default());
    let app = Router::new()
        .fallback(any(answer))
        .with_state(script.clone());
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut c, _) = standby.accept().await.unwrap();
        let mut head = [0u8; 4096];
        let _ = c.read(&mut head).await;
        let body = r#"{"type":"https://api.backend.ai/probs/no-leader","title":"T.","msg":"m"}"#;
        let answer = format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/problem+json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        c.write_all(answer.as_bytes()).await.unwrap();
        let _ = c.shutdown().await;
        drop(standby);
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        let l = tokio::net::TcpListener::bind(at).await.unwrap();
        let _ = axum::serve(l, app).await;
    });
    let (_, stderr, code, _) = bai(&format!("http://{at}"), &["logs", "x"]).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr.matches(NOTICE).count(), 1, "{stderr}");
    assert_eq!(script.seen.lock().unwrap().len(), 1);
}

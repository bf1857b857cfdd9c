//! The `bai` binary against a small scripted manager (axum): exact stdout, stderr and exit
//! codes of the commands, and the requests they send. Real-server tests live in /tests.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use axum::Router;
use axum::body::Bytes;
use axum::extract::ws::{Message, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use serde_json::{Value, json};
use std::process::Output;
use std::sync::{Arc, Mutex};

const SID: &str = "5f0c9a43-3f76-4bd3-8d7c-6a8f7f0b2d11";

#[derive(Default)]
struct Mock {
    /// `METHOD /path?query` of every request, in order.
    log: Mutex<Vec<String>>,
    bodies: Mutex<Vec<Value>>,
    total_sessions: i64,
    /// Answers as Backend.AI does to bai's cursor extension: an unknown argument.
    no_cursors: bool,
}

type S = Arc<Mock>;

fn note(m: &Mock, method: &str, uri: &Uri) {
    if let Ok(mut l) = m.log.lock() {
        l.push(format!("{method} {uri}"));
    }
}

fn problem(status: StatusCode, msg: &str) -> Response {
    (
        status,
        axum::Json(
            json!({"type": "https://api.backend.ai/probs/session-not-found",
                          "title": "No such session.", "msg": msg}),
        ),
    )
        .into_response()
}

async fn create(State(m): State<S>, uri: Uri, body: Bytes) -> Response {
    note(&m, "POST", &uri);
    let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if let Ok(mut b) = m.bodies.lock() {
        b.push(v.clone());
    }
    let status = if v["enqueueOnly"] == true {
        "PENDING"
    } else if v["image"] == "broken" {
        "ERROR"
    } else {
        "RUNNING"
    };
    let name = v["name"].as_str().unwrap_or("pysdk-0000000000");
    axum::Json(
        json!({"sessionId": SID, "sessionName": name, "status": status,
                      "servicePorts": [], "created": true}),
    )
    .into_response()
}

/// `GET /session/{r}` as the API describes it: a session that failed to start.
fn failed_session(name: &str) -> Value {
    let t = "2026-01-01T00:00:00+00:00";
    let mut v = json!({
        "id": SID, "session_id": SID, "row_id": SID, "name": name, "session_name": name,
        "type": "interactive", "session_type": "interactive", "image": "broken",
        "image_references": ["broken"], "architecture": "x86_64", "priority": 10,
        "status": "ERROR", "status_info": "no-image", "status_data": "{}",
        "status_changed": t, "status_history": {"PENDING": t, "ERROR": t},
        "result": "FAILURE", "created_at": t,
    });
    let rest = json!({
        "domain_name": "default", "group_name": "default", "group_id": "default",
        "scaling_group": "default", "access_key": "AK", "user_id": "u", "main_kernel_id": SID,
        "cluster_mode": "single-node", "cluster_size": 1, "agent_ids": [], "agents": [],
        "requested_slots": "{}", "occupying_slots": "{}", "occupied_slots": "{}",
    });
    let more = json!({
        "resource_opts": "{}", "shmem": 0, "cpu": "1", "mem": 1073741824, "environ": {},
        "idle_checks": "{}", "vfolder_mounts": [], "mounts": [], "service_ports": "[]",
        "preopen_ports": [], "network": {"rx_bytes": 0, "tx_bytes": 0},
        "containers": [], "kernels": [], "dependencies": [],
    });
    for part in [rest, more] {
        if let (Some(all), Value::Object(p)) = (v.as_object_mut(), part) {
            all.extend(p);
        }
    }
    v
}

async fn session(
    State(m): State<S>,
    uri: Uri,
    Path(r): Path<String>,
    method: axum::http::Method,
) -> Response {
    note(&m, method.as_str(), &uri);
    match (method.as_str(), r.as_str()) {
        (_, "missing") => problem(StatusCode::NOT_FOUND, "no session named \"missing\""),
        ("DELETE", "queued") => axum::Json(
            json!({"stats": {"status": "cancelled"}, "status": "CANCELLED", "sessionId": SID}),
        )
        .into_response(),
        ("DELETE", _) => axum::Json(
            json!({"stats": {"status": "terminated"}, "status": "TERMINATED", "sessionId": SID}),
        )
        .into_response(),
        _ => axum::Json(failed_session(&r)).into_response(),
    }
}

async fn execute(State(m): State<S>, uri: Uri, ws: WebSocketUpgrade) -> Response {
    note(&m, "WS", &uri);
    ws.on_upgrade(|mut sock| async move {
        let Some(Ok(Message::Text(first))) = sock.recv().await else {
            return;
        };
        let first: Value = serde_json::from_str(first.as_str()).unwrap_or(Value::Null);
        let frames = if first["code"] == "fail" {
            vec![
                json!({"status": "continued", "console": [["stdout", "hello "]], "exitCode": null}),
                json!({"status": "finished", "console": [["stdout", "world\n"], ["stderr", "oops\n"]], "exitCode": 3}),
            ]
        } else {
            vec![json!({"status": "finished", "console": [["stdout", format!("mode={} opts={}\n", first["mode"], sorted(&first["options"]))]], "exitCode": 0})]
        };
        for f in frames {
            if sock.send(Message::Text(f.to_string().into())).await.is_err() {
                return;
            }
        }
        let _ = sock.recv().await;
    })
}

async fn gql(State(m): State<S>, uri: Uri, body: Bytes) -> Response {
    note(&m, "POST", &uri);
    let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if let Ok(mut b) = m.bodies.lock() {
        b.push(v.clone());
    }
    let q = v["query"].as_str().unwrap_or("");
    if q.contains("keypair") {
        return axum::Json(
            json!({"data": {"keypair": {"user_id": "u", "access_key": "AK",
            "secret_key": "SK", "is_active": true, "is_admin": false}}}),
        )
        .into_response();
    }
    let cursors = q.contains("next_cursor");
    if cursors && m.no_cursors {
        return axum::Json(json!({"data": null, "errors": [
            {"message": "Unknown argument 'after' on field 'compute_session_list' of type 'Queries'."}]}))
        .into_response();
    }
    // A cursor here is `at-N`: the next page starts at the N-th session.
    let after = v["variables"]["after"]
        .as_str()
        .and_then(|c| c.strip_prefix("at-"))
        .and_then(|n| n.parse::<i64>().ok());
    let offset = after.unwrap_or(0) + v["variables"]["offset"].as_i64().unwrap_or(0);
    let limit = v["variables"]["limit"].as_i64().unwrap_or(20);
    let items: Vec<Value> = (offset..(offset + limit).min(m.total_sessions))
        .map(|i| json!({"name": format!("sess-{i:03}"), "priority": 10, "id": format!("id-{i}"),
                        "group_name": "default", "type": "interactive", "image": "python",
                        "status": "RUNNING", "status_info": null, "status_changed": "2026-01-01T00:00:00+00:00",
                        "result": "UNDEFINED"}))
        .collect();
    let end = offset + items.len() as i64;
    let next = (cursors && end < m.total_sessions).then(|| format!("at-{end}"));
    axum::Json(json!({"data": {"compute_session_list": {"items": items, "total_count": m.total_sessions, "next_cursor": next}}}))
        .into_response()
}

async fn events(State(m): State<S>, uri: Uri, headers: axum::http::HeaderMap) -> Response {
    note(&m, "GET", &uri);
    if uri.query().is_some_and(|q| q.contains("sessionName=flaky")) {
        // The first stream breaks off after two events; a reconnect must say where it was.
        let body = match headers.get("last-event-id").and_then(|v| v.to_str().ok()) {
            None => {
                "id: 7\nevent: session_enqueued\ndata: {}\n\nid: 9\nevent: session_started\ndata: {}\n\n"
            }
            Some("9") => {
                "id: 12\nevent: session_terminated\ndata: {}\n\nevent: server_close\ndata: {}\n\n"
            }
            Some(_) => return problem(StatusCode::BAD_REQUEST, "resumed from the wrong event"),
        };
        return ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response();
    }
    let body = "event: session_enqueued\ndata: {\"sessionName\": \"b\"}\n\n: ping\n\nevent: session_failure\ndata: {\"exitCode\": 1}\n\nevent: session_terminated\ndata: {}\n\nevent: server_close\ndata: {}\n\n";
    ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
}

struct Server {
    endpoint: String,
    mock: S,
}

async fn server(total_sessions: i64) -> Server {
    server_of(Mock {
        total_sessions,
        ..Default::default()
    })
    .await
}

async fn server_of(mock: Mock) -> Server {
    let mock = Arc::new(mock);
    let app = Router::new()
        .route("/session", post(create))
        .route("/session/{reference}", any(session))
        .route("/session/{reference}/logs", get(session))
        .route("/stream/session/{reference}/execute", get(execute))
        .route("/admin/gql", post(gql))
        .route("/events/session", get(events))
        .with_state(mock.clone());
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", l.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    Server { endpoint, mock }
}

impl Server {
    async fn bai(&self, args: &[&str]) -> Output {
        bai_at(&self.endpoint, args, &[]).await
    }

    fn log(&self) -> Vec<String> {
        self.mock.log.lock().unwrap().clone()
    }

    fn bodies(&self) -> Vec<Value> {
        self.mock.bodies.lock().unwrap().clone()
    }
}

async fn bai_at(endpoint: &str, args: &[&str], extra_env: &[(&str, &str)]) -> Output {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_bai"));
    cmd.args(args)
        .env("BACKEND_ENDPOINT", endpoint)
        .env("BACKEND_ACCESS_KEY", "AKIAIOSFODNN7EXAMPLE")
        .env(
            "BACKEND_SECRET_KEY",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        )
        .env_remove("BACKEND_ENDPOINT_TYPE")
        .stdin(std::process::Stdio::null());
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    cmd.output().await.unwrap()
}

fn out(o: &Output) -> (String, String, i32) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code().unwrap_or(-1),
    )
}

#[tokio::test]
async fn run_prints_output_verbatim_exits_with_the_code_and_removes_the_session() {
    let s = server(0).await;
    let (stdout, stderr, code) = out(&s.bai(&["run", "--rm", "-c", "fail", "python"]).await);
    assert_eq!(stdout, "hello world\n");
    assert!(stderr.contains("oops\n"), "{stderr}");
    assert_eq!(code, 3, "{stderr}");
    assert_eq!(
        s.log(),
        vec![
            "POST /session".to_string(),
            format!("WS /stream/session/{SID}/execute"),
            format!("DELETE /session/{SID}"),
        ]
    );
    let body = &s.bodies()[0];
    let name = body["name"].as_str().unwrap();
    assert!(name.starts_with("pysdk-") && name.len() == 16, "{name}");
    assert_eq!(body["dependencies"], Value::Null);

    let (stdout, _, code) = out(&s.bai(&["run", "-q", "--exec", "make run", "python"]).await);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        "mode=\"batch\" opts={\"build\":\"*\",\"buildLog\":false,\"clean\":\"*\",\"exec\":\"make run\"}\n"
    );
}

#[tokio::test]
async fn enqueue_only_runs_nothing_and_failures_are_one_line() {
    let s = server(0).await;
    let (stdout, _, code) = out(&s
        .bai(&["run", "--rm", "--enqueue-only", "-c", "x", "python"])
        .await);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        format!("Session ID {SID} is enqueued for scheduling.\n")
    );
    assert_eq!(s.log(), vec!["POST /session"]);

    let (_, stderr, code) = out(&s.bai(&["start", "-t", "brk1", "broken"]).await);
    assert_eq!(code, 1);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: session brk1 did not start: ERROR (no-image)"),
        "{stderr}"
    );

    let (_, stderr, code) = out(&s.bai(&["start", "-t", "a b", "python"]).await);
    assert_eq!(code, 1);
    assert!(
        stderr.starts_with("error: session name \"a b\""),
        "{stderr}"
    );
}

#[tokio::test]
async fn rm_goes_on_after_a_failure_and_exits_1() {
    let s = server(0).await;
    let (stdout, stderr, code) = out(&s.bai(&["rm", "one", "missing", "queued"]).await);
    assert_eq!(
        stdout,
        "Session one is terminated.\nSession queued is cancelled.\n"
    );
    assert_eq!(stderr, "error: missing: no session named \"missing\"\n");
    assert_eq!(code, 1);
    let (_, _, code) = out(&s.bai(&["kill", "-f", "one"]).await);
    assert_eq!(code, 0);
    assert_eq!(s.log().last().unwrap(), "DELETE /session/one?forced=true");
}

#[tokio::test]
async fn ps_shows_the_first_page_and_all_walks_every_page() {
    let s = server(250).await;
    let (stdout, stderr, code) = out(&s.bai(&["ps"]).await);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.lines().count(), 2 + 10, "{stdout}");
    assert!(stdout.starts_with("Session Name"), "{stdout}");
    assert_eq!(
        stderr,
        "(showing first 10 of 250; use --all or --offset 10 to see more)\n"
    );
    let vars = &s.bodies()[0]["variables"];
    assert_eq!(
        vars["status"],
        bai_core::SessionStatus::join(&bai_core::SessionStatus::LIST_DEFAULT)
    );
    assert_eq!(vars["limit"], 10);
    assert_eq!(vars["order"], Value::Null);

    // `--all` walks by cursor: each page after the last one's `next_cursor`.
    let (stdout, stderr, code) = out(&s.bai(&["ps", "--all"]).await);
    assert_eq!(code, 0);
    assert_eq!(stdout.lines().count(), 2 + 250);
    assert!(stderr.is_empty(), "{stderr}");
    let afters: Vec<Value> = s.bodies()[1..]
        .iter()
        .map(|b| b["variables"]["after"].clone())
        .collect();
    assert_eq!(afters, vec![Value::Null, json!("at-100"), json!("at-200")]);
    assert!(
        s.bodies()[1..].iter().all(|b| b["variables"]["offset"] == 0
            && b["query"].as_str().unwrap().contains("next_cursor"))
    );
    for i in [0, 99, 100, 249] {
        assert!(stdout.contains(&format!("sess-{i:03}")), "{stdout}");
    }

    // A manager without cursors (Backend.AI's): the walk goes by offset, as the official
    // client's does.
    let plain = server_of(Mock {
        total_sessions: 250,
        no_cursors: true,
        ..Default::default()
    })
    .await;
    let (stdout, stderr, code) = out(&plain.bai(&["ps", "--all"]).await);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.lines().count(), 2 + 250);
    assert!(
        plain.bodies()[0]["query"]
            .as_str()
            .unwrap()
            .contains("next_cursor")
    );
    let offsets: Vec<i64> = plain.bodies()[1..]
        .iter()
        .map(|b| b["variables"]["offset"].as_i64().unwrap())
        .collect();
    assert_eq!(offsets, vec![0, 100, 200]);

    let empty = server(0).await;
    let (stdout, _, code) = out(&empty.bai(&["ps", "--dead"]).await);
    assert_eq!((stdout.as_str(), code), ("No matching items.\n", 0));

    // Not an admin: a clear refusal.
    let (_, stderr, code) = out(&s.bai(&["admin", "sessions"]).await);
    assert_eq!(code, 1);
    assert!(stderr.contains("administrator"), "{stderr}");
}

#[tokio::test]
async fn events_print_and_wait_for_the_batch_result() {
    let s = server(0).await;
    let (stdout, _, code) = out(&s.bai(&["events", "b"]).await);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        "session_enqueued {\"sessionName\": \"b\"}\nsession_failure {\"exitCode\": 1}\nsession_terminated {}\n"
    );
    assert_eq!(s.log(), vec!["GET /events/session?sessionName=b&scope=*"]);
    let (stdout, _, code) = out(&s
        .bai(&["session", "events", "b", "--wait", "batch_session_result"])
        .await);
    assert_eq!(code, 1);
    assert_eq!(stdout.lines().count(), 2);
    let (_, _, code) = out(&s.bai(&["events", "b", "--wait", "session_enqueued"]).await);
    assert_eq!(code, 0);
    let (_, stderr, code) = out(&s.bai(&["events", "b", "--wait", "session_started"]).await);
    assert_eq!(code, 1);
    assert!(stderr.contains("ended before session_started"), "{stderr}");
}

#[tokio::test]
async fn a_broken_event_stream_is_opened_again_where_it_broke_off() {
    let s = server(0).await;
    let (stdout, stderr, code) = out(&s.bai(&["events", "flaky"]).await);
    assert_eq!(code, 0, "{stderr}");
    // Each event once, in order: the reconnect sent `Last-Event-ID: 9`.
    assert_eq!(
        stdout,
        "session_enqueued {}\nsession_started {}\nsession_terminated {}\n"
    );
    assert_eq!(s.log().len(), 2, "{:?}", s.log());
    assert!(stderr.contains("after event 9"), "{stderr}");
}

#[tokio::test]
async fn usage_config_and_connection_errors() {
    let (_, _, code) =
        out(&bai_at("http://127.0.0.1:1", &["ps", "--running", "--dead"], &[]).await);
    assert_eq!(code, 2);
    let (_, stderr, code) = out(&bai_at(
        "http://127.0.0.1:1",
        &["ps"],
        &[("BACKEND_ENDPOINT_TYPE", "session")],
    )
    .await);
    assert_eq!(code, 1);
    assert!(stderr.contains("BACKEND_ENDPOINT_TYPE=session"), "{stderr}");

    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ep = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    let (_, stderr, code) = out(&bai_at(&ep, &["logs", "x"], &[]).await);
    assert_eq!(code, 1);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "error: cannot reach the manager at {ep}: is `make up` running?"
        )),
        "{stderr}"
    );
    let (stdout, _, code) = out(&bai_at(&ep, &["version"], &[]).await);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("bai "), "{stdout}");
}

/// Options as JSON with sorted keys, whatever map order serde_json was built with.
fn sorted(v: &Value) -> String {
    let map: std::collections::BTreeMap<&String, &Value> = v
        .as_object()
        .map(|o| o.iter().collect())
        .unwrap_or_default();
    serde_json::to_string(&map).unwrap_or_default()
}

//! The client against a tiny recording HTTP server: every request must carry the headers of
//! the wire contract §2.2 and a signature that `bai_core::sign` (the manager's verifier)
//! accepts over the raw request target and Host.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_client::{Client, ClientError, Config, CreateSession, Mode};
use bai_core::sign::{SignInput, media_type_of, parse_authorization, sign};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

const AK: &str = "AKIAIOSFODNN7EXAMPLE";
const SK: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

#[derive(Debug, Clone)]
struct Recorded {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Recorded {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }

    /// Checks the envelope and re-computes the signature as the manager does.
    fn assert_signed(&self) {
        let date = self.header("date").expect("Date");
        let parsed = chrono::DateTime::parse_from_rfc3339(date).expect("ISO-8601 Date");
        assert!(date.ends_with("+00:00"), "{date}");
        assert_eq!(
            date.len(),
            "2026-01-02T03:04:05.123456+00:00".len(),
            "{date}"
        );
        assert_eq!(self.header("x-backendai-version"), Some("v9.20250722"));
        assert_eq!(self.header("x-backendai-domain"), Some("default"));
        let cred = parse_authorization(self.header("authorization").expect("Authorization"))
            .expect("BackendAI authorization");
        assert_eq!(cred.access_key, AK);
        assert_eq!(cred.hash, "sha256");
        let expect = sign(
            SK,
            &SignInput {
                method: &self.method,
                path_and_query: &self.target,
                date,
                date_ymd: &parsed.format("%Y%m%d").to_string(),
                host: self.header("host").expect("Host"),
                media_type: &media_type_of(self.header("content-type")),
                api_version: "v9.20250722",
            },
        );
        assert_eq!(cred.signature, expect, "signature mismatch for {self:?}");
    }
}

async fn read_request(sock: &mut tokio::net::TcpStream) -> Recorded {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = sock.read(&mut chunk).await.expect("read");
        assert!(n > 0, "client hung up mid-request");
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let method = first.next().unwrap_or("").to_string();
    let target = first.next().unwrap_or("").to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < len {
        let n = sock.read(&mut chunk).await.expect("read body");
        assert!(n > 0);
        body.extend_from_slice(&chunk[..n]);
    }
    Recorded {
        method,
        target,
        headers,
        body,
    }
}

fn reply(status: u16, content_type: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn json_reply(status: u16, body: Value) -> Vec<u8> {
    reply(status, "application/json", &body.to_string())
}

/// Serves one connection per canned response, in order; returns what it received.
async fn mock(responses: Vec<Vec<u8>>) -> (String, JoinHandle<Vec<Recorded>>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let h = tokio::spawn(async move {
        let mut seen = Vec::new();
        for resp in responses {
            let (mut sock, _) = l.accept().await.unwrap();
            seen.push(read_request(&mut sock).await);
            sock.write_all(&resp).await.unwrap();
            let _ = sock.shutdown().await;
        }
        seen
    });
    (format!("http://{addr}"), h)
}

fn client(endpoint: &str) -> Client {
    Client::new(Config::new(endpoint, AK, SK).unwrap()).unwrap()
}

#[tokio::test]
async fn rest_calls_are_signed_over_the_raw_target() {
    let (ep, h) = mock(vec![
        json_reply(200, json!({"result": {"logs": "hello\n"}})),
        reply(204, "text/plain", ""),
        json_reply(
            200,
            json!({"stats": {"status": "terminated"}, "status": "TERMINATED", "sessionId": "u-1"}),
        ),
        json_reply(200, json!({"result": {"PENDING": "t0", "RUNNING": "t1"}})),
        // Not a session as the API describes it: an error, not a half-read value.
        json_reply(200, json!({"name": "s1", "status": "RUNNING"})),
    ])
    .await;
    let c = client(&ep);
    assert_eq!(c.logs("my sess").await.unwrap(), "hello\n");
    c.rename("s1", "new name+1").await.unwrap();
    let v = c.destroy("s1", true).await.unwrap();
    assert_eq!(v.stats.status, "terminated");
    let hist = c.status_history("s1").await.unwrap();
    assert_eq!(hist[&bai_api::sessions::SessionStatus::Running], "t1");
    match c.info_rest("s1").await.unwrap_err() {
        ClientError::Protocol(m) => assert!(m.contains("session answer"), "{m}"),
        other => panic!("{other:?}"),
    }
    let seen = h.await.unwrap();
    let targets: Vec<(&str, &str)> = seen
        .iter()
        .map(|r| (r.method.as_str(), r.target.as_str()))
        .collect();
    assert_eq!(
        targets,
        vec![
            ("GET", "/session/my%20sess/logs"),
            ("POST", "/session/s1/rename?name=new+name%2B1"),
            ("DELETE", "/session/s1?forced=true"),
            ("GET", "/session/s1/status-history"),
            ("GET", "/session/s1"),
        ]
    );
    for r in &seen {
        r.assert_signed();
        assert_eq!(r.header("content-type"), Some("text/plain"));
        assert!(r.body.is_empty());
    }
}

#[tokio::test]
async fn create_posts_json_under_the_endpoint_prefix() {
    let (ep, h) = mock(vec![json_reply(
        201,
        json!({"sessionId": "5f0c9a43-3f76-4bd3-8d7c-6a8f7f0b2d11", "sessionName": "pysdk-0123456789",
               "status": "RUNNING", "servicePorts": [], "created": true}),
    )])
    .await;
    let c = client(&format!("{ep}/api/"));
    let mut req = CreateSession::new("python");
    req.name = Some("pysdk-0123456789".into());
    req.resources.insert(
        "mem".into(),
        bai_api::sessions::NumberOrText::Text("4096m".into()),
    );
    let r = c.create_session(&req).await.unwrap();
    assert_eq!(r.status, bai_api::sessions::CreateStatus::Running);
    assert_eq!(r.session_name, "pysdk-0123456789");
    let seen = h.await.unwrap();
    let p = &seen[0];
    assert_eq!(
        (p.method.as_str(), p.target.as_str()),
        ("POST", "/api/session")
    );
    assert_eq!(p.header("content-type"), Some("application/json"));
    p.assert_signed();
    let body = p.json();
    assert_eq!(body["image"], "python");
    assert_eq!(body["config"]["resources"]["mem"], "4096m");
    assert_eq!(body["enqueueOnly"], false);
    assert_eq!(body["type"], "interactive");
}

#[tokio::test]
async fn problems_and_graphql_errors_become_api_errors() {
    let (ep, h) = mock(vec![
        json_reply(
            404,
            json!({"type": "https://api.backend.ai/probs/session-not-found",
                   "title": "No such session.", "msg": "no session named \"nope\""}),
        ),
        json_reply(
            200,
            json!({"data": null, "errors": [{"message": "unknown field"}]}),
        ),
        json_reply(
            200,
            json!({"data": {"keypair": {"user_id": "u@x", "access_key": AK, "secret_key": SK,
                                         "is_active": true, "is_admin": false}}}),
        ),
    ])
    .await;
    let c = client(&ep);
    match c.logs("nope").await.unwrap_err() {
        ClientError::Api {
            status,
            kind,
            title,
            msg,
            ..
        } => {
            assert_eq!(status, 404);
            assert_eq!(kind, "https://api.backend.ai/probs/session-not-found");
            assert_eq!(title, "No such session.");
            assert_eq!(msg, "no session named \"nope\"");
        }
        other => panic!("{other:?}"),
    }
    let e = c.gql("query { x }", json!({})).await.unwrap_err();
    assert_eq!(e.to_string(), "unknown field");
    let kp = c.keypair_info().await.unwrap();
    assert!(!kp.is_admin && kp.is_active);
    let seen = h.await.unwrap();
    assert_eq!(seen[1].target, "/admin/gql");
    assert_eq!(seen[1].json()["query"], "query { x }");
    assert_eq!(
        seen[2].json()["query"],
        "query { keypair { user_id access_key secret_key is_active is_admin } }"
    );
    for r in &seen {
        r.assert_signed();
    }
}

#[tokio::test]
async fn an_unreachable_manager_is_named() {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let ep = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    let e = client(&ep).logs("x").await.unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, ClientError::Connect { .. }), "{e:?}");
    assert!(msg.contains(&ep) && msg.contains("make up"), "{msg}");
}

#[tokio::test]
async fn upload_sends_one_src_part_per_file() {
    let dir = std::env::temp_dir().join(format!("bai-client-wire-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("main.py"), "print(1)\n").unwrap();
    std::fs::write(dir.join("sub/data.txt"), "data").unwrap();
    let (ep, h) = mock(vec![reply(204, "text/plain", "")]).await;
    client(&ep)
        .upload(
            "sess",
            &[dir.join("main.py"), dir.join("sub/data.txt")],
            &dir,
        )
        .await
        .unwrap();
    let seen = h.await.unwrap();
    let r = &seen[0];
    assert_eq!(r.target, "/session/sess/upload");
    assert!(
        r.header("content-type")
            .is_some_and(|ct| ct.starts_with("multipart/form-data; boundary=")),
        "{r:?}"
    );
    r.assert_signed();
    let body = String::from_utf8_lossy(&r.body);
    assert!(
        body.contains("name=\"src\"; filename=\"main.py\""),
        "{body}"
    );
    assert!(
        body.contains("name=\"src\"; filename=\"sub/data.txt\""),
        "{body}"
    );
    assert!(body.contains("print(1)\n") && body.contains("data"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn events_stream_until_server_close() {
    let sse = "event: session_enqueued\ndata: {\"sessionName\": \"mysess\"}\n\n: keep-alive\n\nevent: session_started\ndata: {\"a\":\ndata: 1}\n\nevent: server_close\ndata: {}\n\n";
    let (ep, h) = mock(vec![reply(200, "text/event-stream", sse)]).await;
    let evs: Vec<_> = client(&ep)
        .events("mysess", "*")
        .await
        .unwrap()
        .collect()
        .await;
    let evs: Vec<_> = evs.into_iter().map(Result::unwrap).collect();
    assert_eq!(evs.len(), 2);
    assert_eq!(evs[0].name, "session_enqueued");
    assert_eq!(evs[1].data, "{\"a\":\n1}");
    let seen = h.await.unwrap();
    let r = &seen[0];
    assert_eq!(r.target, "/events/session?sessionName=mysess&scope=*");
    assert_eq!(r.header("content-type"), None);
    r.assert_signed();
}

#[tokio::test]
async fn execute_over_a_signed_websocket() {
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};

    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let ep = format!("http://{}", l.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let (sock, _) = l.accept().await.unwrap();
        let mut seen = None;
        let mut ws = tokio_tungstenite::accept_hdr_async(sock, |req: &Request, resp: Response| {
            seen = Some(Recorded {
                method: req.method().to_string(),
                target: req.uri().to_string(),
                headers: req
                    .headers()
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
                    .collect(),
                body: vec![],
            });
            Ok(resp)
        })
        .await
        .unwrap();
        let first = ws.next().await.unwrap().unwrap();
        let first: Value = serde_json::from_str(first.to_text().unwrap()).unwrap();
        ws.send(Message::Text(
            json!({"status": "waiting-input", "console": [["stdout", "name? "]], "exitCode": null,
                   "options": {"is_password": false}})
            .to_string()
            .into(),
        ))
        .await
        .unwrap();
        let input = ws.next().await.unwrap().unwrap();
        let input = input.to_text().unwrap().to_string();
        ws.send(Message::Text(
            json!({"status": "finished", "console": [["stdout", format!("hi {input}\n")], ["stderr", "warn"]],
                   "exitCode": 3})
            .to_string()
            .into(),
        ))
        .await
        .unwrap();
        let _ = ws.next().await;
        (seen.unwrap(), first)
    });
    let c = client(&ep);
    let mut ex = c
        .execute_ws("sess-1", "input()", Mode::Query, json!({}))
        .await
        .unwrap();
    let r = ex.next().await.unwrap().unwrap();
    assert_eq!(r.status, "waiting-input");
    ex.send_input("bob").await.unwrap();
    let r = ex.next().await.unwrap().unwrap();
    assert!(r.is_finished());
    assert_eq!(r.exit_code, Some(3));
    assert_eq!(r.console[0], ("stdout".into(), "hi bob\n".into()));
    ex.close().await;
    let (req, first) = server.await.unwrap();
    assert_eq!(req.target, "/stream/session/sess-1/execute");
    assert_eq!(req.header("content-type"), None);
    req.assert_signed();
    assert_eq!(
        first,
        json!({"code": "input()", "mode": "query", "options": {}})
    );
}

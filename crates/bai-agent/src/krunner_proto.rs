//! The krunner socket protocol, agent side: one JSON request line per connection
//! (`{"op":"ping"}` or `{"op":"exec", …ExecRequest}`), answered by JSON lines
//! (`{"t":"pong"}` or [`ExecEvent`]s ending with `finished`).

use bai_core::agent::{AgentError, ExecEvent, ExecRequest};
use serde_json::Value;

/// The readiness probe.
pub const PING: &[u8] = b"{\"op\":\"ping\"}\n";

/// Ends the runner at once (a kernel being destroyed); not answered.
pub const EXIT: &[u8] = b"{\"op\":\"exit\"}\n";

/// The variable that makes krunner listen on the pod network too (`ADDR:PORT`), serving only
/// connections whose first line is the token in [`TOKEN_FILE`] of its run directory.
pub const LISTEN_VAR: &str = "BAI_KRUNNER_LISTEN";

/// The variable naming the file whose existence lets krunner start (krunner's `gate::VAR`):
/// until then it starts nothing (the Kubernetes backend's `--network-policies node`, while
/// the agent loads the pod's egress rules).
pub const GATE_VAR: &str = "BAI_EGRESS_GATE";

/// The token's file in a kernel's run directory (krunner's `network::TOKEN_FILE`).
pub const TOKEN_FILE: &str = "krunner.token";

/// The request line for an execution: `{"op":"exec",` followed by the fields of the
/// serialized [`ExecRequest`] (`"mode"` first), and a newline.
pub fn request_line(req: &ExecRequest) -> Result<String, AgentError> {
    let body = serde_json::to_string(req)
        .map_err(|e| AgentError::BadRequest(format!("cannot encode the request: {e}")))?;
    let fields = body
        .strip_prefix('{')
        .filter(|rest| rest.len() > 1)
        .ok_or_else(|| {
            AgentError::BadRequest("an execution request must encode as a JSON object".into())
        })?;
    Ok(format!("{{\"op\":\"exec\",{fields}\n"))
}

/// The request line that starts an app: `{"op":"start-app","name":…}`.
pub fn start_app_line(name: &str) -> Result<String, AgentError> {
    let v = serde_json::json!({"op": "start-app", "name": name});
    Ok(format!("{v}\n"))
}

/// The request line that binds a pool kernel's runner to a session:
/// `{"op":"bind","env":["NAME=value",…]}`.
pub fn bind_line(env: &[String]) -> String {
    format!("{}\n", serde_json::json!({"op": "bind", "env": env}))
}

/// The request line that lists a directory: `{"op":"list-files","path":…}`.
pub fn list_files_line(path: &str) -> String {
    format!(
        "{}\n",
        serde_json::json!({"op": "list-files", "path": path})
    )
}

/// The request line that begins a preemption's grace (SIGTERM to the kernel's processes but
/// the runner): `{"op":"terminate"}`.
pub const TERMINATE: &str = "{\"op\":\"terminate\"}\n";

/// The request line for the kernel's resource counters: `{"op":"stats"}`.
pub const STATS: &str = "{\"op\":\"stats\"}\n";

/// The request line that archives one file or folder: `{"op":"download","path":…}`.
pub fn download_line(path: &str) -> String {
    format!("{}\n", serde_json::json!({"op": "download", "path": path}))
}

/// The request line that writes one file into the kernel as its user:
/// `{"op":"put","place":"home"|"run","path":…,"data":"<base64>","mode":…,"append":…}`.
pub fn put_line(place: &str, path: &str, data: &[u8], mode: u32, append: bool) -> String {
    use base64::Engine;
    let data = base64::engine::general_purpose::STANDARD.encode(data);
    format!(
        "{}\n",
        serde_json::json!({"op": "put", "place": place, "path": path, "data": data,
            "mode": mode, "append": append})
    )
}

/// Whether a reply line is the answer to [`PING`].
pub fn is_pong(line: &str) -> bool {
    serde_json::from_str::<Value>(line.trim())
        .ok()
        .is_some_and(|v| v.get("t").and_then(Value::as_str) == Some("pong"))
}

/// One event line from krunner (`None` for a line that is not an event).
pub fn parse_event(line: &[u8]) -> Option<ExecEvent> {
    serde_json::from_slice(line).ok()
}

/// krunner's own wire types, compiled here so both sides are checked against each other.
#[cfg(test)]
#[allow(dead_code)]
#[path = "../../bai-krunner/src/proto.rs"]
mod krunner;

#[cfg(test)]
mod tests {
    use super::*;

    fn requests() -> Vec<(ExecRequest, &'static str)> {
        vec![
            (
                ExecRequest::Query {
                    code: "1 + 1".into(),
                },
                r#"{"op":"exec","mode":"query","code":"1 + 1"}"#,
            ),
            (
                ExecRequest::Batch {
                    clean: None,
                    build: Some("*".into()),
                    exec: Some("python3 x.py a b".into()),
                },
                r#"{"op":"exec","mode":"batch","clean":null,"build":"*","exec":"python3 x.py a b"}"#,
            ),
            (
                ExecRequest::Input { line: "bob".into() },
                r#"{"op":"exec","mode":"input","line":"bob"}"#,
            ),
        ]
    }

    #[test]
    fn a_put_line_is_what_krunner_reads() {
        let line = put_line("run", "hosts", b"10.0.0.2\tsub1\n", 0o644, true);
        let krunner::Request::Put(p) = krunner::parse_request(&line).expect("krunner parses it")
        else {
            panic!("not a put: {line}");
        };
        assert_eq!(p.place, krunner::Place::Run);
        assert_eq!(p.path, "hosts");
        assert_eq!(p.data, "MTAuMC4wLjIJc3ViMQo=");
        assert_eq!((p.mode, p.append), (0o644, true));
        let home = put_line("home", "a.txt", b"", 0o600, false);
        let krunner::Request::Put(p) = krunner::parse_request(&home).expect("parses") else {
            panic!("not a put: {home}");
        };
        assert_eq!(
            (p.place, p.mode, p.append),
            (krunner::Place::Home, 0o600, false)
        );
    }

    #[test]
    fn requests_have_the_krunner_shape() {
        for (req, json) in requests() {
            let line = request_line(&req).expect("encodes");
            assert_eq!(line, format!("{json}\n"));
            let parsed = krunner::parse_request(&line).expect("krunner parses it");
            let krunner::Request::Exec(k) = parsed else {
                panic!("not an exec request: {parsed:?}");
            };
            // Back through krunner's type into bai-core's: the same value.
            let back: ExecRequest =
                serde_json::from_value(serde_json::to_value(&k).expect("encodes"))
                    .expect("bai-core parses krunner's request");
            assert_eq!(back, req);
        }
        assert_eq!(
            krunner::parse_request(std::str::from_utf8(PING).expect("utf-8")).ok(),
            Some(krunner::Request::Ping)
        );
        assert_eq!(
            krunner::parse_request(std::str::from_utf8(EXIT).expect("utf-8")).ok(),
            Some(krunner::Request::Exit)
        );
        assert_eq!(
            krunner::parse_request(STATS).ok(),
            Some(krunner::Request::Stats)
        );
        assert_eq!(
            krunner::parse_request(&download_line("out/a \"b\".csv")).ok(),
            Some(krunner::Request::Download {
                path: "out/a \"b\".csv".into()
            })
        );
    }

    #[test]
    fn krunner_events_are_bai_core_events() {
        let pairs = [
            (
                krunner::Event::Stdout {
                    data: "Hello, world!\n".into(),
                },
                ExecEvent::Stdout {
                    data: "Hello, world!\n".into(),
                },
                r#"{"t":"stdout","data":"Hello, world!\n"}"#,
            ),
            (
                krunner::Event::Stderr { data: "é".into() },
                ExecEvent::Stderr { data: "é".into() },
                r#"{"t":"stderr","data":"é"}"#,
            ),
            (
                krunner::Event::WaitingInput {
                    prompt: "Name: ".into(),
                    password: true,
                },
                ExecEvent::WaitingInput {
                    prompt: "Name: ".into(),
                    password: true,
                },
                r#"{"t":"waiting-input","prompt":"Name: ","password":true}"#,
            ),
            (
                krunner::Event::Finished { exit_code: 137 },
                ExecEvent::Finished { exit_code: 137 },
                r#"{"t":"finished","exit_code":137}"#,
            ),
        ];
        for (k, core, json) in pairs {
            let line = k.line();
            assert_eq!(line, format!("{json}\n"));
            assert_eq!(serde_json::to_string(&core).expect("encodes"), json);
            assert_eq!(parse_event(line.trim_end().as_bytes()), Some(core));
        }
        let pong = krunner::Event::Pong.line();
        assert!(is_pong(&pong));
        assert_eq!(parse_event(pong.as_bytes()), None);
        assert!(!is_pong("{\"t\":\"finished\",\"exit_code\":0}"));
    }
}

//! Code execution by long poll, `POST /session/{ref}` (the official SDK's
//! `ComputeSession.execute`, which Backend.AI's integration specs use), against `baid up` and a
//! real kernel: output and exit codes, a run that outlives one poll, input asked for and given,
//! and a run id nobody started.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::Server;
use serde_json::{Value, json};

fn post(s: &Server, session: &str, body: Value) -> Result<Value, (u16, String)> {
    let c = s.client(&s.user);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(c.send_json(
        reqwest::Method::POST,
        &format!("/session/{session}"),
        Some(&body),
    ))
    .map_err(|e| (e.status().unwrap_or(0), e.to_string()))
}

/// Polls until `finished`; returns every answer's status and the whole console.
fn run(s: &Server, session: &str, first: Value) -> (Vec<String>, Vec<(String, String)>, Value) {
    let mut reply = post(s, session, first).expect("execute")["result"].clone();
    let mut statuses = Vec::new();
    let mut console = Vec::new();
    loop {
        let status = reply["status"].as_str().unwrap_or("").to_string();
        for rec in reply["console"].as_array().cloned().unwrap_or_default() {
            let kind = rec[0].as_str().unwrap_or("").to_string();
            let text = rec[1].as_str().unwrap_or("").to_string();
            console.push((kind, text));
        }
        statuses.push(status.clone());
        if status != "continued" {
            return (statuses, console, reply);
        }
        let run_id = reply["runId"].clone();
        reply = post(
            s,
            session,
            json!({"mode": "continue", "code": "", "runId": run_id}),
        )
        .expect("continue")["result"]
            .clone();
    }
}

fn text(console: &[(String, String)], kind: &str) -> String {
    console
        .iter()
        .filter(|(k, _)| k == kind)
        .map(|(_, t)| t.as_str())
        .collect()
}

#[test]
fn rest_execution_by_long_poll() {
    let s = Server::start();
    s.bai(
        &s.user,
        &[
            "start", "-t", "restexec", "-r", "cpu=0.25", "-r", "mem=256m", "python",
        ],
    )
    .expect_ok();

    let (_, console, last) = run(
        &s,
        "restexec",
        json!({"mode": "query", "code": "print('Hello, world!')", "runId": "r1"}),
    );
    assert_eq!(last["status"], "finished");
    assert_eq!(last["exitCode"], 0);
    assert_eq!(last["runId"], "r1");
    assert_eq!(text(&console, "stdout"), "Hello, world!\n");

    let (_, console, last) = run(
        &s,
        "restexec",
        json!({"mode": "query", "code": "import sys; print('bye', file=sys.stderr); sys.exit(2)"}),
    );
    assert_eq!(last["exitCode"], 2);
    assert!(text(&console, "stderr").contains("bye"), "{console:?}");

    // A run longer than one poll: asked again with `continue` until it finishes.
    let (_, console, last) = run(
        &s,
        "restexec",
        json!({"mode": "query", "code": "import time\nfor i in range(3):\n    print('tick', i, flush=True); time.sleep(3)\nprint('done')"}),
    );
    assert_eq!(last["status"], "finished");
    assert_eq!(text(&console, "stdout"), "tick 0\ntick 1\ntick 2\ndone\n");

    // Input: the run waits, the line is given with `input`, the run goes on.
    let (_, console, last) = run(
        &s,
        "restexec",
        json!({"mode": "query", "code": "name = input('who? '); print('hi', name)"}),
    );
    assert_eq!(last["status"], "waiting-input", "{console:?}");
    assert!(text(&console, "stdout").contains("who? "));
    let run_id = last["runId"].clone();
    let (_, console, last) = run(
        &s,
        "restexec",
        json!({"mode": "input", "code": "bob", "runId": run_id}),
    );
    assert_eq!(last["status"], "finished");
    assert_eq!(text(&console, "stdout"), "hi bob\n");

    // A run nobody started, and a session that is not the caller's.
    let e = post(
        &s,
        "restexec",
        json!({"mode": "continue", "code": "", "runId": "nope"}),
    )
    .expect_err("unknown run");
    assert_eq!(e.0, 404, "{e:?}");
    let e =
        post(&s, "no-such-session", json!({"mode": "query", "code": "1"})).expect_err("no session");
    assert_eq!(e.0, 404, "{e:?}");
    s.bai(&s.user, &["rm", "restexec"]).expect_ok();
}

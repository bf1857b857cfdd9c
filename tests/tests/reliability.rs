//! Issue 18's promises that need a whole baid: a create cut off by a manager crash
//! (SIGKILL) and retried makes one session (`Idempotency-Key`, which `bai` sends on every
//! create and resends until the manager answers), and the official client's repeated
//! `clientSessionToken` finds the same session after a restart.

use bai_e2e::{Server, bin};
use serde_json::json;
use std::process::{Command, Stdio};

const DUMMY: [(&str, &str); 4] = [
    ("BAI_NO_DOCKER", "true"),
    ("BAI_DUMMY_AGENTS", "1"),
    ("BAI_DUMMY_CAPACITY", "cpu=4,mem=8g"),
    ("BAI_SCHEDULE_TICK_MS", "200"),
];

/// How many of the user's sessions, in any status, are named `name` (`bai ps --all`).
fn sessions_named(s: &Server, name: &str) -> usize {
    let r = s.bai(&s.user, &["ps", "--all"]);
    assert!(r.ok(), "{r:?}");
    r.stdout
        .lines()
        .filter(|l| l.split_whitespace().next() == Some(name))
        .count()
}

#[test]
fn a_create_cut_off_by_a_manager_crash_is_retried_and_makes_one_session() {
    let s = Server::start_with(&DUMMY);
    let port = s.port();
    // `bai start` waits for the session to run; this one may not run for an hour, so the
    // wait is still going on when the manager is killed. `--no-reuse`: a second create of
    // the name would be refused, so only the idempotency key can answer the retry.
    let mut cmd = Command::new(bin("bai"));
    cmd.args([
        "start",
        "--type",
        "batch",
        "-c",
        "true",
        "-t",
        "retried",
        "--starts-at",
        "1h",
        "--max-wait",
        "5",
        "--no-reuse",
        "python",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    for (k, v) in &s.user.vars {
        cmd.env(k, v);
    }
    let bai = cmd.spawn().expect("bai start");
    s.wait_for(60, "the session to be stored", || {
        (sessions_named(&s, "retried") == 1).then_some(())
    });
    let id = s.info(&s.user, "retried")["id"]
        .as_str()
        .expect("id")
        .to_string();
    let user = s.user.clone();
    let s = Server::start_in_port(s.crash(), &DUMMY, port);
    let out = bai.wait_with_output().expect("bai start ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bai start: {stdout}\n{stderr}");
    assert!(
        stdout.contains(&id),
        "bai start answered another session: {stdout}"
    );
    assert_eq!(sessions_named(&s, "retried"), 1);
    // The retry reached the restarted manager (its audit log has the create, for the
    // session the crashed one stored).
    let audit = s
        .api(&s.admin, "GET", "/admin/audit?action=POST%20/session", None)
        .expect("audit");
    let entries = audit["entries"].as_array().cloned().unwrap_or_default();
    assert!(
        entries
            .iter()
            .any(|e| e["target"] == id.as_str() && e["outcome"] == "ok"),
        "{entries:#?}"
    );

    // The official client's clientSessionToken, sent again after another crash, finds
    // the same session instead of making a second.
    let body = json!({"clientSessionToken": "retried", "image": "python", "type": "batch",
                      "startupCommand": "true", "enqueueOnly": true,
                      "starts_at": "1h", "config": {}});
    let s = Server::start_in_port(s.crash(), &DUMMY, port);
    let again = s
        .api(&user, "POST", "/session", Some(body))
        .expect("create");
    assert_eq!(again["sessionId"], id.as_str(), "{again}");
    assert_eq!(again["created"], false);
    assert_eq!(sessions_named(&s, "retried"), 1);
}

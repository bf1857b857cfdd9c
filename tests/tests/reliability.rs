//! Issue 18's promises that need a whole baid: a create cut off by a manager crash
//! (SIGKILL) and retried makes one session (`Idempotency-Key`, which `bai` sends on every
//! create and resends until the manager answers), and the official client's repeated
//! `clientSessionToken` finds the same session after a restart.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

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

/// One burst's creates, sent at once: each answer's status and body.
async fn burst(
    clients: &[bai_client::Client],
    round: usize,
    per_burst: usize,
) -> Vec<Result<serde_json::Value, String>> {
    let mut sends = Vec::new();
    for i in 0..per_burst {
        let c = &clients[i % clients.len()];
        let body = json!({"name": format!("burst-{round}-{i}"), "image": "python", "type": "batch",
                          "startupCommand": "sleep 1", "enqueueOnly": true,
                          "config": {"resources": {"cpu": 1, "mem": "512m"}}});
        sends.push(async move {
            c.send_json(bai_client::Method::POST, "/session", Some(&body))
                .await
                .map_err(|e| format!("{} {e}", e.status().unwrap_or(0)))
        });
    }
    futures::future::join_all(sends).await
}

/// Bursts of creates from three users: every session ends (the batch command ran) or was
/// refused with a reason; none is lost or stuck in between; `GET /session/{ref}` keeps
/// answering while they are made and run (its p99 is printed for docs/RELIABILITY.md; `make chaos`
/// runs 500 creates in bursts of 50).
#[test]
fn bursts_of_creates_from_several_users_all_end_or_are_refused_with_a_reason() {
    let total: usize = std::env::var("BAI_BURST_TOTAL")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let per_burst: usize = std::env::var("BAI_BURST_SIZE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(25);
    let s = Server::start_with(&[
        ("BAI_NO_DOCKER", "true"),
        ("BAI_DUMMY_AGENTS", "4"),
        ("BAI_DUMMY_CAPACITY", "cpu=4,mem=8g"),
        ("BAI_SCHEDULE_TICK_MS", "200"),
    ]);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let clients = vec![s.client(&s.user), s.client(&s.user2), s.client(&s.admin)];
    // A session to read while the bursts go on.
    rt.block_on(clients[0].send_json(
        bai_client::Method::POST,
        "/session",
        Some(&json!({"name": "probe", "image": "python", "enqueueOnly": true})),
    ))
    .expect("probe session");
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let c = s.client(&s.user);
        let done = done.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().expect("runtime");
            let mut lat = Vec::new();
            let mut failed = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let t = std::time::Instant::now();
                if rt
                    .block_on(c.send_json(bai_client::Method::GET, "/session/probe", None))
                    .is_err()
                {
                    failed += 1;
                }
                lat.push(t.elapsed().as_secs_f64());
                // A reader at a person's pace, well inside the keypair's rate limit.
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            (lat, failed)
        })
    };
    let mut created = Vec::new();
    let mut refused = Vec::new();
    for round in 0..total.div_ceil(per_burst) {
        for r in rt.block_on(burst(
            &clients,
            round,
            per_burst.min(total - round * per_burst),
        )) {
            match r {
                Ok(v) => created.push(v["sessionId"].as_str().expect("an id").to_string()),
                Err(why) => refused.push(why),
            }
        }
    }
    assert_eq!(created.len() + refused.len(), total);
    for why in &refused {
        // A refusal says why (a problem's msg after the status).
        assert!(
            why.split_once(' ').is_some_and(|(_, m)| m.len() > 10),
            "{why}"
        );
    }
    // Every created session ends: its `sleep 1` ran, once.
    let mut ended = 0;
    for id in &created {
        let info = s.wait_for(300, &format!("{id} to end"), || {
            let i = s.info(&s.admin, id);
            matches!(
                i["status"].as_str(),
                Some("TERMINATED" | "CANCELLED" | "ERROR")
            )
            .then_some(i)
        });
        assert_eq!(info["status"], "TERMINATED", "{info:#}");
        assert_eq!(info["result"], "SUCCESS", "{info:#}");
        ended += 1;
    }
    // The reader ran from the first burst until the last session ended.
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let (mut lat, read_failures) = reader.join().expect("reader");
    assert_eq!(
        read_failures, 0,
        "GET /session/probe failed during the bursts"
    );
    lat.sort_by(|a, b| a.total_cmp(b));
    let p99 = lat[(lat.len() * 99 / 100).min(lat.len() - 1)];
    println!(
        "BURST creates={total} bursts_of={per_burst} created={} refused={} ended={ended} lost=0 stuck=0 reads={} p99_get_session={:.1}ms",
        created.len(),
        refused.len(),
        lat.len(),
        p99 * 1000.0
    );
}

/// A web UI login outlives a restart of `baid up` on SQLite (issue 60): the session is in
/// the database, so the restarted manager answers the same cookie; a logout then ends it.
#[test]
fn a_web_login_outlives_a_restart() {
    let s = Server::start_with(&DUMMY);
    let email = "user@bai.local";
    let password = s.web_password(email);
    let mut browser = bai_e2e::oidc::Browser::new();
    assert_eq!(browser.web_login(&s.endpoint, email, &password), 200);
    let me = format!("{}/server/me", s.endpoint);
    assert_eq!(browser.get_json(&me).0, 200);

    // Stopped as an operator stops it (SIGTERM), and started again on its data dir.
    let port = s.port();
    s.signal("-TERM");
    let (_, _, data) = s.wait_exit(60);
    let s = Server::start_in_port(data, &DUMMY, port);
    let (status, who) = browser.get_json(&me);
    assert_eq!(status, 200, "the login did not survive: {who}\n{}", s.log());
    assert_eq!(who["email"], email, "{who}");

    assert_eq!(browser.web_logout(&s.endpoint), 200);
    assert_eq!(browser.get_json(&me).0, 401);
}

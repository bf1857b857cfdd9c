//! The scheduler end to end: `baid up` with dummy agents (no containers, the same agent
//! interface) driven through the `bai` CLI. Every assertion is about what a user sees:
//! statuses, reasons, queue positions, scheduling history.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::{Account, Server};
use serde_json::Value;

#[path = "scheduler/groups.rs"]
mod groups;

fn start(s: &Server, who: &Account, args: &[&str]) {
    let mut a = vec!["start", "--enqueue-only", "--type", "batch"];
    a.extend_from_slice(args);
    a.push("python");
    s.bai(who, &a).expect_ok();
}

fn status(s: &Server, who: &Account, name: &str) -> String {
    s.status(who, name)
}

/// The scheduling history records of a session, optionally filtered (`--result X` …).
fn history(s: &Server, who: &Account, name: &str, filter: &[&str]) -> Vec<String> {
    let mut a = vec!["session", "history", name, "--scheduling"];
    a.extend_from_slice(filter);
    let r = s.bai(who, &a);
    r.expect_ok();
    // Each record's row: its id (a UUID), then its phase.
    r.stdout
        .lines()
        .filter(|l| {
            let mut w = l.split_whitespace();
            let id = w.next().unwrap_or_default();
            uuid::Uuid::parse_str(id).is_ok()
                && matches!(w.next(), Some("schedule" | "enqueue" | "launch"))
        })
        .map(str::to_string)
        .collect()
}

fn scheduled_at(i: &Value) -> String {
    i["status_history"]["SCHEDULED"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn n_sessions_fill_the_agents_and_the_rest_wait_with_a_reason() {
    let s = Server::start_dummy(2, "cpu=2,mem=4g");
    let r = s.bai(
        &s.user,
        &[
            "start", "--type", "batch", "-c", "sleep 2", "-t", "fill", "--count", "5", "-r",
            "cpu=2", "-r", "mem=1g", "python",
        ],
    );
    r.expect_ok();
    assert!(r.stdout.contains("5 sessions are enqueued"), "{r:#?}");
    // Two agents of two cores: two run, three wait for cpu.
    s.wait_for(20, "two running", || {
        let running = (1..=5)
            .filter(|i| status(&s, &s.user, &format!("fill-{i}")) == "RUNNING")
            .count();
        (running == 2).then_some(())
    });
    let waiting: Vec<Value> = (1..=5)
        .map(|i| s.info(&s.user, &format!("fill-{i}")))
        .filter(|i| i["status"] == "PENDING")
        .collect();
    assert_eq!(waiting.len(), 3);
    for w in &waiting {
        let p = &w["pending"];
        assert_eq!(p["code"], "no-available-instances", "{w:#}");
        assert_eq!(p["reason"], "cpu short on 2 of 2 agents", "{w:#}");
        assert_eq!(
            w["status_info"],
            "no-available-instances: cpu short on 2 of 2 agents"
        );
    }
    let mut positions: Vec<u64> = waiting
        .iter()
        .map(|w| w["pending"]["queue_position"].as_u64().unwrap_or(0))
        .collect();
    positions.sort();
    assert_eq!(positions, vec![1, 2, 3]);
    // In words, through `bai session info`.
    let name = waiting[0]["name"].as_str().unwrap_or_default().to_string();
    let r = s.bai(&s.user, &["session", "info", &name]);
    r.expect_ok();
    assert!(
        r.stdout
            .contains("waiting because: cpu short on 2 of 2 agents"),
        "{r:#?}"
    );
    assert!(
        r.stdout.contains("short of: cpu on 2 (of 2 agents)"),
        "{r:#?}"
    );

    // As capacity frees, every one of them runs, each scheduled exactly once.
    for i in 1..=5 {
        let done = s.wait_status(&s.user, &format!("fill-{i}"), "TERMINATED", 60);
        assert_eq!(done["result"], "SUCCESS", "{done:#}");
        let h = history(
            &s,
            &s.user,
            &format!("fill-{i}"),
            &["--result", "SUCCESS", "--phase", "schedule"],
        );
        assert_eq!(h.len(), 1, "fill-{i}: {h:#?}");
    }
    // The waits were recorded and merged: one NEED_RETRY record with attempts ≥ 1.
    let h = history(
        &s,
        &s.user,
        waiting[0]["name"].as_str().unwrap_or_default(),
        &["--result", "NEED_RETRY"],
    );
    assert_eq!(h.len(), 1, "{h:#?}");
    assert!(h[0].contains("no-available-instances"), "{h:#?}");
    // A record's id picks exactly that record; an id that is not a UUID is refused.
    let name = waiting[0]["name"].as_str().unwrap_or_default();
    let id = h[0]
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string();
    let all = history(&s, &s.user, name, &[]);
    assert!(all.len() > 1, "{all:#?}");
    let one = history(&s, &s.user, name, &["--id", &id]);
    assert_eq!(one, h, "{one:#?}");
    let r = s.bai(&s.user, &["session", "history", name, "--id", "7"]);
    assert!(!r.ok() && r.stderr.contains("--id"), "{r:?}");
}

#[test]
fn fifo_then_lifo_order_and_rm_of_a_pending_session() {
    let s = Server::start_dummy(1, "cpu=1,mem=4g");
    let order = |names: &[&str]| -> Vec<String> {
        let mut v: Vec<(String, String)> = names
            .iter()
            .map(|n| {
                (
                    scheduled_at(&s.wait_status(&s.user, n, "TERMINATED", 60)),
                    n.to_string(),
                )
            })
            .collect();
        v.sort();
        v.into_iter().map(|(_, n)| n).collect()
    };
    // FIFO (the default): a blocker holds the only core while three queue up.
    start(
        &s,
        &s.user,
        &["-c", "sleep 1", "-t", "block1", "-r", "cpu=1"],
    );
    for n in ["fifo-a", "fifo-b", "fifo-c", "fifo-x"] {
        start(&s, &s.user, &["-c", "sleep 0.3", "-t", n, "-r", "cpu=1"]);
    }
    // Removing a PENDING session cancels it and frees its place in the queue.
    assert_eq!(status(&s, &s.user, "fifo-x"), "PENDING");
    s.bai(&s.user, &["rm", "fifo-x"]).expect_ok();
    let x = s.wait_status(&s.user, "fifo-x", "CANCELLED", 10);
    assert!(x["status_history"]["SCHEDULED"].is_null(), "{x:#}");
    assert_eq!(
        order(&["fifo-a", "fifo-b", "fifo-c"]),
        vec!["fifo-a", "fifo-b", "fifo-c"]
    );

    // LIFO: the newest waiting session goes first.
    s.bai(
        &s.admin,
        &[
            "admin",
            "resource-group",
            "update",
            "default",
            "--scheduler",
            "lifo",
        ],
    )
    .expect_ok();
    start(
        &s,
        &s.user,
        &["-c", "sleep 1", "-t", "block2", "-r", "cpu=1"],
    );
    s.wait_status(&s.user, "block2", "RUNNING", 10);
    for n in ["lifo-a", "lifo-b", "lifo-c"] {
        start(&s, &s.user, &["-c", "sleep 0.3", "-t", n, "-r", "cpu=1"]);
    }
    assert_eq!(
        order(&["lifo-a", "lifo-b", "lifo-c"]),
        vec!["lifo-c", "lifo-b", "lifo-a"]
    );
}

#[test]
fn drf_gives_the_free_core_to_the_user_with_the_smaller_share() {
    let s = Server::start_dummy(1, "cpu=4,mem=8g");
    s.bai(
        &s.admin,
        &[
            "admin",
            "resource-group",
            "update",
            "default",
            "--scheduler",
            "drf",
        ],
    )
    .expect_ok();
    // The admin keypair ("heavy") holds three of four cores for a while, and a fourth briefly.
    for i in 1..=3 {
        start(
            &s,
            &s.admin,
            &[
                "-c",
                "sleep 30",
                "-t",
                &format!("heavy-run-{i}"),
                "-r",
                "cpu=1",
                "-r",
                "mem=1g",
            ],
        );
    }
    start(
        &s,
        &s.admin,
        &[
            "-c",
            "sleep 2",
            "-t",
            "heavy-brief",
            "-r",
            "cpu=1",
            "-r",
            "mem=1g",
        ],
    );
    s.wait_status(&s.admin, "heavy-brief", "RUNNING", 10);
    // Both queue for the next free core: heavy's session first, then the user's.
    start(
        &s,
        &s.admin,
        &[
            "-c",
            "sleep 30",
            "-t",
            "heavy-next",
            "-r",
            "cpu=1",
            "-r",
            "mem=1g",
        ],
    );
    start(
        &s,
        &s.user,
        &[
            "-c",
            "sleep 30",
            "-t",
            "light-next",
            "-r",
            "cpu=1",
            "-r",
            "mem=1g",
        ],
    );
    assert_eq!(status(&s, &s.admin, "heavy-next"), "PENDING");
    s.wait_status(&s.user, "light-next", "RUNNING", 30);
    assert_eq!(status(&s, &s.admin, "heavy-next"), "PENDING");
}

#[test]
fn starts_at_and_policy_limits_keep_sessions_pending_with_the_right_reason() {
    let s = Server::start_dummy(2, "cpu=4,mem=8g");
    // A batch session never starts before its start time.
    start(
        &s,
        &s.user,
        &["-c", "sleep 0", "-t", "later", "--starts-at", "3s"],
    );
    let i = s.info(&s.user, "later");
    assert_eq!(i["status"], "PENDING");
    assert_eq!(i["pending"]["code"], "starts-at-not-reached", "{i:#}");
    let starts_at = i["starts_at"].as_str().unwrap_or_default().to_string();
    let done = s.wait_status(&s.user, "later", "TERMINATED", 30);
    assert!(
        scheduled_at(&done) >= starts_at,
        "scheduled {} before {starts_at}",
        scheduled_at(&done)
    );

    // Dependencies: wait until the dependency ended successfully; a failed one cancels.
    start(&s, &s.user, &["-c", "sleep 2", "-t", "dep-ok"]);
    start(
        &s,
        &s.user,
        &["-c", "sleep 0", "-t", "after-ok", "--depends", "dep-ok"],
    );
    let i = s.wait_for(10, "after-ok's reason", || {
        let i = s.info(&s.user, "after-ok");
        (i["pending"]["code"] == "dependency-not-finished").then_some(i)
    });
    assert_eq!(
        i["dependencies"][0]["id"],
        s.info(&s.user, "dep-ok")["id"],
        "{i:#}"
    );
    let dep = s.wait_status(&s.user, "dep-ok", "TERMINATED", 30);
    let after = s.wait_status(&s.user, "after-ok", "TERMINATED", 30);
    let dep_end = dep["terminated_at"].as_str().unwrap_or_default();
    assert!(scheduled_at(&after).as_str() >= dep_end, "{after:#}");
    start(&s, &s.user, &["-c", "sleep 30", "-t", "dep-bad"]);
    start(
        &s,
        &s.user,
        &["-c", "sleep 0", "-t", "after-bad", "--depends", "dep-bad"],
    );
    s.wait_status(&s.user, "dep-bad", "RUNNING", 10);
    s.bai(&s.user, &["rm", "dep-bad"]).expect_ok();
    let i = s.wait_status(&s.user, "after-bad", "CANCELLED", 20);
    assert!(
        i["status_info"]
            .as_str()
            .unwrap_or_default()
            .starts_with("dependency-failed"),
        "{i:#}"
    );
    let h = history(&s, &s.user, "after-bad", &["--result", "GIVE_UP"]);
    assert_eq!(h.len(), 1, "{h:#?}");
    let r = s.bai(
        &s.user,
        &["start", "--depends", "no-such-session", "python"],
    );
    assert!(r.stderr.contains("is not one of your sessions"), "{r:#?}");

    // A policy of one concurrent session and two pending ones.
    let ak = s.user.get("BACKEND_ACCESS_KEY").to_string();
    s.bai(
        &s.admin,
        &[
            "admin",
            "policy",
            "create",
            "tight",
            "--max-concurrent",
            "1",
            "--max-pending",
            "2",
        ],
    )
    .expect_ok();
    s.bai(&s.admin, &["admin", "policy", "assign", &ak, "tight"])
        .expect_ok();
    start(&s, &s.user, &["-c", "sleep 2", "-t", "lim-1"]);
    s.wait_status(&s.user, "lim-1", "RUNNING", 10);
    start(&s, &s.user, &["-c", "sleep 0", "-t", "lim-2"]);
    start(&s, &s.user, &["-c", "sleep 0", "-t", "lim-3"]);
    let i = s.wait_for(10, "lim-2's reason", || {
        let i = s.info(&s.user, "lim-2");
        (i["pending"]["code"] == "concurrency-limit").then_some(i)
    });
    assert!(
        i["pending"]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("1 of at most 1 concurrent sessions"),
        "{i:#}"
    );
    // A third pending session is refused at once, with the reason, and nothing is created.
    let r = s.bai(
        &s.user,
        &[
            "start",
            "--enqueue-only",
            "--type",
            "batch",
            "-c",
            "sleep 0",
            "-t",
            "lim-4",
            "python",
        ],
    );
    assert_ne!(r.code, 0, "{r:#?}");
    assert!(r.stderr.contains("2 PENDING sessions"), "{r:#?}");
    let r = s.bai(&s.user, &["session", "info", "lim-4"]);
    assert_ne!(r.code, 0, "{r:#?}");
    // They start as capacity under the policy frees.
    s.wait_status(&s.user, "lim-2", "TERMINATED", 30);
    s.wait_status(&s.user, "lim-3", "TERMINATED", 30);
    let h = history(&s, &s.user, "lim-3", &["--error-code", "concurrency-limit"]);
    assert_eq!(h.len(), 1, "{h:#?}");
}

#[test]
fn a_manager_crash_with_a_queue_in_flight_loses_nothing_and_schedules_nothing_twice() {
    let s = Server::start_dummy(1, "cpu=2,mem=4g");
    let names: Vec<String> = (1..=6).map(|i| format!("queued-{i}")).collect();
    for n in &names {
        start(&s, &s.user, &["-c", "sleep 1", "-t", n, "-r", "cpu=1"]);
    }
    s.wait_status(&s.user, "queued-1", "RUNNING", 10);
    let user = s.user.clone();
    let dir = s.crash();
    let env = [
        ("BAI_NO_DOCKER", "true"),
        ("BAI_DUMMY_AGENTS", "1"),
        ("BAI_DUMMY_CAPACITY", "cpu=2,mem=4g"),
        ("BAI_SCHEDULE_TICK_MS", "200"),
    ];
    let s = Server::start_in(dir, &env);
    let _ = user;
    for n in &names {
        let i = s.wait_for(60, &format!("{n} to end"), || {
            let i = s.info(&s.user, n);
            matches!(i["status"].as_str(), Some("TERMINATED" | "CANCELLED")).then_some(i)
        });
        assert_eq!(i["status"], "TERMINATED", "{n}: {i:#}");
        let h = history(&s, &s.user, n, &["--to-status", "SCHEDULED"]);
        assert_eq!(h.len(), 1, "{n} scheduled more than once: {h:#?}");
    }
}

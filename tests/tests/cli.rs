//! End to end through the `bai` CLI against a real `baid up` and a real Docker engine.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::Server;

#[test]
fn run_query_mode_prints_output_and_returns_exit_code() {
    let s = Server::start();
    let r = s.bai(
        &s.user,
        &["run", "--rm", "-c", "print(\"hello world\")", "python"],
    );
    r.expect_ok();
    assert_eq!(r.stdout, "hello world\n", "{r:#?}");

    let r = s.bai(&s.user, &["run", "--rm", "-c", "1 + 1", "python"]);
    r.expect_ok();
    assert_eq!(r.stdout, "2\n", "{r:#?}");

    let r = s.bai(
        &s.user,
        &[
            "run",
            "--rm",
            "-c",
            "import sys\nprint('oops', file=sys.stderr)\nsys.exit(3)",
            "python",
        ],
    );
    assert_eq!(r.code, 3, "{r:#?}");
    assert!(r.stderr.contains("oops"), "{r:#?}");

    // --rm removed every session.
    let ps = s.bai(&s.user, &["ps"]);
    ps.expect_ok();
    assert!(ps.stdout.contains("No matching items"), "{ps:#?}");
    // The official CLI's `--output json` on a listing: the finished sessions as items.
    let dead = s.bai(&s.user, &["--output", "json", "ps", "--dead"]);
    let v: serde_json::Value = serde_json::from_str(&dead.stdout).expect("json listing");
    let items = v["items"].as_array().expect("items");
    assert_eq!(items.len(), 3, "{v:#}");
    assert!(items.iter().all(|i| i["status"] == "TERMINATED"), "{v:#}");
}

#[test]
fn run_exec_uploads_the_file_and_runs_the_command() {
    let s = Server::start();
    std::fs::write(
        s.work.path().join("myscript.py"),
        "import sys\nprint('args:', sys.argv[1:])\n",
    )
    .unwrap();
    let r = s.bai(
        &s.user,
        &[
            "run",
            "--rm",
            "--exec",
            "python myscript.py arg1 arg2",
            "python",
            "./myscript.py",
        ],
    );
    r.expect_ok();
    assert!(r.stdout.contains("args: ['arg1', 'arg2']"), "{r:#?}");
}

#[test]
fn start_ps_rename_info_logs_rm() {
    let s = Server::start();
    let r = s.bai(
        &s.user,
        &[
            "start",
            "-t",
            "mysess",
            "-e",
            "GREETING=hi=there",
            "-r",
            "cpu=1",
            "-r",
            "mem=256m",
            "-r",
            "shmem=32m",
            "python",
        ],
    );
    r.expect_ok();
    assert!(r.stdout.contains("created"), "{r:#?}");
    assert_eq!(s.status(&s.user, "mysess"), "RUNNING");

    // Env var and shared memory size are real inside the container.
    let r = s.bai(&s.user, &["run", "-t", "mysess", "-c", "import os; print(os.environ['GREETING']); print(os.statvfs('/dev/shm').f_blocks * os.statvfs('/dev/shm').f_frsize)", "python"]);
    r.expect_ok();
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.first().copied(), Some("hi=there"), "{r:#?}");
    assert_eq!(
        lines.get(1).copied(),
        Some(&*(32u64 << 20).to_string()),
        "{r:#?}"
    );

    let ps = s.bai(&s.user, &["ps"]);
    ps.expect_ok();
    assert!(
        ps.stdout.contains("mysess") && ps.stdout.contains("RUNNING"),
        "{ps:#?}"
    );

    s.bai(&s.user, &["session", "rename", "mysess", "renamed-sess"])
        .expect_ok();
    assert_eq!(s.status(&s.user, "renamed-sess"), "RUNNING");
    s.bai(&s.user, &["session", "info", "mysess"])
        .expect_fail("no session");

    // A bad new name is refused with the rule.
    s.bai(&s.user, &["session", "rename", "renamed-sess", "a b"])
        .expect_fail("");

    s.bai(
        &s.user,
        &[
            "run",
            "-t",
            "renamed-sess",
            "-c",
            "print('to the log', flush=True)",
            "python",
        ],
    )
    .expect_ok();
    let logs = s.bai(&s.user, &["logs", "renamed-sess"]);
    logs.expect_ok();

    let rm = s.bai(&s.user, &["rm", "renamed-sess"]);
    rm.expect_ok();
    let info = s.info(&s.user, "renamed-sess");
    assert_eq!(info["status"], "TERMINATED");
    assert_eq!(info["status_info"], "user-requested");
    let hist = info["status_history"].as_object().unwrap();
    for st in [
        "PENDING",
        "SCHEDULED",
        "PREPARING",
        "CREATING",
        "RUNNING",
        "TERMINATING",
        "TERMINATED",
    ] {
        assert!(hist.contains_key(st), "missing {st} in {hist:?}");
    }
    let dead = s.bai(&s.user, &["ps", "--dead"]);
    assert!(dead.stdout.contains("renamed-sess"), "{dead:#?}");

    // `bai session info … | head -1`: a reader that stops early ends bai quietly, with the
    // status of a process killed by SIGPIPE, not a panic.
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut cmd = std::process::Command::new(bai_e2e::bin("bai"));
    cmd.args(["session", "info", "renamed-sess"])
        .stdout(writer)
        .stderr(std::process::Stdio::piped());
    for (k, v) in &s.user.vars {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run bai");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{out:?}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn bad_input_is_refused_with_a_reason_and_creates_nothing() {
    let s = Server::start();
    let cases: &[(&[&str], &str)] = &[
        (&["start", "-t", "ab", "python"], "4"),
        (&["start", "-t", "my session", "python"], "space"),
        (&["start", "-t", &"x".repeat(65), "python"], "64"),
        (&["start", "no-such-image"], "image"),
        (&["start", "-r", "cpu=-1", "python"], "cpu"),
        (&["start", "-r", "mem=lots", "python"], "mem"),
        (
            &["start", "-r", "mem=1g", "-r", "shmem=2g", "python"],
            "shared memory",
        ),
        (&["start", "-r", "cpu=4096", "python"], "largest node"),
    ];
    for (args, needle) in cases {
        let r = s.bai(&s.user, args);
        r.expect_fail(needle);
        assert_eq!(
            r.stderr.trim().lines().count(),
            1,
            "one line of error expected: {r:#?}"
        );
    }
    let all = s.bai(&s.user, &["ps", "--all"]);
    assert!(
        all.stdout.contains("No matching items"),
        "nothing may be created: {all:#?}"
    );
    s.bai(&s.user, &["rm", "does-not-exist"])
        .expect_fail("no session");
}

#[test]
fn users_see_only_their_own_sessions_admins_see_all() {
    let s = Server::start();
    s.bai(
        &s.user,
        &["start", "--enqueue-only", "-t", "users-sess", "python"],
    )
    .expect_ok();
    s.bai(
        &s.admin,
        &["start", "--enqueue-only", "-t", "admins-sess", "python"],
    )
    .expect_ok();

    // The user cannot see, touch or rename the admin's session: it does not exist for them.
    s.bai(&s.user, &["session", "info", "admins-sess"])
        .expect_fail("no session");
    s.bai(&s.user, &["rm", "admins-sess"])
        .expect_fail("no session");
    let ps = s.bai(&s.user, &["ps"]);
    assert!(
        !ps.stdout.contains("admins-sess") && ps.stdout.contains("users-sess"),
        "{ps:#?}"
    );
    s.bai(&s.user, &["admin", "sessions"]).expect_fail("admin");

    let all = s.bai(&s.admin, &["admin", "sessions"]);
    all.expect_ok();
    assert!(
        all.stdout.contains("admins-sess") && all.stdout.contains("users-sess"),
        "{all:#?}"
    );
    let user_ak = s.user.get("BACKEND_ACCESS_KEY").to_string();
    let only_user = s.bai(&s.admin, &["admin", "sessions", "--access-key", &user_ak]);
    assert!(
        only_user.stdout.contains("users-sess") && !only_user.stdout.contains("admins-sess"),
        "{only_user:#?}"
    );

    s.bai(&s.user, &["rm", "users-sess"]).expect_ok();
    s.bai(&s.admin, &["rm", "admins-sess"]).expect_ok();
}

#[test]
fn batch_sessions_finish_time_out_and_respect_starts_at() {
    let s = Server::start();
    // A batch that succeeds: the create call returns after it finished.
    let r = s.bai(
        &s.user,
        &[
            "start",
            "--type",
            "batch",
            "-t",
            "batch-ok",
            "-c",
            "echo batch-output; exit 0",
            "python",
        ],
    );
    r.expect_ok();
    let info = s.wait_terminated(&s.user, "batch-ok", 30);
    assert_eq!(info["result"], "SUCCESS", "{info}");
    assert_eq!(info["status_info"], "task-finished", "{info}");
    let logs = s.bai(&s.user, &["logs", "batch-ok"]);
    assert!(logs.stdout.contains("batch-output"), "{logs:#?}");

    // A failing batch keeps its exit code.
    s.bai(
        &s.user,
        &[
            "start",
            "--type",
            "batch",
            "-t",
            "batch-bad",
            "-c",
            "exit 3",
            "python",
        ],
    );
    let info = s.wait_terminated(&s.user, "batch-bad", 30);
    assert_eq!(info["result"], "FAILURE", "{info}");
    assert_eq!(info["exit_code"], 3, "{info}");

    // A batch that runs too long is killed with task-timeout.
    s.bai(
        &s.user,
        &[
            "start",
            "--enqueue-only",
            "--type",
            "batch",
            "-t",
            "batch-slow",
            "--batch-timeout",
            "2",
            "-c",
            "sleep 300",
            "python",
        ],
    )
    .expect_ok();
    let info = s.wait_terminated(&s.user, "batch-slow", 60);
    assert_eq!(info["status_info"], "task-timeout", "{info}");
    assert_eq!(info["result"], "FAILURE", "{info}");

    // starts_at: it waits, with the reason, and never runs before its time.
    let r = s.bai(
        &s.user,
        &[
            "start",
            "--enqueue-only",
            "--type",
            "batch",
            "-t",
            "batch-later",
            "--starts-at",
            "4s",
            "-c",
            "date",
            "python",
        ],
    );
    r.expect_ok();
    let pending = s.info(&s.user, "batch-later");
    assert_eq!(pending["status"], "PENDING", "{pending}");
    let starts_at = pending["starts_at"]
        .as_str()
        .expect("starts_at")
        .to_string();
    let info = s.wait_terminated(&s.user, "batch-later", 60);
    let ran = info["status_history"]["RUNNING"]
        .as_str()
        .expect("RUNNING time")
        .to_string();
    assert!(
        ran >= starts_at,
        "ran at {ran}, before starts_at {starts_at}"
    );
}

#[test]
fn out_of_memory_ends_only_that_session() {
    let s = Server::start();
    s.bai(
        &s.user,
        &["start", "-t", "bystander", "-r", "mem=256m", "python"],
    )
    .expect_ok();
    s.bai(
        &s.user,
        &["start", "-t", "hungry", "-r", "mem=128m", "python"],
    )
    .expect_ok();
    let r = s.bai(
        &s.user,
        &[
            "run",
            "-t",
            "hungry",
            "-c",
            "x = bytearray(600 * 1024 * 1024)\nprint(len(x))",
            "python",
        ],
    );
    assert_ne!(r.code, 0, "{r:#?}");
    let info = s.wait_terminated(&s.user, "hungry", 30);
    assert_eq!(info["status_info"], "out-of-memory", "{info}");
    assert_eq!(s.status(&s.user, "bystander"), "RUNNING");
    s.bai(
        &s.user,
        &["run", "-t", "bystander", "-c", "print('alive')", "python"],
    )
    .expect_ok();
    s.bai(&s.user, &["rm", "bystander"]).expect_ok();
}

#[test]
fn queued_sessions_wait_and_are_cancelled_by_rm() {
    let s = Server::start();
    // Fill the node's CPUs, then one more waits PENDING with the reason.
    let cores: u64 = std::thread::available_parallelism()
        .map(|n| n.get() as u64)
        .unwrap_or(2);
    let big = format!("cpu={cores}");
    s.bai(
        &s.user,
        &[
            "start", "-t", "cpu-hog", "-r", &big, "-r", "mem=128m", "python",
        ],
    )
    .expect_ok();
    let r = s.bai(
        &s.user,
        &[
            "start",
            "--enqueue-only",
            "-t",
            "waiter",
            "-r",
            "cpu=1",
            "-r",
            "mem=128m",
            "python",
        ],
    );
    r.expect_ok();
    assert!(r.stdout.contains("enqueued"), "{r:#?}");
    let info = s.wait_for(10, "a reason for waiting", || {
        let i = s.info(&s.user, "waiter");
        i["status_info"]
            .as_str()
            .is_some_and(|x| x.contains("cpu short"))
            .then_some(i)
    });
    assert_eq!(info["status"], "PENDING");

    // --max-wait gives up waiting but leaves the session queued.
    let r = s.bai(
        &s.user,
        &[
            "start",
            "--max-wait",
            "1",
            "-t",
            "waiter2",
            "-r",
            "cpu=1",
            "-r",
            "mem=128m",
            "python",
        ],
    );
    r.expect_ok();
    assert_eq!(s.status(&s.user, "waiter2"), "PENDING");
    s.bai(&s.user, &["rm", "waiter2"]).expect_ok();
    assert_eq!(s.status(&s.user, "waiter2"), "CANCELLED");

    // Freeing the hog lets the waiter start.
    s.bai(&s.user, &["rm", "cpu-hog"]).expect_ok();
    s.wait_for(30, "waiter to run", || {
        (s.status(&s.user, "waiter") == "RUNNING").then_some(())
    });
    s.bai(&s.user, &["rm", "waiter"]).expect_ok();
}

#[test]
fn events_stream_the_whole_lifecycle() {
    let s = Server::start();
    s.bai(&s.user, &["start", "-t", "evsess", "python"])
        .expect_ok();
    s.bai(&s.user, &["rm", "evsess"]).expect_ok();
    let ev = s.bai(&s.user, &["events", "evsess"]);
    ev.expect_ok();
    let names: Vec<&str> = ev
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let expected = [
        "session_enqueued",
        "session_scheduled",
        "session_preparing",
        "session_started",
        "session_terminating",
        "session_terminated",
    ];
    let mut pos = 0;
    for want in expected {
        let found = names[pos..].iter().position(|n| *n == want);
        assert!(
            found.is_some(),
            "{want} missing or out of order in {names:?}"
        );
        pos += found.unwrap_or(0) + 1;
    }
    assert!(ev.stdout.contains("user-requested"), "{ev:#?}");
}

#[test]
fn a_wrong_secret_is_refused() {
    let s = Server::start();
    let mut bad = s.user.clone();
    for (k, v) in bad.vars.iter_mut() {
        if k == "BACKEND_SECRET_KEY" {
            *v = "not-the-secret".into();
        }
    }
    s.bai(&bad, &["ps"]).expect_fail("signature");
}

#[test]
fn a_session_without_a_name_gets_a_readable_one() {
    let s = Server::start();
    let r = s.bai(&s.user, &["start", "--enqueue-only", "python"]);
    r.expect_ok();
    let ps = s.bai(&s.user, &["ps"]);
    let name = ps
        .stdout
        .lines()
        .nth(2)
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no row: {ps:#?}"))
        .to_string();
    let parts: Vec<&str> = name.split('-').collect();
    assert_eq!(parts.len(), 3, "{name}");
    assert!(
        parts[0].chars().all(|c| c.is_ascii_lowercase())
            && parts[1].chars().all(|c| c.is_ascii_lowercase()),
        "{name}"
    );
    assert!(
        parts[2].len() == 4 && parts[2].chars().all(|c| c.is_ascii_hexdigit()),
        "{name}"
    );
    s.bai(&s.user, &["rm", &name]).expect_ok();
}

#[test]
fn session_files_lists_a_running_sessions_directory() {
    let s = Server::start();
    s.bai(&s.user, &["start", "-t", "files-sess", "python"])
        .expect_ok();
    std::fs::write(s.work.path().join("data.csv"), "a,b\n").expect("write");
    s.bai(&s.user, &["upload", "files-sess", "data.csv"])
        .expect_ok();
    let ls = s.bai(&s.user, &["session", "files", "files-sess"]);
    ls.expect_ok();
    assert!(
        ls.stdout.contains("/home/work") && ls.stdout.contains("data.csv"),
        "{ls:#?}"
    );
    let v: serde_json::Value = serde_json::from_str(
        &s.bai(
            &s.user,
            &["--output", "json", "session", "ls", "files-sess"],
        )
        .stdout,
    )
    .expect("json listing");
    let csv = v["items"]
        .as_array()
        .and_then(|a| a.iter().find(|e| e["filename"] == "data.csv").cloned())
        .expect("data.csv listed");
    assert_eq!(csv["size"], 4, "{v:#}");
    s.bai(&s.user, &["session", "files", "files-sess", "no/such/dir"])
        .expect_fail("no/such/dir");
    // Another user's session is not there for them.
    s.bai(&s.user2, &["session", "files", "files-sess"])
        .expect_fail("files-sess");
    s.bai(&s.user, &["rm", "files-sess"]).expect_ok();
}

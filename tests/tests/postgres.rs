//! A manager on PostgreSQL (`baid up --database postgres://…`): a real Docker session runs,
//! its state is PostgreSQL's (the data dir has no SQLite file), it outlives a SIGKILL of the
//! manager, and a database that cannot be reached stops baid with one line. The database is
//! a new one in the tests' cluster (`scripts/test-postgres.sh`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bai_e2e::{Server, bin, free_port};
use std::process::{Command, Stdio};

fn sessions_in(url: &str) -> Vec<(String, String)> {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    c.query("SELECT name, status FROM sessions ORDER BY created_at", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

#[test]
fn a_manager_on_postgres_runs_sessions_and_keeps_them_across_a_crash() {
    let url = bai_store::testing::fresh_database().expect("a database in the test cluster");
    let s = Server::start_with(&[("BAI_DATABASE", &url)]);
    assert!(
        !s.data_dir.path().join("bai.db").exists(),
        "a manager on PostgreSQL made an SQLite database"
    );

    let r = s.bai(&s.user, &["run", "--rm", "-c", "print(6 * 7)", "python"]);
    r.expect_ok();
    assert_eq!(r.stdout, "42\n", "{r:#?}");

    s.bai(&s.user, &["start", "-t", "kept", "python"])
        .expect_ok();
    assert_eq!(s.status(&s.user, "kept"), "RUNNING");
    let rows = sessions_in(&url);
    assert!(
        rows.iter().any(|(n, st)| n == "kept" && st == "RUNNING"),
        "PostgreSQL holds the session: {rows:?}"
    );

    // SIGKILL: nothing is flushed on the way out; what was committed is PostgreSQL's.
    let port = s.port();
    let s = Server::start_in_port(
        s.crash_keeping_containers(),
        &[("BAI_DATABASE", &url)],
        port,
    );
    assert_eq!(s.status(&s.user, "kept"), "RUNNING", "{}", s.log());
    let r = s.bai(
        &s.user,
        &["run", "-t", "kept", "-c", "print('still here')", "python"],
    );
    r.expect_ok();
    assert!(r.stdout.contains("still here"), "{r:#?}");
    s.bai(&s.user, &["rm", "kept"]).expect_ok();
    s.wait_for(120, "kept to end", || {
        sessions_in(&url)
            .iter()
            .any(|(n, st)| n == "kept" && st == "TERMINATED")
            .then_some(())
    });
    // The finished `bai run` and the session ended here, both listed from PostgreSQL.
    let dead = s.bai(&s.user, &["--output", "json", "ps", "--dead"]);
    let v: serde_json::Value = serde_json::from_str(&dead.stdout).expect("json listing");
    assert_eq!(v["items"].as_array().map(Vec::len), Some(2), "{v:#}");
}

#[test]
fn an_unreachable_database_stops_baid_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin("baid"))
        .arg("up")
        .env("BAI_DATA_DIR", dir.path())
        .env("BAI_LISTEN", format!("127.0.0.1:{}", free_port()))
        .env("BAI_NO_DOCKER", "true")
        // Nothing listens on port 1.
        .env("BAI_DATABASE", "postgres://bai:s3cret@127.0.0.1:1/bai")
        .stdin(Stdio::null())
        .output()
        .expect("run baid");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("cannot open the database"), "{stderr}");
    assert!(lines[0].contains("127.0.0.1:1"), "{stderr}");
    assert!(
        !stderr.contains("s3cret"),
        "the password reached the output: {stderr}"
    );
}

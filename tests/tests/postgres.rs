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

/// `baid up` (no Docker, a data dir of its own) on `database`, run to its end: for a start
/// that is refused.
fn up_refused(database: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    Command::new(bin("baid"))
        .arg("up")
        .env("BAI_DATA_DIR", dir.path())
        .env("BAI_LISTEN", format!("127.0.0.1:{}", free_port()))
        .env("BAI_NO_DOCKER", "true")
        .env("BAI_DATABASE", database)
        .stdin(Stdio::null())
        .output()
        .expect("run baid up")
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

    // SIGKILL: nothing is flushed on the way out; what was committed is PostgreSQL's. The
    // manager started again takes its own lease over once it expired.
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
    // Nothing listens on port 1.
    let out = up_refused("postgres://bai:s3cret@127.0.0.1:1/bai");
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

/// A manager of another build holds the lease (its row says so, as that build writes it): a
/// second manager refuses to start beside it, in one line that names both builds, and the
/// leader serves on.
#[test]
fn managers_of_two_versions_refuse_to_share_a_database() {
    let url = bai_store::testing::fresh_database().expect("a database in the test cluster");
    let leader = Server::start_with(&[("BAI_DATABASE", &url), ("BAI_NO_DOCKER", "true")]);
    let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let n = db
        .execute(
            "UPDATE leases SET version = '0.0.1 (schema 1)' WHERE name = 'manager'",
            &[],
        )
        .unwrap();
    assert_eq!(n, 1, "the leader holds the lease");

    let out = up_refused(&url);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("runs bai 0.0.1 (schema 1)"), "{stderr}");
    assert!(
        lines[0].contains(&format!("127.0.0.1:{}", leader.port())),
        "{stderr}"
    );
    assert!(lines[0].contains("must run one version"), "{stderr}");
    leader.bai(&leader.admin, &["ps"]).expect_ok();
}

/// `baid db migrate`: an installation made on SQLite (sessions, history, folders, a share
/// invitation, a dotfile, a policy, a project, an image alias) moves to PostgreSQL, every
/// table is compared, and a manager on PostgreSQL serves it to the same users with the same
/// keys. A database that already holds an installation is refused.
#[test]
fn an_installation_moves_from_sqlite_to_postgres() {
    let dummy = [
        ("BAI_NO_DOCKER", "true"),
        ("BAI_DUMMY_AGENTS", "1"),
        ("BAI_DUMMY_CAPACITY", "cpu=4,mem=8g"),
    ];
    let s = Server::start_with(&dummy);
    s.bai(&s.user, &["start", "-t", "kept", "python"])
        .expect_ok();
    s.bai(&s.user, &["start", "-t", "gone", "python"])
        .expect_ok();
    s.bai(&s.user, &["rm", "gone"]).expect_ok();
    s.bai(&s.user, &["vfolder", "create", "data1"]).expect_ok();
    s.bai(&s.user, &["vfolder", "invite", "data1", "user2@bai.local"])
        .expect_ok();
    let vimrc = s.work.path().join("vimrc");
    std::fs::write(&vimrc, "set number\n").unwrap();
    s.bai(
        &s.user,
        &["dotfile", "create", ".vimrc", "-f", vimrc.to_str().unwrap()],
    )
    .expect_ok();
    s.bai(
        &s.admin,
        &["admin", "policy", "create", "gold", "--max-concurrent", "3"],
    )
    .expect_ok();
    s.bai(&s.admin, &["admin", "project", "create", "proj1"])
        .expect_ok();
    let data = s.crash();
    let db = data.path().join("bai.db");

    let url = bai_store::testing::fresh_database().unwrap();
    let migrate = |to: &str| {
        Command::new(bin("baid"))
            .args(["db", "migrate", "--from"])
            .arg(format!("sqlite:{}", db.display()))
            .args(["--to", to])
            .output()
            .expect("run baid db migrate")
    };
    let out = migrate(&url);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("every table compared equal"), "{stdout}");

    // Counted here too, table by table, on each engine.
    let lite = rusqlite::Connection::open(&db).unwrap();
    let mut pg = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    for table in bai_store::copy::tables() {
        let sql = format!("SELECT count(*) FROM {table}");
        let a: i64 = lite.query_row(&sql, [], |r| r.get(0)).unwrap();
        let b: i64 = pg.query_one(&sql, &[]).unwrap().get(0);
        assert_eq!(a, b, "rows of {table}");
    }
    drop(lite);

    // A manager on PostgreSQL, on the same data dir (its env files name the same keys).
    let mut env = dummy.to_vec();
    env.push(("BAI_DATABASE", &url));
    let s = Server::start_in(data, &env);
    assert_eq!(s.info(&s.user, "kept")["name"], "kept");
    let dead = s.bai(&s.user, &["ps", "--dead"]);
    assert!(dead.stdout.contains("gone"), "{dead:#?}");
    let folders = s.bai(&s.user, &["vfolder", "list"]);
    assert!(folders.stdout.contains("data1"), "{folders:#?}");
    let invited = s.bai(&s.user2, &["vfolder", "invitations"]);
    assert!(invited.stdout.contains("data1"), "{invited:#?}");
    let dot = s.bai(&s.user, &["dotfile", "get", ".vimrc"]);
    assert_eq!(dot.stdout, "set number\n", "{dot:#?}");
    let policies = s.bai(&s.admin, &["admin", "policy", "list"]);
    assert!(policies.stdout.contains("gold"), "{policies:#?}");
    let projects = s.bai(&s.admin, &["admin", "project", "list"]);
    assert!(projects.stdout.contains("proj1"), "{projects:#?}");
    // New rows are numbered after the copied ones (PostgreSQL's counters were moved).
    s.bai(&s.user, &["start", "-t", "after", "python"])
        .expect_ok();
    drop(s);

    let out = Command::new(bin("baid"))
        .args(["db", "migrate", "--from", &url, "--to", &url])
        .output()
        .expect("run baid db migrate");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("already holds an installation"), "{stderr}");
}

/// `baid db backup` of a PostgreSQL database names PostgreSQL's own tool, without the
/// password.
#[test]
fn a_postgres_backup_is_pg_dumps() {
    let out = Command::new(bin("baid"))
        .args(["db", "backup", "/tmp/never-written.db"])
        .env("BAI_DATABASE", "postgres://bai:s3cret@db.example:5432/bai")
        .output()
        .expect("run baid db backup");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("pg_dump"), "{stderr}");
    assert!(!stderr.contains("s3cret"), "{stderr}");
    assert!(!std::path::Path::new("/tmp/never-written.db").exists());
}

//! Running bai as an operator does: `baid --config FILE` (flags from a TOML file; the
//! command line and the environment win), and `baid db backup` / `baid db restore` round
//! trips of a database with sessions, users and policies, compared table by table.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bai_e2e::{Server, bin, free_port};
use rusqlite::Connection;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Starts `baid up --config FILE` with `env`, reads its banner up to "Stop with Ctrl-C",
/// and hands back the banner (the child is killed).
fn banner(config: &Path, data_dir: &Path, env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(bin("baid"));
    cmd.args(["--config", config.to_str().unwrap(), "up"])
        .env("BAI_DATA_DIR", data_dir)
        .env("BAI_KRUNNER", bin("bai-krunner"))
        .env_remove("BAI_LISTEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn baid");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut text = String::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => {
                text.push_str(&line);
                text.push('\n');
                if line.starts_with("Stop with Ctrl-C") {
                    break;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    text
}

#[test]
fn a_config_file_sets_flags_and_the_command_line_and_environment_win() {
    let dir = tempfile::tempdir().unwrap();
    let (file_port, env_port) = (free_port(), free_port());
    let config = dir.path().join("baid.toml");
    std::fs::write(
        &config,
        format!(
            "# a manager with one dummy agent\nlisten = \"127.0.0.1:{file_port}\"\n\n[up]\nno-docker = true\ndummy-agents = 1\ndummy-capacity = \"cpu=3,mem=2g\"\nagent-listen = \"off\"\n\n[agent]\nheartbeat = \"5s\"\n"
        ),
    )
    .unwrap();
    let data = dir.path().join("data");
    let text = banner(&config, &data, &[]);
    assert!(
        text.contains(&format!("API endpoint : http://127.0.0.1:{file_port}")),
        "{text}"
    );
    assert!(text.contains("dummy-default-0000 (3 cores"), "{text}");
    assert!(text.contains("agents join  : off"), "{text}");
    // The environment wins over the file.
    let text = banner(
        &config,
        &data,
        &[("BAI_LISTEN", &format!("127.0.0.1:{env_port}"))],
    );
    assert!(
        text.contains(&format!("API endpoint : http://127.0.0.1:{env_port}")),
        "{text}"
    );

    // A key no flag has, and a bad value: one line each, exit 2 / the flag's own error.
    std::fs::write(&config, "[up]\nlisen = \"127.0.0.1:1\"\n").unwrap();
    let out = Command::new(bin("baid"))
        .args(["--config", config.to_str().unwrap(), "up"])
        .env("BAI_DATA_DIR", &data)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("lisen") && err.contains("no flag --lisen"),
        "{err}"
    );
    std::fs::write(&config, "[up]\napp-ports = \"9-8\"\n").unwrap();
    let out = Command::new(bin("baid"))
        .args(["--config", config.to_str().unwrap(), "up"])
        .env("BAI_DATA_DIR", &data)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("app-ports"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One value as text.
fn cell(v: rusqlite::types::ValueRef<'_>) -> String {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => "NULL".into(),
        ValueRef::Integer(n) => n.to_string(),
        ValueRef::Real(f) => f.to_string(),
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        ValueRef::Blob(b) => format!("blob:{}", b.len()),
    }
}

/// Every table's rows, in a stable order.
fn tables(db: &Path) -> Vec<(String, Vec<String>)> {
    let conn = Connection::open(db).unwrap();
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    names
        .into_iter()
        .map(|t| {
            let mut st = conn.prepare(&format!("SELECT * FROM \"{t}\"")).unwrap();
            let n = st.column_count();
            let mut rows: Vec<String> = st
                .query_map([], |r| {
                    Ok((0..n)
                        .map(|i| cell(r.get_ref(i).unwrap()))
                        .collect::<Vec<_>>()
                        .join("|"))
                })
                .unwrap()
                .map(Result::unwrap)
                .collect();
            rows.sort();
            (t, rows)
        })
        .collect()
}

fn baid_db(args: &[&str]) -> (bool, String) {
    let out = Command::new(bin("baid"))
        .arg("db")
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn a_backup_taken_while_running_restores_every_table() {
    let s = Server::start_dummy(1, "cpu=2,mem=4g");
    // Sessions (one ended, one running), a policy, a user.
    s.bai(&s.user, &["start", "-t", "keep", "python"])
        .expect_ok();
    s.bai(
        &s.user,
        &[
            "start", "--type", "batch", "-c", "true", "-t", "done", "python",
        ],
    )
    .expect_ok();
    s.wait_for(60, "keep RUNNING", || {
        (s.status(&s.user, "keep") == "RUNNING").then_some(())
    });
    s.bai(
        &s.admin,
        &[
            "admin",
            "policy",
            "create",
            "small",
            "--max-concurrent",
            "2",
        ],
    )
    .expect_ok();
    let data = s.data_dir.path().to_path_buf();
    let backup = s.work.path().join("bai-backup.db");
    let (ok, text) = baid_db(&[
        "backup",
        backup.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
    ]);
    assert!(ok, "{text}");
    assert!(text.contains("sessions"), "{text}");
    // Not over a running server, and not over an existing database without --replace.
    let (ok, text) = baid_db(&[
        "restore",
        backup.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
        "--replace",
    ]);
    assert!(!ok && text.contains("a baid is running"), "{text}");
    // A second baid on the same data dir waits for the first to stop.
    let mut second = Command::new(bin("baid"))
        .arg("up")
        .env("BAI_DATA_DIR", &data)
        .env("BAI_LISTEN", format!("127.0.0.1:{}", free_port()))
        .env("BAI_NO_DOCKER", "true")
        .env("BAI_DUMMY_AGENTS", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(second.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("waiting for it to stop"), "{first}");
    assert!(
        second.try_wait().unwrap().is_none(),
        "it waits, it does not run"
    );
    let _ = second.kill();
    let _ = second.wait();
    let fresh = tempfile::Builder::new()
        .prefix("bai-e2e-")
        .tempdir()
        .unwrap();
    let (ok, text) = baid_db(&[
        "restore",
        backup.to_str().unwrap(),
        "--data-dir",
        fresh.path().to_str().unwrap(),
    ]);
    assert!(ok, "{text}");
    assert_eq!(tables(&backup), tables(&fresh.path().join("bai.db")));
    let (ok, text) = baid_db(&[
        "restore",
        backup.to_str().unwrap(),
        "--data-dir",
        fresh.path().to_str().unwrap(),
    ]);
    assert!(!ok && text.contains("--replace"), "{text}");
    let dumped = tables(&backup);
    let sessions = dumped.iter().find(|(t, _)| t == "sessions").unwrap();
    assert!(
        sessions.1.iter().any(|r| r.contains("keep")),
        "{sessions:?}"
    );
    assert!(
        dumped
            .iter()
            .any(|(t, rows)| t == "resource_policies" && rows.iter().any(|r| r.contains("small")))
    );
    // A server on the restored database has the sessions and the accounts (the same keys).
    for name in ["env-user.sh", "env-user2.sh", "env-admin.sh"] {
        std::fs::copy(data.join(name), fresh.path().join(name)).unwrap();
    }
    drop(s);
    let r = Server::start_in(
        fresh,
        &[
            ("BAI_NO_DOCKER", "true"),
            ("BAI_DUMMY_AGENTS", "1"),
            ("BAI_DUMMY_CAPACITY", "cpu=2,mem=4g"),
        ],
    );
    let ps = r.bai(&r.user, &["ps", "--all"]);
    ps.expect_ok();
    assert!(ps.stdout.contains("done"), "{ps:#?}");
}

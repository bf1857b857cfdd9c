//! A pool kernel's runner, run outside a container: it serves nothing but pings until a
//! `bind`, then runs again as the session's runner under the bound environment.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Command;

mod common;
use common::Runner;

/// Sends one request line; every reply line.
fn ask(socket: &Path, line: &str) -> Option<Vec<serde_json::Value>> {
    let mut s = UnixStream::connect(socket).ok()?;
    s.write_all(line.as_bytes()).ok()?;
    s.write_all(b"\n").ok()?;
    let lines = BufReader::new(s)
        .lines()
        .map_while(Result::ok)
        .map(|l| serde_json::from_str(&l).expect("a JSON line"))
        .collect();
    Some(lines)
}

/// Waits until a runner answers a ping on `socket` (polls, with a generous bound).
fn wait_pong(socket: &Path) {
    for _ in 0..6000 {
        if let Some(r) = ask(socket, r#"{"op":"ping"}"#)
            && r.first().and_then(|v| v["t"].as_str()) == Some("pong")
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("no runner answers on {}", socket.display());
}

fn finished(reply: &[serde_json::Value]) -> i64 {
    reply
        .iter()
        .find(|v| v["t"] == "finished")
        .and_then(|v| v["exit_code"].as_i64())
        .expect("a finished event")
}

fn stdout(reply: &[serde_json::Value]) -> String {
    reply
        .iter()
        .filter(|v| v["t"] == "stdout")
        .filter_map(|v| v["data"].as_str())
        .collect()
}

#[test]
fn a_pool_runner_waits_for_its_session_and_runs_under_its_environment() {
    let dir = std::env::temp_dir().join(format!("krunner-pool-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let socket = dir.join("krunner.sock");
    let child = Command::new(env!("CARGO_BIN_EXE_bai-krunner"))
        .env("BAI_POOL", "1")
        .env("BAI_KRUNNER_SOCKET", &socket)
        .env("BAI_KRUNNER_WORKDIR", &dir)
        .env("POOL_ONLY", "the pool's")
        .env_remove("BAI_KERNEL_ID")
        .spawn()
        .unwrap();
    let pid = child.id();
    let runner = Runner(child, dir.clone());
    wait_pong(&socket);

    // Nothing runs before the bind, and a bad bind changes nothing.
    let early = ask(&socket, r#"{"op":"exec","mode":"batch","exec":"echo hi"}"#).unwrap();
    assert_eq!(finished(&early), 1, "{early:?}");
    assert!(stdout(&early).is_empty(), "{early:?}");
    let bad = ask(&socket, r#"{"op":"bind","env":["=x"]}"#).unwrap();
    assert_eq!(finished(&bad), 2, "{bad:?}");
    wait_pong(&socket);

    let bind = r#"{"op":"bind","env":["FOO=bar baz","POOL_ONLY=the session's","BAI_SESSION_TYPE=interactive"]}"#;
    let bound = ask(&socket, bind).unwrap();
    assert_eq!(finished(&bound), 0, "{bound:?}");
    wait_pong(&socket);

    let out = ask(
        &socket,
        r#"{"op":"exec","mode":"batch","exec":"echo \"$FOO|$POOL_ONLY|${BAI_POOL-unset}|$PPID\""}"#,
    )
    .unwrap();
    assert_eq!(finished(&out), 0, "{out:?}");
    // The same process (its pid kept), now the session's runner, under the session's values.
    assert_eq!(stdout(&out), format!("bar baz|the session's|unset|{pid}\n"));
    let again = ask(&socket, bind).unwrap();
    assert_eq!(finished(&again), 1, "{again:?}");
    drop(runner);
}

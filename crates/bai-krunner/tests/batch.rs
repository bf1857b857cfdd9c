//! A batch session's runner, run outside a container: its startup command starts once the
//! agent has pinged it, and a preemption (`terminate`) that comes before that leaves the
//! command unstarted, the runner ending as by SIGTERM (143), so no command escapes the
//! signal by starting after it. `terminate` signals every process the runner sees but
//! itself and its ancestors (in a container, the kernel's): here the runner runs in a PID
//! namespace of its own (`unshare --pid --mount-proc`, as root), or it would signal the
//! whole machine.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::Runner;

/// Sends one request line, retrying the connection until the runner listens; every reply line.
fn ask(socket: &Path, line: &str) -> Vec<String> {
    for _ in 0..6000 {
        if let Ok(mut s) = UnixStream::connect(socket) {
            s.write_all(line.as_bytes()).unwrap();
            s.write_all(b"\n").unwrap();
            return BufReader::new(s).lines().map_while(Result::ok).collect();
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("no runner listens on {}", socket.display());
}

/// A batch runner in a directory of its own whose command leaves `started` in its home.
fn batch_runner(tag: &str) -> (Runner, PathBuf) {
    let dir = std::env::temp_dir().join(format!("krunner-batch-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let child = Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc", "--kill-child"])
        .arg(env!("CARGO_BIN_EXE_bai-krunner"))
        .env("BAI_KRUNNER_SOCKET", dir.join("krunner.sock"))
        .env("BAI_KRUNNER_WORKDIR", &dir)
        .env("BAI_SESSION_TYPE", "batch")
        .env("BAI_STARTUP_COMMAND", "touch started; exit 7")
        .env("BAI_PYTHON", "/nonexistent/python3")
        .env_remove("BAI_KERNEL_ID")
        .env_remove("BAI_POOL")
        .spawn()
        .unwrap();
    (Runner(child, dir.clone()), dir)
}

#[test]
fn a_batch_command_preempted_before_it_started_never_starts() {
    let (mut runner, dir) = batch_runner("early");
    let socket = dir.join("krunner.sock");
    let term = ask(&socket, r#"{"op":"terminate"}"#);
    assert!(term.iter().any(|l| l.contains("finished")), "{term:?}");
    // The agent's first ping: the command would start now.
    ask(&socket, r#"{"op":"ping"}"#);
    let status = runner.0.wait().unwrap();
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert!(
        !dir.join("started").exists(),
        "the command ran after its SIGTERM"
    );
}

#[test]
fn a_batch_command_runs_once_pinged_and_ends_the_runner_with_its_code() {
    let (mut runner, dir) = batch_runner("plain");
    let socket = dir.join("krunner.sock");
    ask(&socket, r#"{"op":"ping"}"#);
    let status = runner.0.wait().unwrap();
    assert_eq!(status.code(), Some(7), "{status:?}");
    assert!(dir.join("started").exists());
}

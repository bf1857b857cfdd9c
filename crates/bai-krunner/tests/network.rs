//! The runner over the network (`BAI_KRUNNER_LISTEN`), run outside a container: it serves a
//! connection that opens with the kernel's token as one on its socket, and nothing else.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};

const TOKEN: &str = "5f0c2a9e8d7b4c1a9e2f3b4c5d6e7f80a1b2c3d4e5f60718293a4b5c6d7e8f90";

mod common;
use common::Runner;

/// A fresh run directory, with the token file when `token` is given.
fn run_dir(name: &str, token: Option<&str>) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("krunner-net-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    if let Some(t) = token {
        std::fs::write(dir.join("krunner.token"), format!("{t}\n")).unwrap();
    }
    dir
}

/// A loopback address nobody listens on now.
fn free_addr() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

fn start(dir: &std::path::Path, addr: SocketAddr) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bai-krunner"));
    c.env("BAI_KRUNNER_SOCKET", dir.join("krunner.sock"))
        .env("BAI_KRUNNER_WORKDIR", dir)
        .env("BAI_KRUNNER_LISTEN", addr.to_string())
        .env("BAI_PYTHON", "/nonexistent/python3")
        .env_remove("BAI_KERNEL_ID")
        .env_remove("BAI_POOL")
        .stdin(Stdio::null());
    c
}

/// Opens a connection, says `first` (the token line, or anything) and `request`; every reply
/// line (none when the runner closed without answering).
fn ask(addr: SocketAddr, first: &str, request: &str) -> Option<Vec<serde_json::Value>> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.write_all(format!("{first}\n{request}\n").as_bytes())
        .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    Some(
        text.lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect(),
    )
}

#[test]
fn over_the_network_only_the_kernels_token_is_served() {
    let dir = run_dir("served", Some(TOKEN));
    let addr = free_addr();
    let child = start(&dir, addr).spawn().unwrap();
    let _runner = Runner(child, dir.clone());
    let mut ready = false;
    for _ in 0..6000 {
        if let Some(r) = ask(addr, TOKEN, r#"{"op":"ping"}"#)
            && r.first().and_then(|v| v["t"].as_str()) == Some("pong")
        {
            ready = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(ready, "no pong over the network");

    // A batch step runs, as on the socket.
    let r = ask(
        addr,
        TOKEN,
        r#"{"op":"exec","mode":"batch","exec":"echo over-the-network"}"#,
    )
    .unwrap();
    let out: String = r
        .iter()
        .filter(|v| v["t"] == "stdout")
        .filter_map(|v| v["data"].as_str())
        .collect();
    assert!(out.contains("over-the-network"), "{r:?}");
    assert_eq!(r.last().unwrap()["exit_code"], 0, "{r:?}");

    // Without the token (none, another, the request itself first): closed unanswered, and
    // nothing ran.
    let marker = dir.join("marker");
    let touch = format!(
        r#"{{"op":"exec","mode":"batch","exec":"touch {}"}}"#,
        marker.display()
    );
    let other = TOKEN.replace('5', "6");
    for first in ["", other.as_str(), touch.as_str(), r#"{"op":"ping"}"#] {
        let r = ask(addr, first, &touch).unwrap_or_default();
        assert!(
            r.is_empty(),
            "answered without the token ({first:?}): {r:?}"
        );
    }
    assert!(!marker.exists(), "a request without the token ran");

    // The socket still serves as before, without a token.
    let mut s = std::os::unix::net::UnixStream::connect(dir.join("krunner.sock")).unwrap();
    s.write_all(b"{\"op\":\"ping\"}\n").unwrap();
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), r#"{"t":"pong"}"#);
}

#[test]
fn without_a_token_the_runner_does_not_start() {
    let dir = run_dir("untokened", None);
    let out = start(&dir, free_addr())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(70), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no token for the network listener"), "{err}");
}

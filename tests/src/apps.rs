//! Helpers for app tests: `bai app … -b` forwarders, ssh options, and a Jupyter kernel run
//! over its WebSocket.

use crate::{Account, Server, free_port};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A background `bai app …` / `backend.ai app …`, killed on drop; what it printed is kept
/// for a failure's message ([`Forward::log`]).
pub struct Forward {
    child: Child,
    log: tempfile::NamedTempFile,
}

impl Forward {
    /// What the forwarder printed so far (why a tunnel it was asked for did not open).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }
}

impl Drop for Forward {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `PROGRAM app SESSION APP -b PORT` on a free port and waits until it listens; the
/// forwarder ends when the returned guard is dropped.
pub fn forward(
    s: &Server,
    program: &Path,
    acct: &Account,
    session: &str,
    app: &str,
) -> (Forward, u16) {
    let port = free_port();
    let log = tempfile::NamedTempFile::new().expect("the forwarder's log");
    // Both streams append, so neither writes over the other.
    let append = || {
        std::fs::OpenOptions::new()
            .append(true)
            .open(log.path())
            .expect("the forwarder's log")
    };
    let (out, err) = (append(), append());
    let mut cmd = Command::new(program);
    cmd.args(["app", session, app, "-b", &port.to_string()])
        .current_dir(s.work.path())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    for (k, v) in &acct.vars {
        cmd.env(k, v);
    }
    let f = Forward {
        child: cmd.spawn().expect("spawn the app forwarder"),
        log,
    };
    s.wait_for(30, "the local app port", || {
        TcpStream::connect(("127.0.0.1", port)).ok().map(|_| ())
    });
    (f, port)
}

/// Downloads session `session`'s key `id_container` into the work directory, readable by
/// its owner alone as ssh wants it; its path.
pub fn session_key(s: &Server, acct: &Account, session: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    s.bai(acct, &["download", session, "id_container"])
        .expect_ok();
    let key = s.work.path().join("id_container");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    key
}

/// The options ssh, scp and sftp share: no host-key prompts or files, no password
/// prompts, the key `key`, and the port (`-p` for ssh, `-P` for scp and sftp).
pub fn ssh_opts(key: &Path, port_flag: &str, port: u16) -> Vec<String> {
    [
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
        "-o",
        "LogLevel=ERROR",
        "-o",
        "BatchMode=yes",
        "-i",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([key.display().to_string()])
    .chain([port_flag.to_string(), port.to_string()])
    .collect()
}

/// `scp -q FROM TO` with [`ssh_opts`] on `port`; panics unless it succeeds.
pub fn scp(key: &Path, port: u16, from: &str, to: &str) {
    let out = Command::new("scp")
        .arg("-q")
        .args(ssh_opts(key, "-P", port))
        .args([from, to])
        .output()
        .expect("scp");
    assert!(out.status.success(), "scp {from} {to}: {out:?}");
}

/// An HTTP/1.0 GET of `path` from a forwarder on local `port`, repeated (for up to `secs`)
/// until the answer is a 200: the whole answer, headers included.
pub fn http_get_ok(s: &Server, port: u16, path: &str, secs: u64) -> String {
    s.wait_for(secs, "a 200 through the tunnel", || {
        let mut c = TcpStream::connect(("127.0.0.1", port)).ok()?;
        c.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .ok()?;
        c.write_all(format!("GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").as_bytes())
            .ok()?;
        let mut out = String::new();
        c.read_to_string(&mut out).ok()?;
        out.contains("200").then_some(out)
    })
}

/// A Jupyter kernel's channels socket.
pub type KernelSocket = tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>;

/// Sends `code` as an execute request on a kernel's channels socket and gathers what it
/// prints until the output holds `expect` (an error or the socket closing first fails the
/// test).
pub fn jupyter_execute(ws: &mut KernelSocket, code: &str, expect: &str) -> String {
    let msg = serde_json::json!({
        "header": {"msg_id": "m1", "username": "t", "session": "s1", "msg_type": "execute_request", "version": "5.3", "date": ""},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": code, "silent": false, "store_history": false,
                    "user_expressions": {}, "allow_stdin": false, "stop_on_error": true},
    });
    ws.send(tungstenite::Message::Text(msg.to_string().into()))
        .expect("execute_request");
    let mut out = String::new();
    while !out.contains(expect) {
        match ws.read() {
            Ok(tungstenite::Message::Text(t)) => {
                let v: serde_json::Value = serde_json::from_str(t.as_str()).unwrap_or_default();
                if v["msg_type"] == "stream" {
                    out.push_str(v["content"]["text"].as_str().unwrap_or_default());
                }
                if v["msg_type"] == "error" {
                    panic!(
                        "the kernel failed: {}: {}; saw {out:?}",
                        v["content"]["ename"], v["content"]["evalue"]
                    );
                }
            }
            Ok(_) => {}
            Err(e) => panic!("the kernel's socket closed before {expect:?}: {e}; saw {out:?}"),
        }
    }
    out
}

/// Runs `print(6 * 7)` in a new kernel of the Jupyter server at `base` (`http://…/`).
pub fn jupyter_runs_code(base: &str) -> String {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let kernel: serde_json::Value = rt.block_on(async {
        let c = reqwest::Client::new();
        let r = c
            .post(format!("{base}api/kernels"))
            .json(&serde_json::json!({}))
            .send()
            .await
            .expect("POST api/kernels");
        assert!(r.status().is_success(), "{}", r.status());
        r.json().await.expect("kernel JSON")
    });
    let id = kernel["id"].as_str().expect("kernel id");
    let ws_url = format!(
        "{}api/kernels/{id}/channels",
        base.replacen("http://", "ws://", 1)
    );
    let (mut ws, _) = tungstenite::connect(ws_url.as_str()).expect("kernel channels");
    // The kernel answers on this socket; reading ends when it closes or says 42.
    jupyter_execute(&mut ws, "print(6 * 7)", "42")
}

/// Opens `session`'s Jupyter through `bai app` as `acct`, waits until it answers, and runs
/// `print(6 * 7)` in a new kernel there: what the kernel printed.
pub fn jupyter_through_app(s: &Server, acct: &Account, session: &str) -> String {
    let sid = s.info(acct, session)["id"]
        .as_str()
        .expect("session id")
        .to_string();
    let (_forward, port) = forward(s, &crate::bin("bai"), acct, session, "jupyter");
    let base = format!("http://127.0.0.1:{port}/app/{sid}/jupyter/");
    s.wait_for(120, "Jupyter to answer", || {
        let rt = tokio::runtime::Runtime::new().ok()?;
        rt.block_on(async { reqwest::get(format!("{base}api/status")).await.ok() })
            .filter(|r| r.status().is_success())
            .map(|_| ())
    });
    jupyter_runs_code(&base)
}

//! Apps end to end, against `baid up` and the real Docker engine: the seed's SSH recipe with
//! `bai` and with the unmodified official client (download `id_container`, tunnel sshd through
//! the manager, `ssh`, `scp` of 100 MB, `sftp`), preopen ports, who may open a tunnel, and
//! tunnels closing when their session ends, and the raw tunnel of `bai app` next to the
//! WebSocket one.
//!
//! One test binary; the tests are grouped by what they cover: `ssh` (the seed's SSH recipe,
//! own keys), `proxy` (web apps through the HTTP proxy) and `tunnels` (preopen ports, permits,
//! tunnels closing with their session, raw and WebSocket tunnels). The helpers they share are
//! here.

#[path = "apps/proxy.rs"]
mod proxy;
#[path = "apps/ssh.rs"]
mod ssh;
#[path = "apps/tunnels.rs"]
mod tunnels;

use bai_e2e::{Account, Server};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn official() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv-official/bin/backend.ai")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// A background `bai app …` / `backend.ai app …`, killed on drop.
struct Forward(Child);

impl Drop for Forward {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `PROGRAM app SESSION APP -b PORT` on a free port and waits until it listens; the
/// forwarder ends when the returned guard is dropped.
fn forward(s: &Server, program: &Path, acct: &Account, session: &str, app: &str) -> (Forward, u16) {
    let port = free_port();
    let mut cmd = Command::new(program);
    cmd.args(["app", session, app, "-b", &port.to_string()])
        .current_dir(s.work.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (k, v) in &acct.vars {
        cmd.env(k, v);
    }
    let child = cmd.spawn().expect("spawn the app forwarder");
    let f = Forward(child);
    s.wait_for(30, "the local app port", || {
        TcpStream::connect(("127.0.0.1", port)).ok().map(|_| ())
    });
    (f, port)
}

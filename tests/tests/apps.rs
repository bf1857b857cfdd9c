//! Apps end to end, against `baid up` and the real Docker engine: the seed's SSH recipe with
//! `bai` and with the unmodified official client (download `id_container`, tunnel sshd through
//! the manager, `ssh`, `scp` of 100 MB, `sftp`), preopen ports, who may open a tunnel, and
//! tunnels closing when their session ends, and the raw tunnel of `bai app` next to the
//! WebSocket one.

use bai_e2e::{Account, Server, bin, sha256};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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

/// The options ssh, scp and sftp share: no host-key prompts or files, no password
/// prompts, the key `key`, and the port (`-p` for ssh, `-P` for scp and sftp).
fn ssh_opts(key: &Path, port_flag: &str, port: u16) -> Vec<String> {
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

fn ssh_args(key: &Path, port: u16) -> Vec<String> {
    ssh_opts(key, "-p", port)
}

fn ssh(key: &Path, port: u16, command: &str) -> std::process::Output {
    Command::new("ssh")
        .args(ssh_args(key, port))
        .arg("work@localhost")
        .arg(command)
        .stdin(Stdio::null())
        .output()
        .expect("run ssh")
}

fn chmod600(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o600)).expect("chmod");
}

#[test]
fn the_seed_ssh_recipe_works_with_bai_and_the_official_client() {
    let s = Server::start();
    let user = &s.user;
    let w = s.work.path().to_path_buf();
    s.bai(user, &["start", "-t", "mysess", "python"])
        .expect_ok();
    let apps = s.bai(user, &["apps", "mysess"]);
    apps.expect_ok();
    assert!(
        apps.stdout.contains("sshd") && apps.stdout.contains("2200"),
        "{apps:#?}"
    );
    s.bai(user, &["download", "mysess", "id_container"])
        .expect_ok();
    let key = w.join("id_container");
    assert!(
        std::fs::read_to_string(&key)
            .unwrap_or_default()
            .contains("PRIVATE KEY"),
        "id_container is a private key"
    );
    chmod600(&key);
    let (fwd, port) = forward(&s, &bin("bai"), user, "mysess", "sshd");
    let out = ssh(&key, port, "echo hi from $(whoami) in $(hostname)");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "hi from work in main1"
    );
    // scp 100 MB in and back out, intact.
    let big = w.join("big.bin");
    let st = Command::new("dd")
        .args([
            "if=/dev/urandom",
            &format!("of={}", big.display()),
            "bs=1M",
            "count=100",
            "status=none",
        ])
        .status()
        .expect("dd");
    assert!(st.success());
    let sum = sha256(&big);
    let scp = |from: &str, to: &str| {
        let out = Command::new("scp")
            .arg("-q")
            .args(ssh_opts(&key, "-P", port))
            .args([from, to])
            .output()
            .expect("scp");
        assert!(out.status.success(), "scp {from} {to}: {out:?}");
    };
    scp(
        &big.display().to_string(),
        "work@localhost:/home/work/big.bin",
    );
    let out = ssh(&key, port, "sha256sum /home/work/big.bin");
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with(&sum),
        "{out:?}"
    );
    let back = w.join("back.bin");
    scp(
        "work@localhost:/home/work/big.bin",
        &back.display().to_string(),
    );
    assert_eq!(sha256(&back), sum);
    // sftp lists the container's home.
    let mut sftp = Command::new("sftp")
        .args(ssh_opts(&key, "-P", port))
        .args(["-b", "-", "work@localhost"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("sftp");
    sftp.stdin
        .take()
        .expect("stdin")
        .write_all(b"ls /home/work\n")
        .expect("sftp commands");
    let out = sftp.wait_with_output().expect("sftp output");
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("big.bin"),
        "{out:?}"
    );
    // The tunnels' bytes are recorded for the idle checker.
    let info = s.info(user, "mysess");
    assert!(
        info["network"]["rx_bytes"].as_u64().unwrap_or(0) > 100 << 20,
        "{}",
        info["network"]
    );
    assert!(info["network"]["last_activity"].is_string());
    drop(fwd);

    // The same recipe with the official client.
    let dl = s.work.path().join("official");
    std::fs::create_dir_all(&dl).unwrap();
    let r = s.run_as(
        official(),
        user,
        &[
            "session",
            "download",
            "mysess",
            "id_container",
            "--dest",
            &dl.display().to_string(),
        ],
    );
    r.expect_ok();
    let key2 = dl.join("id_container");
    assert_eq!(
        std::fs::read(&key2).expect("official download"),
        std::fs::read(&key).expect("our download")
    );
    chmod600(&key2);
    let (_fwd2, port2) = forward(&s, &official(), user, "mysess", "sshd");
    let out = ssh(&key2, port2, "echo official $(id -u)");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "official 1000");
}

#[test]
fn preopen_ports_permits_and_tunnels_closing_with_their_session() {
    let s = Server::start();
    let (user, admin) = (&s.user, &s.admin);
    // Validation happens on the server too.
    s.bai(
        user,
        &["start", "-t", "badport", "--preopen", "80", "python"],
    )
    .expect_fail("1024 to 65535");
    s.bai(
        user,
        &["start", "-t", "badport", "--preopen", "2200", "python"],
    )
    .expect_fail("built-in app");
    s.bai(
        user,
        &["start", "-t", "web1", "--preopen", "8080, 9090", "python"],
    )
    .expect_ok();
    let apps = s.bai(user, &["apps", "web1"]);
    assert!(
        apps.stdout.contains("8080") && apps.stdout.contains("preopen"),
        "{apps:#?}"
    );
    // A process in the session serves on the preopen port; the tunnel reaches it.
    let code = "import subprocess, pathlib\n\
                pathlib.Path('/home/work/hello.txt').write_text('served from the session')\n\
                subprocess.Popen(['python3', '-m', 'http.server', '8080'], cwd='/home/work',\n\
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)\n\
                print('started')";
    let r = s.bai(user, &["run", "-t", "web1", "-c", code, "python"]);
    r.expect_ok();
    let (_fwd, port) = forward(&s, &bin("bai"), user, "web1", "8080");
    let body = s.wait_for(30, "the preopen port to serve", || {
        let mut c = TcpStream::connect(("127.0.0.1", port)).ok()?;
        c.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        c.write_all(b"GET /hello.txt HTTP/1.0\r\nHost: x\r\n\r\n")
            .ok()?;
        let mut out = String::new();
        c.read_to_string(&mut out).ok()?;
        out.contains("200").then_some(out)
    });
    assert!(body.contains("served from the session"), "{body}");

    // Another user is told the session does not exist: no app list, no tunnel, no files.
    s.bai(admin, &["start", "-t", "adminsess", "python"])
        .expect_ok();
    s.bai(user, &["apps", "adminsess"])
        .expect_fail("is visible to you");
    s.bai(user, &["download", "adminsess", "id_container"])
        .expect_fail("is visible to you");
    let port3 = free_port();
    s.bai(
        user,
        &["app", "adminsess", "sshd", "-b", &port3.to_string()],
    )
    .expect_fail("is visible to you");

    // An open SSH connection ends when its session is terminated.
    s.bai(user, &["download", "web1", "id_container"])
        .expect_ok();
    let key = s.work.path().join("id_container");
    chmod600(&key);
    let (_fwd4, port4) = forward(&s, &bin("bai"), user, "web1", "sshd");
    let mut long = Command::new("ssh")
        .args(ssh_args(&key, port4))
        .args(["work@localhost", "echo connected; sleep 600"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("ssh");
    let mut first = [0u8; 10];
    long.stdout
        .as_mut()
        .expect("stdout")
        .read_exact(&mut first)
        .expect("ssh connected");
    assert_eq!(&first, b"connected\n");
    s.bai(user, &["rm", "web1"]).expect_ok();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(st) = long.try_wait().expect("ssh status") {
            break Some(st);
        }
        if Instant::now() > deadline {
            let _ = long.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        status.is_some(),
        "the ssh session outlived its compute session"
    );
}

/// A plain HTTP/1.1 request over TCP (no redirects followed, no cookie jar): status, the
/// headers (lower-cased names) and the body.
fn http(
    url: &str,
    method: &str,
    cookie: Option<&str>,
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    let rest = url.strip_prefix("http://").expect("http URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let mut c = TcpStream::connect(authority).expect("connect to the proxy");
    c.set_read_timeout(Some(Duration::from_secs(60))).ok();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(ck) = cookie {
        req.push_str(&format!("Cookie: {ck}\r\n"));
    }
    if !body.is_empty() {
        req.push_str("Content-Type: application/json\r\n");
    }
    req.push_str("\r\n");
    req.push_str(body);
    c.write_all(req.as_bytes()).expect("send");
    let mut raw = Vec::new();
    let _ = c.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    // Chunked bodies are left as they are; the tests look for substrings.
    (status, headers, body.to_string())
}

fn header<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
    h.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// Opens `app` through start-service; returns (url with permit, base URL of the app, cookie).
fn open_app(s: &Server, acct: &Account, session: &str, args: &[&str]) -> (String, String, String) {
    let mut all = vec!["open", session];
    all.extend_from_slice(args);
    let r = s.bai(acct, &all);
    r.expect_ok();
    let url = r.stdout.trim().to_string();
    let base = url.split('?').next().unwrap_or_default().to_string();
    let (status, headers, _) = http(&url, "GET", None, "");
    assert_eq!(status, 302, "the permit is swapped for a cookie: {url}");
    assert_eq!(
        header(&headers, "location"),
        Some(
            base.strip_prefix("http://")
                .and_then(|r| r.find('/').map(|i| &r[i..]))
                .unwrap_or_default()
        )
    );
    let set = header(&headers, "set-cookie")
        .expect("Set-Cookie")
        .to_string();
    assert!(set.contains("HttpOnly"), "{set}");
    let cookie = set.split(';').next().unwrap_or_default().to_string();
    (url, base, cookie)
}

fn ws_connect(
    url: &str,
    cookie: Option<&str>,
) -> tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>> {
    use tungstenite::client::IntoClientRequest;
    let mut req = url
        .replace("http://", "ws://")
        .into_client_request()
        .expect("ws request");
    if let Some(c) = cookie {
        req.headers_mut()
            .insert("Cookie", c.parse().expect("cookie header"));
    }
    tungstenite::connect(req)
        .expect("websocket through the proxy")
        .0
}

/// Writes three scalar events under /home/work/logs/run1 with TensorBoard's own writer (in
/// the image's TensorBoard environment).
const TENSORBOARD_LOGGER: &str = r#"
import subprocess
code = '''
import time
from tensorboard.summary.writer.event_file_writer import EventFileWriter
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import Summary
w = EventFileWriter("/home/work/logs/run1")
for step in range(3):
    v = Summary.Value(tag="loss", simple_value=1.0 / (step + 1))
    w.add_event(Event(wall_time=time.time(), step=step, summary=Summary(value=[v])))
w.close()
'''
subprocess.run(["/opt/tensorboard/bin/python", "-c", code], check=True)
print("logged")
"#;

#[test]
fn web_terminal_and_jupyter_through_the_http_proxy() {
    let s = Server::start();
    let (user, admin) = (&s.user, &s.admin);
    s.bai(user, &["start", "-t", "nbsess", "python"])
        .expect_ok();
    let apps = s.bai(user, &["apps", "nbsess"]);
    for name in ["ttyd", "jupyter", "jupyterlab", "tensorboard"] {
        assert!(apps.stdout.contains(name), "{name} in {apps:#?}");
    }
    // The web terminal, path mode: the page, then a WebSocket running tmux.
    let (_, term, cookie) = open_app(&s, user, "nbsess", &["ttyd", "--path"]);
    assert!(
        term.starts_with(&s.endpoint),
        "path mode is served on the API's address: {term}"
    );
    let (status, _, page) = http(&term, "GET", Some(&cookie), "");
    assert_eq!(status, 200);
    assert!(page.contains("xterm.js"), "{page}");
    let (status, _, _) = http(&term, "GET", None, "");
    assert_eq!(status, 403, "no permit, no app");
    let mut ws = ws_connect(&format!("{term}ws"), Some(&cookie));
    ws.send(tungstenite::Message::Binary(
        b"echo hi-$((6*7)); touch /home/work/made-in-terminal.txt\r"
            .to_vec()
            .into(),
    ))
    .expect("type into the terminal");
    let mut seen = String::new();
    while !seen.contains("hi-42") {
        match ws.read() {
            Ok(tungstenite::Message::Binary(b)) => seen.push_str(&String::from_utf8_lossy(&b)),
            Ok(_) => {}
            Err(e) => panic!("terminal closed before the echo: {e}; saw {seen:?}"),
        }
    }
    drop(ws);

    // Jupyter, port mode on a preferred port: the file made in the terminal is there (same
    // container), and a kernel runs code over its WebSocket.
    // (baid's default app port pool is 30000-30199; a preferred port must be in it.)
    let preferred = (30100..30200)
        .rev()
        .find(|p| std::net::TcpListener::bind(("0.0.0.0", *p)).is_ok())
        .expect("a free port in the app pool");
    let (_, nb, cookie) = open_app(
        &s,
        user,
        "nbsess",
        &["jupyter", "--port", &preferred.to_string()],
    );
    assert!(
        nb.contains(&format!(":{preferred}/")),
        "the preferred port is used: {nb}"
    );
    let (status, _, listing) = s.wait_for(60, "the file to show in Jupyter", || {
        let r = http(&format!("{nb}api/contents"), "GET", Some(&cookie), "");
        r.2.contains("made-in-terminal.txt").then_some(r)
    });
    assert_eq!(status, 200, "{listing}");
    let (status, _, kernel) = http(&format!("{nb}api/kernels"), "POST", Some(&cookie), "{}");
    assert!(status == 201 || status == 200, "{status} {kernel}");
    let start = kernel.find("\"id\"").expect("kernel id");
    let id: String = kernel[start + 4..]
        .chars()
        .skip_while(|c| *c != '"')
        .skip(1)
        .take_while(|c| *c != '"')
        .collect();
    let mut ws = ws_connect(&format!("{nb}api/kernels/{id}/channels"), Some(&cookie));
    let msg = serde_json::json!({
        "header": {"msg_id": "m1", "username": "t", "session": "s1", "msg_type": "execute_request", "version": "5.3", "date": ""},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": "print(6 * 7)", "silent": false, "store_history": false,
                    "user_expressions": {}, "allow_stdin": false, "stop_on_error": true},
    });
    ws.send(tungstenite::Message::Text(msg.to_string().into()))
        .expect("execute_request");
    let mut out = String::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !out.contains("42") && Instant::now() < deadline {
        if let Ok(tungstenite::Message::Text(t)) = ws.read() {
            let v: serde_json::Value = serde_json::from_str(t.as_str()).unwrap_or_default();
            if v["msg_type"] == "stream" {
                out.push_str(v["content"]["text"].as_str().unwrap_or_default());
            }
        }
    }
    assert_eq!(out.trim(), "42");
    drop(ws);

    // TensorBoard, path mode: its page, and the runs a program logs under /home/work/logs.
    s.bai(
        user,
        &["run", "-t", "nbsess", "-c", TENSORBOARD_LOGGER, "python"],
    )
    .expect_ok();
    let (_, tb, tb_cookie) = open_app(&s, user, "nbsess", &["tensorboard", "--path"]);
    let (status, _, page) = http(&tb, "GET", Some(&tb_cookie), "");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("TensorBoard"), "{page}");
    s.wait_for(60, "TensorBoard to list the logged run", || {
        let (status, _, runs) = http(&format!("{tb}data/runs"), "GET", Some(&tb_cookie), "");
        (status == 200 && runs.contains("run1")).then_some(())
    });

    // Another user's permit does not open this app; a public app needs none.
    s.bai(admin, &["start", "-t", "adminnb", "python"])
        .expect_ok();
    let (_, _, admin_cookie) = open_app(&s, admin, "adminnb", &["ttyd", "--path"]);
    let token = admin_cookie
        .split_once('=')
        .map(|(_, v)| v)
        .unwrap_or_default();
    let name = cookie.split_once('=').map(|(k, _)| k).unwrap_or_default();
    let (status, _, _) = http(
        &format!("{nb}api/contents"),
        "GET",
        Some(&format!("{name}={token}")),
        "",
    );
    assert_eq!(status, 403, "someone else's permit is refused");
    let r = s.bai(user, &["open", "nbsess", "ttyd", "--path", "--public"]);
    r.expect_ok();
    let public = r
        .stdout
        .trim()
        .split('?')
        .next()
        .unwrap_or_default()
        .to_string();
    let (status, _, page) = http(&public, "GET", None, "");
    assert_eq!(status, 200, "a public app opens without a permit");
    assert!(page.contains("xterm.js"));

    // Stopping the session closes its proxies.
    s.bai(user, &["rm", "nbsess"]).expect_ok();
    s.wait_for(30, "the proxies to close", || {
        let (status, _, _) = http(&public, "GET", None, "");
        (status == 404).then_some(())
    });
    assert!(
        TcpStream::connect(("127.0.0.1", preferred)).is_err(),
        "the port-mode listener is closed"
    );
}

#[test]
fn own_keys_from_the_ssh_folder_and_the_http_tunnel() {
    let s = Server::start();
    let user = &s.user;
    let w = s.work.path().to_path_buf();
    // The user's own key pair, its public half in the `.ssh` folder.
    let mine = w.join("mykey");
    let st = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&mine)
        .status()
        .expect("ssh-keygen");
    assert!(st.success());
    std::fs::copy(w.join("mykey.pub"), w.join("authorized_keys")).expect("copy");
    s.bai(user, &["vfolder", "create", ".ssh"]).expect_ok();
    s.bai(user, &["vfolder", "upload", ".ssh", "authorized_keys"])
        .expect_ok();
    s.bai(user, &["start", "-t", "keysess", "python"])
        .expect_ok();
    s.bai(user, &["download", "keysess", "id_container"])
        .expect_ok();
    chmod600(&w.join("id_container"));
    let (_fwd, port) = forward(&s, &bin("bai"), user, "keysess", "sshd");
    let out = ssh(&mine, port, "echo own key");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "own key");
    // The folder's authorized_keys decides: the generated key is not let in.
    let out = ssh(&w.join("id_container"), port, "echo generated key");
    assert!(!out.status.success(), "{out:?}");

    // `httpproxy` tunnels web apps only: the terminal page comes through it; sshd does not.
    let client = s.client(user);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let page = rt.block_on(async {
        let e = client.open_http_tunnel("keysess", "sshd").await;
        assert!(e.is_err(), "sshd is not a web app");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let tunnel = client
            .open_http_tunnel("keysess", "ttyd")
            .await
            .expect("tunnel");
        tokio::spawn(async move {
            if let Ok((conn, _)) = listener.accept().await {
                let _ = tunnel.pump(conn).await;
            }
        });
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut c = tokio::net::TcpStream::connect(addr).await.expect("connect");
        c.write_all(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
            .await
            .expect("send");
        let mut out = String::new();
        let _ = c.read_to_string(&mut out).await;
        out
    });
    assert!(
        page.starts_with("HTTP/1.1 200") && page.contains("xterm.js"),
        "{page}"
    );
}

/// A deterministic, incompressible-looking payload.
fn payload(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Sends `data` (after its length) through the local port, half-closes when asked, and reads
/// the answer to the end.
fn exchange(port: u16, data: &[u8], half_close: bool) -> Vec<u8> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect to the local port");
    c.set_read_timeout(Some(Duration::from_secs(120)))
        .expect("timeout");
    let mut w = c.try_clone().expect("clone");
    let mut msg = (data.len() as u64).to_be_bytes().to_vec();
    msg.extend_from_slice(data);
    // A tunnel that could not reach the app is closed at once: the caller sees no answer.
    let writer = std::thread::spawn(move || {
        let _ = w.write_all(&msg);
        if half_close {
            let _ = w.shutdown(std::net::Shutdown::Write);
        }
    });
    let mut back = Vec::new();
    let _ = c.read_to_end(&mut back);
    let _ = writer.join();
    back
}

#[test]
fn raw_and_websocket_tunnels_carry_large_payloads_both_ways() {
    let s = Server::start();
    let user = &s.user;
    s.bai(
        user,
        &["start", "-t", "echo", "--preopen", "9000", "python"],
    )
    .expect_ok();
    // A server in the session that reads a length and that many bytes, then sends them back
    // reversed and closes.
    let code = r#"import subprocess, textwrap
src = textwrap.dedent("""
    import socket, threading
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('0.0.0.0', 9000)); s.listen(8)
    def serve(c):
        data = bytearray()
        while len(data) < 8 or len(data) < 8 + int.from_bytes(data[:8], 'big'):
            b = c.recv(1 << 20)
            if not b:
                break
            data += b
        c.sendall(bytes(data[8:][::-1]))
        c.close()
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
""")
subprocess.Popen(['python3', '-c', src], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print('started')
"#;
    s.bai(user, &["run", "-t", "echo", "-c", code, "python"])
        .expect_ok();
    let data = payload(48 << 20);
    let reversed: Vec<u8> = data.iter().rev().copied().collect();

    // `bai app` negotiates the raw tunnel; the manager says so in its log.
    let (fwd, port) = forward(&s, &bin("bai"), user, "echo", "9000");
    let back = s.wait_for(30, "the echo server", || {
        let b = exchange(port, b"ping", true);
        (b == b"gnip").then_some(b)
    });
    assert_eq!(back, b"gnip");
    // Half-closed: the answer still comes back.
    let back = exchange(port, &data, true);
    assert!(
        back.len() == reversed.len() && back == reversed,
        "raw tunnel: {} bytes came back of {}",
        back.len(),
        reversed.len()
    );
    drop(fwd);
    let opened = |mode: &str| {
        s.log()
            .lines()
            .filter(|l| l.contains("tcp tunnel opened") && l.contains(&format!("\"{mode}\"")))
            .count()
    };
    s.wait_for(10, "raw tunnels in the log", || {
        (opened("raw") >= 2).then_some(())
    });
    assert_eq!(opened("websocket"), 0, "bai app fell back to the WebSocket");

    // The WebSocket of the wire contract carries the same bytes (what the official client uses).
    let client = s.client(user);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    for raw in [true, false] {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let tunnel = rt
            .block_on(async {
                if raw {
                    client.open_tunnel("echo", "9000").await
                } else {
                    client.open_ws_tunnel("echo", "9000").await
                }
            })
            .expect("tunnel");
        assert_eq!(tunnel.is_raw(), raw);
        listener.set_nonblocking(true).expect("nonblocking");
        let listener = {
            let _guard = rt.enter();
            tokio::net::TcpListener::from_std(listener).expect("listener")
        };
        let pump = rt.spawn(async move {
            if let Ok((conn, _)) = listener.accept().await {
                let _ = tunnel.pump(conn).await;
            }
        });
        // (A WebSocket cannot be half-closed: the client's Close frame ends it.)
        let back = exchange(port, &data, raw);
        assert!(
            back.len() == reversed.len() && back == reversed,
            "tunnel (raw: {raw}): {} bytes came back of {}",
            back.len(),
            reversed.len()
        );
        rt.block_on(pump).expect("pump");
    }
    s.wait_for(10, "the WebSocket tunnel in the log", || {
        (opened("websocket") == 1).then_some(())
    });
    // Both kinds are counted for the idle checker.
    let info = s.info(user, "echo");
    assert!(
        info["network"]["rx_bytes"].as_u64().unwrap_or(0) >= 3 * (48 << 20),
        "{}",
        info["network"]
    );
    assert!(
        info["network"]["tx_bytes"].as_u64().unwrap_or(0) >= 3 * (48 << 20),
        "{}",
        info["network"]
    );
}

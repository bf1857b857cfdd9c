//! Tunnels: preopen ports, who may open a tunnel, tunnels closing when their session ends,
//! the URL `bai app` prints, and large payloads both ways through the raw and the WebSocket
//! tunnel.

use super::forward;
use super::ssh::{chmod600, ssh_args};
use bai_e2e::free_port;
use bai_e2e::{Server, bin};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

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
    let body = bai_e2e::apps::http_get_ok(&s, port, "/hello.txt", 30);
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
    let status = bai_e2e::poll(Duration::from_secs(60), Duration::from_millis(200), || {
        long.try_wait().expect("ssh status")
    });
    if status.is_none() {
        let _ = long.kill();
    }
    assert!(
        status.is_some(),
        "the ssh session outlived its compute session"
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

/// `bai app SESSION APP` prints where to open the app: a web app's http URL with the path it
/// is served under (Jupyter answers nowhere else), a TCP app's address; the URL printed for
/// Jupyter answers.
#[test]
fn bai_app_prints_the_url_the_app_answers_at() {
    let s = Server::start();
    let user = &s.user;
    s.bai(user, &["start", "-t", "urls", "python"]).expect_ok();
    let id = s.info(user, "urls")["id"]
        .as_str()
        .expect("the session's id")
        .to_string();
    let printed = |app: &str| {
        let port = free_port();
        let mut cmd = s.bai_command(user, &["app", "urls", app, "-b", &port.to_string()]);
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("bai app");
        // The pipe stays open while the forwarder runs (it prints again after this line).
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        out.read_line(&mut line).expect("the first line");
        let url = line
            .trim()
            .rsplit_once("is available at: ")
            .map(|(_, u)| u.to_string())
            .unwrap_or_else(|| panic!("no URL in {line:?}"));
        (child, out, port, url)
    };
    let (mut ssh, _out, port, url) = printed("sshd");
    assert_eq!(url, format!("tcp://127.0.0.1:{port}"));
    let _ = ssh.kill();
    let _ = ssh.wait();
    let (mut jupyter, _out, port, url) = printed("jupyter");
    let path = format!("/app/{id}/jupyter/");
    assert_eq!(url, format!("http://127.0.0.1:{port}{path}"));
    // Jupyter starts on the first connection; its page answers at that path.
    let head = s.wait_for(180, "Jupyter at the printed URL", || {
        let mut c = TcpStream::connect(("127.0.0.1", port)).ok()?;
        c.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
        c.write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())
            .ok()?;
        let mut out = String::new();
        c.read_to_string(&mut out).ok()?;
        let status = out.lines().next()?.to_string();
        (status.contains(" 200") || status.contains(" 302")).then_some(status)
    });
    assert!(head.starts_with("HTTP/1."), "{head}");
    let _ = jupyter.kill();
    let _ = jupyter.wait();
    s.bai(user, &["rm", "urls"]).expect_ok();
}

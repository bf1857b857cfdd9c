//! Web apps through the HTTP proxy: the web terminal, Jupyter and TensorBoard, with permits
//! and cookies.

use bai_e2e::{Account, Server};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A plain HTTP/1.1 request over TCP (no redirects followed, no cookie jar): status, the
/// headers (lower-cased names) and the body.
pub(super) fn http(
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
pub(super) fn open_app(
    s: &Server,
    acct: &Account,
    session: &str,
    args: &[&str],
) -> (String, String, String) {
    let mut all = vec!["open", session];
    all.extend_from_slice(args);
    let r = s.bai(acct, &all);
    r.expect_ok();
    let url = r.stdout.trim().to_string();
    let (base, cookie) = permit_cookie(&url);
    (url, base, cookie)
}

/// Swaps the permit of an app's `url` for the proxy's cookie; returns (base URL, cookie).
pub(super) fn permit_cookie(url: &str) -> (String, String) {
    let base = url.split('?').next().unwrap_or_default().to_string();
    let (status, headers, _) = http(url, "GET", None, "");
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
    (base, cookie)
}

pub(super) fn ws_connect(
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

/// A module installed for the user only (in Python's user site, as `pip install --user` does).
const USER_PACKAGE: &str = "import os, site\n\
os.makedirs(site.getusersitepackages(), exist_ok=True)\n\
open(os.path.join(site.getusersitepackages(), 'userpkg.py'), 'w').write('HELLO = \"from-user-site\"\\n')\n";

/// The `id` of a kernel Jupyter started (its JSON answer).
fn kernel_id(kernel: &str) -> String {
    let start = kernel.find("\"id\"").expect("kernel id");
    kernel[start + 4..]
        .chars()
        .skip_while(|c| *c != '"')
        .skip(1)
        .take_while(|c| *c != '"')
        .collect()
}

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
    let id = kernel_id(&kernel);
    let mut ws = ws_connect(&format!("{nb}api/kernels/{id}/channels"), Some(&cookie));
    let out = bai_e2e::apps::jupyter_execute(&mut ws, "print(6 * 7)", "42");
    assert_eq!(out.trim(), "42");
    drop(ws);

    // "Notebook for Backend.AI" is offered beside Jupyter's own kernel, and it sees the
    // image's system packages (mpi4py from Debian) and the user's (a module in ~/.local),
    // which Jupyter's own environment does not.
    s.bai(user, &["run", "-t", "nbsess", "-c", USER_PACKAGE, "python"])
        .expect_ok();
    let (status, _, specs) = http(&format!("{nb}api/kernelspecs"), "GET", Some(&cookie), "");
    assert_eq!(status, 200, "{specs}");
    assert!(specs.contains("Notebook for Backend.AI"), "{specs}");
    let (status, _, kernel) = http(
        &format!("{nb}api/kernels"),
        "POST",
        Some(&cookie),
        r#"{"name": "backendai"}"#,
    );
    assert!(status == 201 || status == 200, "{status} {kernel}");
    let id = kernel_id(&kernel);
    let mut ws = ws_connect(&format!("{nb}api/kernels/{id}/channels"), Some(&cookie));
    let out = bai_e2e::apps::jupyter_execute(
        &mut ws,
        "import sys, mpi4py, userpkg; print(sys.executable, mpi4py.__file__, userpkg.HELLO)",
        "from-user-site",
    );
    assert!(
        out.contains("/usr/bin/python3")
            && out.contains("/usr/lib/python3/dist-packages/mpi4py")
            && out.contains("from-user-site"),
        "{out}"
    );
    drop(ws);

    // A preferred port that is taken: another port of the pool, and `bai open` says so.
    let taken = (30000..30100)
        .find_map(|p| std::net::TcpListener::bind(("0.0.0.0", p)).ok())
        .expect("a free port in the app pool to hold");
    let held = taken.local_addr().expect("held port").port();
    let r = s.bai(
        user,
        &["open", "nbsess", "ttyd", "--port", &held.to_string()],
    );
    r.expect_ok();
    let port: u16 = r
        .stdout
        .trim()
        .rsplit_once(':')
        .and_then(|(_, rest)| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {:?}", r.stdout));
    assert_ne!(port, held, "{r:?}");
    assert!((30000..=30199).contains(&port), "{r:?}");
    assert!(r.stderr.contains("preferred port was taken"), "{r:?}");
    drop(taken);

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

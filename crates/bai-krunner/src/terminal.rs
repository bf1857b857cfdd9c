//! The web terminal, an intrinsic app on port 7681: `GET …/` serves an xterm.js page,
//! `GET …/ws` is a WebSocket attached to a PTY running `tmux new-session -A -s main` (one
//! tmux session per kernel, so reconnecting finds the same shells; bash if tmux is missing).
//! Binary frames carry bytes both ways; a text frame `{"resize":[cols,rows]}` resizes the PTY.
//! Paths are matched by their end, so the page works behind a path-prefixing proxy too.

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;
use tungstenite::Message;

/// Where the terminal listens inside the container.
pub const TERMINAL_PORT: u16 = 7681;

const PAGE: &str = include_str!("terminal.html");
const XTERM_JS: &[u8] = include_bytes!("../assets/xterm/xterm.js");
const XTERM_CSS: &[u8] = include_bytes!("../assets/xterm/xterm.css");
/// Largest request head accepted.
const MAX_HEAD: usize = 32 * 1024;

/// Starts listening on `port` in a background thread.
pub fn start(port: u16, workdir: String) -> std::io::Result<()> {
    serve(TcpListener::bind(("0.0.0.0", port))?, workdir);
    Ok(())
}

/// Serves the terminal on a bound listener, each connection on a thread of its own.
fn serve(listener: TcpListener, workdir: String) {
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let wd = workdir.clone();
            std::thread::spawn(move || {
                if let Err(e) = handle(conn, &wd) {
                    say!("krunner: terminal: {e}");
                }
            });
        }
    });
}

/// A stream that first replays the bytes already read (the request head).
struct Replay {
    head: Vec<u8>,
    pos: usize,
    inner: TcpStream,
}

impl Read for Replay {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos < self.head.len() {
            let n = buf.len().min(self.head.len() - self.pos);
            buf[..n].copy_from_slice(&self.head[self.pos..self.pos + n]);
            self.pos += n;
            return Ok(n);
        }
        self.inner.read(buf)
    }
}

impl Write for Replay {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// What a request asks for.
#[derive(Debug, PartialEq, Eq)]
enum Route {
    Page,
    Script,
    Style,
    Socket,
    Missing,
}

fn route(head: &str) -> Route {
    let target = head
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("/");
    let path = target.split('?').next().unwrap_or("/");
    let upgrade = head.lines().any(|l| {
        l.to_ascii_lowercase().starts_with("upgrade:")
            && l.to_ascii_lowercase().contains("websocket")
    });
    if path.ends_with("/ws") && upgrade {
        Route::Socket
    } else if path.ends_with("/xterm.js") {
        Route::Script
    } else if path.ends_with("/xterm.css") {
        Route::Style
    } else if path.ends_with('/') {
        Route::Page
    } else {
        Route::Missing
    }
}

fn respond(mut s: &TcpStream, status: &str, ctype: &str, body: &[u8]) -> std::io::Result<()> {
    write!(
        s,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    s.write_all(body)?;
    s.flush()?;
    // Close gracefully: half-close, then drain what the client still sends, so the close
    // is a FIN and not a reset that could cost the client our reply.
    s.shutdown(std::net::Shutdown::Write)?;
    s.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut sink = [0u8; 1024];
    while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
    Ok(())
}

fn handle(mut conn: TcpStream, workdir: &str) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = conn.read(&mut buf)?;
        if n == 0 || head.len() > MAX_HEAD {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    match route(&text) {
        Route::Page => respond(&conn, "200 OK", "text/html; charset=utf-8", PAGE.as_bytes()),
        Route::Script => respond(&conn, "200 OK", "application/javascript", XTERM_JS),
        Route::Style => respond(&conn, "200 OK", "text/css", XTERM_CSS),
        Route::Missing => respond(&conn, "404 Not Found", "text/plain", b"not found\n"),
        Route::Socket => {
            let inner = conn.try_clone()?;
            let ws = tungstenite::accept(Replay {
                head,
                pos: 0,
                inner,
            })
            .map_err(|e| std::io::Error::other(format!("websocket handshake: {e}")))?;
            attach(ws, &conn, workdir)
        }
    }
}

/// What the terminal runs: tmux (its shells outlive a closed tab); without it a login bash,
/// and in an image without bash (busybox, Alpine) a login `sh`.
fn shell() -> CommandBuilder {
    let has_tmux = std::process::Command::new("tmux")
        .arg("-V")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if has_tmux {
        let mut c = CommandBuilder::new("tmux");
        c.args(["new-session", "-A", "-s", "main"]);
        return c;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut c = CommandBuilder::new(if on_path(&path, "bash") { "bash" } else { "sh" });
    c.arg("-l");
    c
}

/// Whether a directory of `path` (a `PATH` value) has an executable file `name`.
fn on_path(path: &std::ffi::OsStr, name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path).any(|dir| {
        std::fs::metadata(dir.join(name))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// Runs the terminal's shell ([`shell`]) in a PTY and relays it to the WebSocket until
/// either side ends.
fn attach(
    mut ws: tungstenite::WebSocket<Replay>,
    conn: &TcpStream,
    workdir: &str,
) -> std::io::Result<()> {
    let pty = native_pty_system();
    let pair = pty
        .openpty(PtySize {
            rows: 24,
            cols: 80,
            pixel_width: 0,
            pixel_height: 0,
        })
        .map_err(|e| std::io::Error::other(format!("cannot open a pty: {e}")))?;
    let mut cmd = shell();
    cmd.cwd(workdir);
    cmd.env("TERM", "xterm-256color");
    cmd.env("HOME", workdir);
    let mut child = pair
        .slave
        .spawn_command(cmd)
        .map_err(|e| std::io::Error::other(format!("cannot start the shell: {e}")))?;
    drop(pair.slave);
    let mut reader = pair
        .master
        .try_clone_reader()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut writer = pair
        .master
        .take_writer()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        return;
                    }
                }
            }
        }
    });
    // Short read timeouts let one thread serve both directions.
    conn.set_read_timeout(Some(Duration::from_millis(15)))?;
    let result = loop {
        let mut pty_gone = false;
        loop {
            match rx.try_recv() {
                Ok(data) => {
                    if ws.send(Message::Binary(data.into())).is_err() {
                        pty_gone = true; // the browser is gone: end like a closed PTY
                        break;
                    }
                }
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    pty_gone = true;
                    break;
                }
            }
        }
        if pty_gone {
            let _ = ws.close(None);
            let _ = ws.flush();
            break Ok(());
        }
        match ws.read() {
            Ok(Message::Binary(b)) => {
                if writer.write_all(&b).is_err() {
                    break Ok(());
                }
            }
            Ok(Message::Text(t)) => {
                if let Some((cols, rows)) = parse_resize(t.as_str()) {
                    let _ = pair.master.resize(PtySize {
                        rows,
                        cols,
                        pixel_width: 0,
                        pixel_height: 0,
                    });
                } else if writer.write_all(t.as_bytes()).is_err() {
                    break Ok(());
                }
            }
            Ok(Message::Close(_)) => break Ok(()),
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                break Ok(());
            }
            Err(e) => break Err(std::io::Error::other(e.to_string())),
        }
    };
    // The tmux client goes; the tmux session (and its shells) stays for the next visit.
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// `{"resize":[cols,rows]}` → (cols, rows).
fn parse_resize(text: &str) -> Option<(u16, u16)> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let r = v.get("resize")?.as_array()?;
    let cols = u16::try_from(r.first()?.as_u64()?).ok()?;
    let rows = u16::try_from(r.get(1)?.as_u64()?).ok()?;
    (cols > 0 && rows > 0).then_some((cols, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_match_by_path_end() {
        assert_eq!(route("GET / HTTP/1.1\r\n\r\n"), Route::Page);
        assert_eq!(route("GET /app/x/ttyd/ HTTP/1.1\r\n\r\n"), Route::Page);
        assert_eq!(
            route("GET /app/x/ttyd/xterm.js?v=1 HTTP/1.1\r\n"),
            Route::Script
        );
        assert_eq!(route("GET /xterm.css HTTP/1.1\r\n"), Route::Style);
        assert_eq!(
            route("GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"),
            Route::Socket
        );
        assert_eq!(route("GET /ws HTTP/1.1\r\n\r\n"), Route::Missing);
        assert_eq!(route("GET /etc/passwd HTTP/1.1\r\n\r\n"), Route::Missing);
    }

    #[test]
    fn a_shell_is_on_the_path_only_as_an_executable_file() {
        use std::os::unix::fs::PermissionsExt;
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        std::fs::write(a.path().join("bash"), "").unwrap();
        std::fs::write(b.path().join("sh"), "").unwrap();
        std::fs::set_permissions(b.path().join("sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::fs::create_dir(b.path().join("zsh")).unwrap();
        let path = std::env::join_paths([a.path(), b.path()]).unwrap();
        assert!(on_path(&path, "sh"));
        assert!(!on_path(&path, "bash"), "not executable");
        assert!(!on_path(&path, "zsh"), "a directory");
        assert!(!on_path(std::ffi::OsStr::new(""), "sh"));
    }

    #[test]
    fn resize_frames() {
        assert_eq!(parse_resize(r#"{"resize":[120,40]}"#), Some((120, 40)));
        assert_eq!(parse_resize(r#"{"resize":[0,40]}"#), None);
        assert_eq!(parse_resize("ls\r"), None);
    }

    #[test]
    fn the_terminal_echoes_through_a_real_pty() {
        // The listener stays bound from here on: no other test can take its port between.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let dir = std::env::temp_dir();
        serve(listener, dir.display().to_string());
        let (mut ws, _) = tungstenite::connect(format!("ws://127.0.0.1:{port}/ws")).unwrap();
        ws.send(Message::Binary(b"echo bai-$((40+2))\r".to_vec().into()))
            .unwrap();
        let mut seen = String::new();
        for _ in 0..200 {
            match ws.read() {
                Ok(Message::Binary(b)) => seen.push_str(&String::from_utf8_lossy(&b)),
                Ok(_) => {}
                Err(_) => break,
            }
            if seen.contains("bai-42") {
                break;
            }
        }
        assert!(seen.contains("bai-42"), "terminal output: {seen:?}");
    }
}

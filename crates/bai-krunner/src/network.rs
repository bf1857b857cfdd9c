//! The runner over the pod network, for an agent that does not share the kernel's node
//! (`BAI_KRUNNER_LISTEN=ADDR:PORT`; the Kubernetes backend's `--runner-reach network`).
//!
//! Every connection opens with one line: the kernel's token, which the agent wrote to
//! `<run>/krunner.token` before the kernel started. A connection that does not open with it
//! is closed unanswered, so a pod of another tenant that reaches the port learns nothing
//! and runs nothing. After that line a connection is served exactly as one on the socket.

use crate::conn::Conn;
use crate::server::{self, State};
use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The variable that makes krunner listen on the pod network too.
pub const LISTEN_VAR: &str = "BAI_KRUNNER_LISTEN";
/// The token's file in the kernel's run directory.
pub const TOKEN_FILE: &str = "krunner.token";
/// A token shorter than this is refused: the listener would be guessable.
const MIN_TOKEN: usize = 32;
/// The longest first line read: a token is far shorter.
const MAX_TOKEN_LINE: usize = 256;
/// How long a new connection may take to say its first line.
const FIRST_LINE_WAIT: Duration = Duration::from_secs(10);

/// Listens at `addr` with the token in `run`: an error (to say, then exit) when either is
/// missing, for a listener without a token must never open.
pub fn listen(addr: &str, run: &Path) -> Result<(TcpListener, String), String> {
    let file = run.join(TOKEN_FILE);
    let token = std::fs::read_to_string(&file).map_err(|e| {
        format!(
            "no token for the network listener in {}: {e}",
            file.display()
        )
    })?;
    let token = token.trim().to_string();
    if token.len() < MIN_TOKEN {
        return Err(format!(
            "the token in {} is too short ({} characters, at least {MIN_TOKEN})",
            file.display(),
            token.len()
        ));
    }
    let listener = TcpListener::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    Ok((listener, token))
}

/// Serves every connection that opens with `token`, each on its own thread.
pub fn serve_all(listener: &TcpListener, token: &str, state: &Arc<State>) {
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        let (st, token) = (state.clone(), token.to_string());
        std::thread::spawn(move || {
            let mut stream = stream;
            if admitted(&mut stream, &token) {
                let _ = stream.set_read_timeout(None);
                server::serve(&st, Conn::Tcp(stream));
            }
        });
    }
}

/// Whether the connection's first line is `token` (read a byte at a time, so nothing after
/// it is taken from the request; at most [`FIRST_LINE_WAIT`] and [`MAX_TOKEN_LINE`]).
pub fn admitted(stream: &mut TcpStream, token: &str) -> bool {
    if stream.set_read_timeout(Some(FIRST_LINE_WAIT)).is_err() {
        return false;
    }
    let mut line = Vec::with_capacity(token.len() + 1);
    let mut byte = [0u8; 1];
    loop {
        match stream.read(&mut byte) {
            Ok(1) if byte[0] == b'\n' => break,
            Ok(1) if line.len() < MAX_TOKEN_LINE => line.push(byte[0]),
            _ => return false,
        }
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    same(&line, token.as_bytes())
}

/// Equal bytes, compared in a time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, Write};
    use std::net::Shutdown;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef";

    /// What `admitted` says of a connection that sends `first`, and the rest of the
    /// connection as the server would read it afterwards.
    fn admit(first: &[u8]) -> (bool, String) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let first = first.to_vec();
        let client = std::thread::spawn(move || {
            let mut c = TcpStream::connect(addr).unwrap();
            c.write_all(&first).unwrap();
            c.shutdown(Shutdown::Write).unwrap();
        });
        let (mut s, _) = listener.accept().unwrap();
        let ok = admitted(&mut s, TOKEN);
        let mut rest = String::new();
        if ok {
            std::io::BufReader::new(s).read_line(&mut rest).unwrap();
        }
        client.join().unwrap();
        (ok, rest)
    }

    #[test]
    fn only_a_connection_opening_with_the_token_is_served() {
        let (ok, rest) = admit(format!("{TOKEN}\n{{\"op\":\"ping\"}}\n").as_bytes());
        assert!(ok);
        assert_eq!(rest, "{\"op\":\"ping\"}\n", "the request is left whole");
        assert!(admit(format!("{TOKEN}\r\n").as_bytes()).0);
        assert!(!admit(b"{\"op\":\"ping\"}\n").0, "no token");
        assert!(
            !admit(b"0123456789abcdef0123456789abcdeX\n").0,
            "another token"
        );
        assert!(!admit(format!("{TOKEN}0\n").as_bytes()).0, "a longer one");
        assert!(!admit(TOKEN.as_bytes()).0, "no end of line");
        assert!(!admit(&[b'a'; 4096]).0, "an endless line");
    }

    #[test]
    fn no_listener_without_a_long_token() {
        let run = tempfile::tempdir().unwrap();
        let e = listen("127.0.0.1:0", run.path()).unwrap_err();
        assert!(e.contains("no token for the network listener"), "{e}");
        std::fs::write(run.path().join(TOKEN_FILE), "short\n").unwrap();
        let e = listen("127.0.0.1:0", run.path()).unwrap_err();
        assert!(e.contains("too short"), "{e}");
        std::fs::write(run.path().join(TOKEN_FILE), format!("{TOKEN}\n")).unwrap();
        let (_, token) = listen("127.0.0.1:0", run.path()).unwrap();
        assert_eq!(token, TOKEN);
    }
}

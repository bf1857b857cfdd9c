//! A tunnel that keeps track of where its conversation stands, for a relay that may have to
//! give a connection up (a standby whose leader stopped answering, or no longer leads).
//!
//! Bytes are not parsed: a *turn* is what the client sends after the last byte the upstream
//! sent (or from the start). While a turn has no answer yet, the client waits for one. The
//! first bytes of each turn are peeked (not taken) to tell whether it begins with an HTTP/1
//! request line: a turn that does, and has no byte of answer yet, can still be answered by
//! the relay itself with a whole HTTP response (the answers before it are complete: HTTP/1
//! clients send the next request only after the last answer). Anything else (a WebSocket
//! frame, an SSH packet, TLS, a request body after `100 Continue`) can only be cut.

use crate::{COPY_BUF, FLAGS, Pipe, drain_pipe, shutdown_write, write_all_tcp};
use std::convert::Infallible;
use std::io;
use std::sync::Mutex;
use tokio::io::Interest;
use tokio::net::TcpStream;
use tokio::time::{Duration, Instant};

/// The request methods of HTTP/1 (a turn beginning with one of them, then a space, is a
/// request).
const METHODS: [&[u8]; 9] = [
    b"GET", b"POST", b"PUT", b"DELETE", b"PATCH", b"HEAD", b"OPTIONS", b"CONNECT", b"TRACE",
];

/// Whether `head`, the first bytes of a turn, begins an HTTP/1 request line (`METHOD SP`).
/// A shorter `head` counts when it is the beginning of one (the rest has not arrived).
pub fn begins_a_request(head: &[u8]) -> bool {
    METHODS.iter().any(|m| {
        let mut line = m.to_vec();
        line.push(b' ');
        let n = head.len().min(line.len());
        n > 0 && head.get(..n) == line.get(..n)
    })
}

/// Where a relayed connection's conversation stands (shared by the tunnel and whoever
/// watches it).
#[derive(Debug, Default)]
pub struct Exchange {
    state: Mutex<State>,
}

#[derive(Debug, Default, Clone, Copy)]
struct State {
    /// When the turn waiting for an answer began (None: no turn waits).
    waiting_since: Option<Instant>,
    /// The waiting turn began with an HTTP/1 request line.
    request: bool,
    /// Bytes the upstream sent so far.
    down: u64,
}

/// A turn that waits for its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waiting {
    /// When the client began it.
    pub since: Instant,
    /// It began with an HTTP/1 request line (and nothing of its answer was sent): the relay
    /// may answer it itself.
    pub request: bool,
}

impl Exchange {
    pub fn new() -> Exchange {
        Exchange::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut s)
    }

    /// The turn that waits for an answer now, if one does.
    pub fn waiting(&self) -> Option<Waiting> {
        self.with(|s| {
            s.waiting_since.map(|since| Waiting {
                since,
                request: s.request,
            })
        })
    }

    /// How many bytes the upstream sent so far.
    pub fn answered_bytes(&self) -> u64 {
        self.with(|s| s.down)
    }

    /// The client sends: a new turn begins unless one waits already.
    fn client_sends(&self, head: &[u8]) {
        self.with(|s| {
            if s.waiting_since.is_none() {
                s.waiting_since = Some(Instant::now());
                s.request = begins_a_request(head);
            }
        })
    }

    fn turn_open(&self) -> bool {
        self.with(|s| s.waiting_since.is_some())
    }

    /// The upstream sends `n` bytes: the waiting turn (if any) has its answer begun.
    fn upstream_sends(&self, n: usize) {
        self.with(|s| {
            s.waiting_since = None;
            s.request = false;
            s.down += n as u64;
        })
    }
}

/// [`crate::tunnel`] recording where the conversation stands in `ex`: bytes flow both ways
/// until the upstream's side ends (then the client's side reads its end); the client's side
/// ending only ends the upstream's input. Returns the number of bytes the upstream sent.
pub async fn tunnel_watched(
    client: &TcpStream,
    upstream: &TcpStream,
    ex: &Exchange,
) -> io::Result<u64> {
    let up = async {
        let _ = pump_up(client, upstream, ex).await;
        let _ = shutdown_write(upstream);
        std::future::pending::<Infallible>().await
    };
    let down = async {
        let r = pump_down(upstream, client, ex).await;
        let _ = shutdown_write(client);
        r
    };
    tokio::select! {
        r = down => r,
        never = up => match never {},
    }
}

/// Client to upstream: the first bytes of each turn are peeked before they are moved.
async fn pump_up(src: &TcpStream, dst: &TcpStream, ex: &Exchange) -> io::Result<u64> {
    let pipe = Pipe::new().ok();
    let mut buf = Vec::new();
    let mut total = 0u64;
    let mut head = [0u8; 8];
    loop {
        // Wait for the client's next bytes and look at them first: the answer to the last
        // turn may have begun meanwhile, so they may begin a new one.
        let n = src.peek(&mut head).await?;
        if n == 0 {
            return Ok(total);
        }
        if !ex.turn_open() {
            ex.client_sends(head.get(..n).unwrap_or_default());
        }
        let n = chunk(src, dst, pipe.as_ref(), &mut buf, |_| {}).await?;
        if n == 0 {
            return Ok(total);
        }
        total += n as u64;
    }
}

/// Upstream to client: every chunk marks the waiting turn answered before it is handed on.
async fn pump_down(src: &TcpStream, dst: &TcpStream, ex: &Exchange) -> io::Result<u64> {
    let pipe = Pipe::new().ok();
    let mut buf = Vec::new();
    let mut total = 0u64;
    loop {
        let n = chunk(src, dst, pipe.as_ref(), &mut buf, |n| ex.upstream_sends(n)).await?;
        if n == 0 {
            return Ok(total);
        }
        total += n as u64;
    }
}

/// Moves one chunk from `src` to `dst` (through `pipe`, or `buf` when there is none);
/// `taken(n)` is called once the chunk is read and before it is written. 0: `src` ended.
async fn chunk(
    src: &TcpStream,
    dst: &TcpStream,
    pipe: Option<&Pipe>,
    buf: &mut Vec<u8>,
    taken: impl FnOnce(usize),
) -> io::Result<usize> {
    match pipe {
        Some(pipe) => {
            let n = src
                .async_io(Interest::READABLE, || {
                    rustix::pipe::splice(src, None, &pipe.write, None, pipe.size, FLAGS)
                        .map_err(io::Error::from)
                })
                .await?;
            if n > 0 {
                taken(n);
                drain_pipe(pipe, dst, n).await?;
            }
            Ok(n)
        }
        None => {
            if buf.is_empty() {
                buf.resize(COPY_BUF, 0);
            }
            let n = src
                .async_io(Interest::READABLE, || src.try_read(buf))
                .await?;
            if n > 0 {
                taken(n);
                write_all_tcp(dst, buf.get(..n).unwrap_or_default()).await?;
            }
            Ok(n)
        }
    }
}

/// How long a turn has waited at `now` (zero for none).
pub fn waited(w: Option<Waiting>, now: Instant) -> Duration {
    w.map_or(Duration::ZERO, |w| now.saturating_duration_since(w.since))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    async fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
        let (b, _) = l.accept().await.unwrap();
        (a, b)
    }

    #[test]
    fn request_lines_are_told_from_other_bytes() {
        for head in [
            &b"GET / HTTP/1.1"[..],
            b"POST /session",
            b"PO",
            b"D",
            b"OPTIONS ",
        ] {
            assert!(begins_a_request(head), "{head:?}");
        }
        // A WebSocket frame, an SSH greeting, a TLS record, a body, a method without its
        // space, nothing.
        for head in [
            &[0x81u8, 0x85, 1, 2][..],
            b"SSH-2.0-OpenSSH",
            &[0x16, 3, 1],
            b"{\"image\"",
            b"GETX /",
            b"",
        ] {
            assert!(!begins_a_request(head), "{head:?}");
        }
    }

    /// A request waits from its first byte until the first byte of its answer; the next
    /// request on the connection waits anew; bytes after an upgrade are not a request.
    #[tokio::test]
    async fn turns_wait_until_their_answer_begins() {
        let (mut client_end, client) = pair().await;
        let (upstream, mut upstream_end) = pair().await;
        let ex = std::sync::Arc::new(Exchange::new());
        let relay = {
            let ex = ex.clone();
            tokio::spawn(async move { tunnel_watched(&client, &upstream, &ex).await })
        };
        assert_eq!(ex.waiting(), None);
        let req = b"GET /a HTTP/1.1\r\nhost: x\r\n\r\n";
        client_end.write_all(req).await.unwrap();
        let mut got = vec![0u8; req.len()];
        upstream_end.read_exact(&mut got).await.unwrap();
        let w = ex.waiting().expect("the request waits");
        assert!(w.request);
        upstream_end
            .write_all(b"HTTP/1.1 101 Switching Protocols\r\n\r\n")
            .await
            .unwrap();
        let mut head = [0u8; 36];
        client_end.read_exact(&mut head).await.unwrap();
        assert_eq!(ex.waiting(), None, "answered");
        assert_eq!(ex.answered_bytes(), 36);
        // A WebSocket frame: it waits for an answer, but the relay may not answer it.
        client_end
            .write_all(&[0x81, 0x80, 0, 0, 0, 0])
            .await
            .unwrap();
        let mut frame = [0u8; 6];
        upstream_end.read_exact(&mut frame).await.unwrap();
        let w = ex.waiting().expect("the frame waits");
        assert!(!w.request);
        drop(upstream_end);
        assert_eq!(relay.await.unwrap().unwrap(), 36);
        let mut rest = Vec::new();
        client_end.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty());
    }
}

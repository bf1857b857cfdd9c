//! Dialing a kernel's port with a bound on the wait.
//!
//! A plain `connect(2)` to a port that refuses answers at once, but one whose SYN is dropped
//! (a full accept queue, a node that vanished, a cut link, a firewall that drops) waits for
//! the kernel's SYN retries: about two minutes. Every dial of a kernel, an app or a replica
//! goes through here, so a silent upstream is given up after a few seconds and the caller
//! answers its own caller.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::time::Instant;

/// How long one dial waits for an answer, unless its caller gives less time.
pub const DIAL_WAIT: Duration = Duration::from_secs(5);
/// The pause between two tries of [`dial_while_starting`].
const RETRY_PAUSE: Duration = Duration::from_millis(100);

/// Connects to `addr`, waiting at most `within` for the handshake; `TCP_NODELAY` is set.
/// A silent peer is an error of kind `TimedOut` that names the wait.
pub async fn dial(addr: SocketAddr, within: Duration) -> io::Result<TcpStream> {
    match tokio::time::timeout(within, TcpStream::connect(addr)).await {
        Ok(Ok(s)) => {
            let _ = s.set_nodelay(true);
            Ok(s)
        }
        Ok(Err(e)) => Err(e),
        Err(_) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("{addr} did not answer within {} s", within.as_secs_f32()),
        )),
    }
}

/// Connects to an app that may still be starting: a failed try (refused, or silent for
/// [`DIAL_WAIT`]) is tried again 100 ms later while `wait` lasts. The last error is returned.
pub async fn dial_while_starting(addr: SocketAddr, wait: Duration) -> io::Result<TcpStream> {
    let deadline = Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match dial(addr, left.min(DIAL_WAIT)).await {
            Ok(s) => return Ok(s),
            Err(_) if Instant::now() + RETRY_PAUSE < deadline => {
                tokio::time::sleep(RETRY_PAUSE).await;
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::{TcpListener, TcpSocket};

    /// A listener whose accept queue is full: the kernel drops every further SYN, so a
    /// connect to it hears nothing (as from a frozen or vanished peer).
    async fn silent() -> (TcpListener, TcpStream, SocketAddr) {
        let s = TcpSocket::new_v4().unwrap();
        s.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let l = s.listen(0).unwrap();
        let addr = l.local_addr().unwrap();
        // Backlog 0 holds one connection; this one fills it and is never accepted.
        let filler = TcpStream::connect(addr).await.unwrap();
        (l, filler, addr)
    }

    // The outer bound is far above the dial's own (1 s): without the dial's bound, connect
    // waits for the kernel's SYN retries (about 2 minutes) and this test fails.
    const OUTER: Duration = Duration::from_secs(60);

    #[tokio::test]
    async fn a_silent_peer_is_given_up_with_a_timed_out_error() {
        let (_l, _filler, addr) = silent().await;
        let e = tokio::time::timeout(OUTER, dial(addr, Duration::from_secs(1)))
            .await
            .expect("the dial is bounded")
            .expect_err("nobody answered");
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert!(e.to_string().contains("did not answer"), "{e}");
    }

    #[tokio::test]
    async fn waiting_for_a_starting_app_is_bounded_even_when_it_is_silent() {
        let (_l, _filler, addr) = silent().await;
        let e = tokio::time::timeout(OUTER, dial_while_starting(addr, Duration::from_secs(1)))
            .await
            .expect("the wait is bounded")
            .expect_err("nobody answered");
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
    }

    #[tokio::test]
    async fn an_app_that_starts_listening_late_is_reached() {
        // Take a free port, close it (refused), then listen there a moment later.
        let probe = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = probe.local_addr().unwrap();
        drop(probe);
        assert!(dial(addr, DIAL_WAIT).await.is_err(), "nothing listens yet");
        let (tx, rx) = tokio::sync::oneshot::channel();
        let app = tokio::spawn(async move {
            // Listen only once the dialer runs (its first tries are refused).
            rx.await.unwrap();
            let l = TcpListener::bind(addr).await.unwrap();
            l.accept().await.unwrap().0
        });
        let dialer = tokio::spawn(dial_while_starting(addr, Duration::from_secs(60)));
        tx.send(()).unwrap();
        let s = dialer
            .await
            .unwrap()
            .expect("the app is reached once it listens");
        assert!(s.nodelay().unwrap());
        app.await.unwrap();
    }
}

//! The relay's rules with fake leaders on loopback: one that never answers (a frozen
//! process: its kernel still accepts), one that answers, a lease that moves.

use super::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// Bounds short enough for a test, the ratios of the real ones kept.
fn quick() -> Bounds {
    Bounds {
        dial: Duration::from_secs(5),
        hold: Duration::from_millis(200),
        silent: Duration::from_millis(600),
        late_left: Duration::from_millis(2500),
        tick: Duration::from_millis(50),
    }
}

async fn free_addr() -> SocketAddr {
    let probe = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = probe.local_addr().unwrap();
    drop(probe);
    at
}

async fn standby(bounds: Bounds) -> (Standby, SocketAddr) {
    let api = free_addr().await;
    let s = Standby::start_with(api, (1, 0), true, Absent::Leader, bounds)
        .await
        .unwrap();
    (s, api)
}

fn leader(at: SocketAddr, term: i64, left_ms: u64) -> Option<Leader> {
    Some(Leader {
        address: at.to_string(),
        term,
        left: Duration::from_millis(left_ms),
    })
}

/// A leader that takes connections and reads them but never answers; each request's first
/// bytes are sent on the channel as they arrive. Its connections stay open.
async fn silent_leader() -> (SocketAddr, mpsc::UnboundedReceiver<Vec<u8>>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = l.local_addr().unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut c, _)) = l.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(n) = c.read(&mut buf).await {
                    if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
                // Held open, as a frozen process's socket is.
                std::future::pending::<()>().await;
            });
        }
    });
    (at, rx)
}

/// A leader that answers each connection's first read, after `delay`, with `body`.
async fn answering_leader(body: &'static str, delay: Duration) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut c, _)) = l.accept().await {
            tokio::spawn(async move {
                let mut head = [0u8; 256];
                let _ = c.read(&mut head).await;
                tokio::time::sleep(delay).await;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = c.write_all(answer.as_bytes()).await;
                let _ = c.shutdown().await;
            });
        }
    });
    at
}

const REQUEST: &[u8] = b"POST /session HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}";

/// Sends [`REQUEST`] through `api`; the connection, to read the answer from.
async fn send(api: SocketAddr) -> TcpStream {
    let mut c = TcpStream::connect(api).await.unwrap();
    c.write_all(REQUEST).await.unwrap();
    c
}

async fn answer(mut c: TcpStream) -> String {
    let mut out = Vec::new();
    let _ = c.read_to_end(&mut out).await;
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn an_app_port_goes_to_the_leaders_host() {
    assert_eq!(host_of("10.0.0.2:8090"), "10.0.0.2");
    assert_eq!(host_of("[fd00::2]:8090"), "[fd00::2]");
    assert_eq!(
        Target::AppPort(30600).address("10.0.0.2:8090"),
        "10.0.0.2:30600"
    );
}

/// With no leader a plain HTTP client gets a 503 problem (after the hold); once a leader is
/// named, its bytes come through.
#[tokio::test]
async fn connections_go_to_the_leader_or_get_503() {
    let (standby, api) = standby(quick()).await;
    let got = answer(send(api).await).await;
    assert!(got.starts_with("HTTP/1.1 503"), "{got}");
    assert!(got.contains("no-leader"), "{got}");
    assert!(!got.contains("relayed"), "nothing was relayed: {got}");
    let at = answering_leader("leader", Duration::ZERO).await;
    standby.lead_by(leader(at, 1, 5000));
    let got = answer(send(api).await).await;
    assert!(got.ends_with("leader"), "{got}");
    standby.stop().await;
    // The address is free again for the manager that takes over here.
    TcpListener::bind(api).await.unwrap();
}

/// A connection that arrives while no leader is known waits for one (up to the hold) and
/// goes to the one the lease names meanwhile.
#[tokio::test]
async fn a_held_connection_goes_to_a_leader_named_meanwhile() {
    let bounds = Bounds {
        hold: Duration::from_secs(30),
        ..quick()
    };
    let (standby, api) = standby(bounds).await;
    let c = send(api).await;
    let at = answering_leader("late leader", Duration::ZERO).await;
    standby.lead_by(leader(at, 2, 5000));
    let got = answer(c).await;
    assert!(got.ends_with("late leader"), "{got}");
    standby.stop().await;
}

/// The lease moves while a request relayed to the old leader waits: it is answered 503
/// `no-leader` (saying the request reached a leader) at once; a quiet upgraded connection to
/// the same leader is closed.
#[tokio::test]
async fn the_lease_moving_cuts_the_relays_to_the_old_leader() {
    let (standby, api) = standby(quick()).await;
    let (old, mut seen) = silent_leader().await;
    standby.lead_by(leader(old, 1, 5000));
    let waiting = send(api).await;
    assert!(seen.recv().await.unwrap().starts_with(b"POST"));
    // A connection whose client sent bytes that are no HTTP request (a WebSocket frame):
    // it can only be closed.
    let mut quiet = TcpStream::connect(api).await.unwrap();
    quiet.write_all(&[0x81, 0x80, 0, 0, 0, 0]).await.unwrap();
    seen.recv().await.unwrap();
    let moved = Instant::now();
    let other = answering_leader("new", Duration::ZERO).await;
    standby.lead_by(leader(other, 2, 5000));
    let got = answer(waiting).await;
    assert!(got.starts_with("HTTP/1.1 503"), "{got}");
    assert!(
        got.contains("no-leader") && got.contains("\"relayed\":true"),
        "{got}"
    );
    assert!(got.contains("no longer leads"), "{got}");
    assert!(moved.elapsed() < Duration::from_secs(2), "cut at once");
    let mut rest = Vec::new();
    let _ = quiet.read_to_end(&mut rest).await;
    assert!(rest.is_empty(), "closed, not answered: {rest:?}");
    // New connections go to the new leader.
    let got = answer(send(api).await).await;
    assert!(got.ends_with("new"), "{got}");
    standby.stop().await;
}

/// A frozen leader: its kernel takes the connection, nothing answers, and its lease is not
/// renewed. The request is given up once it waited the silent bound with the renewal late.
#[tokio::test]
async fn a_silent_leader_whose_renewal_is_late_is_given_up() {
    let b = quick();
    let (standby, api) = standby(b).await;
    let (frozen, mut seen) = silent_leader().await;
    // Read 3 s after its last renewal: 2 s left, less than the 2.5 s of a leader on time.
    standby.lead_by(leader(frozen, 1, 2000));
    let sent = Instant::now();
    let c = send(api).await;
    seen.recv().await.unwrap();
    let got = answer(c).await;
    let after = sent.elapsed();
    assert!(got.starts_with("HTTP/1.1 503"), "{got}");
    assert!(got.contains("did not answer within"), "{got}");
    assert!(after >= b.silent, "not before the silent bound: {after:?}");
    assert!(after < b.silent * 4, "soon after it: {after:?}");
    standby.stop().await;
}

/// A leader that renews on time is waited for however long it takes to answer, and a
/// quiet connection (one that waits for nothing) is kept even while the renewal is late.
#[tokio::test]
async fn slow_answers_and_quiet_connections_are_not_cut() {
    let b = quick();
    let (standby, api) = standby(b).await;
    let standby = std::sync::Arc::new(standby);
    let slow = answering_leader("slow", b.silent * 3).await;
    standby.lead_by(leader(slow, 1, 5000));
    let renewing = {
        let standby = standby.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                standby.lead_by(leader(slow, 1, 5000));
            }
        })
    };
    let got = answer(send(api).await).await;
    assert!(got.ends_with("slow"), "{got}");
    renewing.abort();
    let _ = renewing.await;

    // An upgraded connection, quiet while the leader's renewal is late.
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let echo = l.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut c, _) = l.accept().await.unwrap();
        let mut buf = [0u8; 256];
        let _ = c.read(&mut buf).await;
        c.write_all(b"HTTP/1.1 101 Switching Protocols\r\n\r\n")
            .await
            .unwrap();
        while let Ok(n) = c.read(&mut buf).await {
            if n == 0 || c.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    });
    standby.lead_by(leader(echo, 1, 1000));
    let mut ws = TcpStream::connect(api).await.unwrap();
    ws.write_all(b"GET /stream HTTP/1.1\r\nupgrade: websocket\r\n\r\n")
        .await
        .unwrap();
    let mut head = [0u8; 36];
    ws.read_exact(&mut head).await.unwrap();
    // Quiet for several silent bounds: it waits for nothing, so it stays.
    tokio::time::sleep(b.silent * 3).await;
    ws.write_all(b"ping").await.unwrap();
    let mut back = [0u8; 4];
    ws.read_exact(&mut back).await.unwrap();
    assert_eq!(&back, b"ping");
    let standby = std::sync::Arc::into_inner(standby).unwrap();
    standby.stop().await;
}

/// A standby that leads itself now stops: every relayed request waiting for its answer gets
/// 503 at once, and so does a connection held for a leader.
#[tokio::test]
async fn stopping_cuts_every_relay() {
    let bounds = Bounds {
        hold: Duration::from_secs(30),
        ..quick()
    };
    let (standby, api) = standby(bounds).await;
    let (frozen, mut seen) = silent_leader().await;
    standby.lead_by(leader(frozen, 1, 5000));
    let relayed = send(api).await;
    seen.recv().await.unwrap();
    // The lease cannot be read for a moment: the relay goes on, a new connection is held.
    standby.lead_by(None);
    let held = send(api).await;
    let stopped = Instant::now();
    standby.stop().await;
    for c in [relayed, held] {
        let got = answer(c).await;
        assert!(got.starts_with("HTTP/1.1 503"), "{got}");
        assert!(got.contains("no-leader"), "{got}");
    }
    assert!(stopped.elapsed() < Duration::from_secs(2));
}

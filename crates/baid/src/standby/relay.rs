//! One connection through a standby: reaching the leader (or waiting a bounded time for
//! one), relaying, and giving the connection up when the leader no longer leads or falls
//! silent (the rule: `super`'s documentation and docs/HA.md).

use super::{Absent, Bounds, Target, View};
use bai_relay::Exchange;
use bai_relay::exchange::waited;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::{Duration, Instant};

/// How a listener's connections are served.
#[derive(Debug, Clone, Copy)]
pub(crate) struct How {
    /// Its clients speak plain HTTP: a connection may be answered in HTTP.
    pub http: bool,
    /// Why there is no leader when none is known.
    pub absent: Absent,
    pub bounds: Bounds,
}

/// The leader a connection was relayed to, as the lease named it.
struct Dialed {
    address: String,
    term: i64,
}

/// Why a relayed connection was given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// The lease names another leader (or term), or this standby stopped.
    Moved,
    /// Its client waited for an answer while the leader's renewal was late.
    Silent,
}

impl Why {
    fn as_str(self) -> &'static str {
        match self {
            Why::Moved => "the lead moved",
            Why::Silent => "the leader fell silent",
        }
    }
}

/// How often a connection waiting for a leader tries the same address again.
const RETRY: Duration = Duration::from_millis(250);
/// How long a client's request head is read before a 503 (it was never relayed).
const READ_HEAD: Duration = Duration::from_secs(5);
/// How long a cut client's remaining bytes are read after its 503, so that closing does not
/// reset the connection before the client read the answer.
const LINGER: Duration = Duration::from_secs(2);

pub(crate) async fn relay(
    client: TcpStream,
    target: Target,
    mut view: watch::Receiver<View>,
    how: How,
) {
    let Some((up, dialed)) = reach(&mut view, target, &how).await else {
        if how.http {
            let (kind, title, msg) = how.absent.problem();
            let body = problem(kind, title, msg, false);
            unavailable(client, &body).await;
        }
        return;
    };
    let _ = up.set_nodelay(true);
    let ex = Exchange::new();
    let why = tokio::select! {
        _ = bai_relay::tunnel_watched(&client, &up, &ex) => return,
        why = give_up(&mut view, &dialed, &ex, &how.bounds) => why,
    };
    drop(up);
    let waiting = ex.waiting();
    tracing::info!(
        leader = %dialed.address,
        term = dialed.term,
        why = why.as_str(),
        waited_ms = waited(waiting, Instant::now()).as_millis() as u64,
        answered = waiting.is_some_and(|w| w.request) && how.http,
        "a connection relayed to the leader is cut"
    );
    if how.http && waiting.is_some_and(|w| w.request) {
        answer_cut(client, why, &how.bounds).await;
    }
}

/// The leader's connection for a new client: dialed at once, or, when there is none to go
/// to (none known, or it does not answer), waited for up to the hold while the lease may
/// name one. None: no leader (or this standby stopped).
async fn reach(
    view: &mut watch::Receiver<View>,
    target: Target,
    how: &How,
) -> Option<(TcpStream, Dialed)> {
    let hold = match how.absent {
        Absent::Leader => how.bounds.hold,
        Absent::Database => Duration::ZERO,
    };
    let until = Instant::now() + hold;
    loop {
        let v = view.borrow_and_update().clone();
        if v.stopped {
            return None;
        }
        if let Some(leader) = &v.to {
            let addr = target.address(leader);
            let dialed = Dialed {
                address: leader.clone(),
                term: v.term,
            };
            if let Some(up) = dial(&addr, view.clone(), &dialed, &how.bounds).await {
                return Some((up, dialed));
            }
        }
        let now = Instant::now();
        if now >= until {
            return None;
        }
        let wait = until.saturating_duration_since(now).min(RETRY);
        if let Ok(Err(_)) = tokio::time::timeout(wait, view.changed()).await {
            return None;
        }
    }
}

/// A connection to `addr`, within the dial bound, given up when the lease moves on from
/// the leader meanwhile.
async fn dial(
    addr: &str,
    mut view: watch::Receiver<View>,
    to: &Dialed,
    b: &Bounds,
) -> Option<TcpStream> {
    let moved = async {
        loop {
            if view.borrow_and_update().moved_from(&to.address, to.term) {
                return;
            }
            if view.changed().await.is_err() {
                return;
            }
        }
    };
    tokio::select! {
        r = tokio::time::timeout(b.dial, TcpStream::connect(addr)) => match r {
            Ok(Ok(s)) => Some(s),
            Ok(Err(e)) => {
                tracing::debug!(leader = %addr, error = %e, "the leading manager does not answer");
                None
            }
            Err(_) => {
                tracing::debug!(leader = %addr, "the leading manager did not answer in time");
                None
            }
        },
        () = moved => None,
    }
}

/// Waits until the connection relayed to `to` must be given up (see `super`).
async fn give_up(view: &mut watch::Receiver<View>, to: &Dialed, ex: &Exchange, b: &Bounds) -> Why {
    loop {
        {
            let v = view.borrow_and_update();
            if v.moved_from(&to.address, to.term) {
                return Why::Moved;
            }
            let now = Instant::now();
            if waited(ex.waiting(), now) >= b.silent && v.late(now, b) {
                return Why::Silent;
            }
        }
        tokio::select! {
            r = view.changed() => if r.is_err() {
                return Why::Moved;
            },
            () = tokio::time::sleep(b.tick) => {}
        }
    }
}

/// A problem document (`relayed`: the request reached a leader before it was cut).
fn problem(kind: &str, title: &str, msg: &str, relayed: bool) -> String {
    let mut p = serde_json::json!({
        "type": format!("https://api.backend.ai/probs/{kind}"),
        "title": title,
        "msg": msg,
    });
    if relayed {
        p["data"] = serde_json::json!({ "relayed": true });
    }
    p.to_string()
}

/// `503 no-leader` for a request cut off from the leader it was relayed to.
async fn answer_cut(mut client: TcpStream, why: Why, b: &Bounds) {
    let msg = match why {
        Why::Moved => "the manager this request was relayed to no longer leads; it had not answered, so the request may or may not have been carried out; try again (a create sent again with its Idempotency-Key makes one session)".to_string(),
        Why::Silent => format!(
            "the leading manager did not answer within {} s and has not renewed its lease; the request may or may not have been carried out; try again (a create sent again with its Idempotency-Key makes one session)",
            b.silent.as_secs()
        ),
    };
    let body = problem(
        "no-leader",
        "The leading manager stopped answering.",
        &msg,
        true,
    );
    write_503(&mut client, &body).await;
    // What the client still sends (the rest of its body) is read and dropped for a moment:
    // closing with unread bytes would reset the connection under the answer.
    let mut sink = [0u8; 8192];
    let _ = tokio::time::timeout(LINGER, async {
        while let Ok(n) = client.read(&mut sink).await {
            if n == 0 {
                break;
            }
        }
    })
    .await;
}

/// `503` with `body` after reading the request's head (so the client reads the answer
/// rather than a reset).
async fn unavailable(mut client: TcpStream, body: &str) {
    let mut buf = vec![0u8; 16 << 10];
    let mut seen = 0;
    let read_head = async {
        while seen < buf.len() {
            match client.read(&mut buf[seen..]).await {
                Ok(0) | Err(_) => break,
                Ok(n) => seen += n,
            }
            if buf[..seen].windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(READ_HEAD, read_head).await;
    write_503(&mut client, body).await;
}

async fn write_503(client: &mut TcpStream, body: &str) {
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/problem+json\r\ncontent-length: {}\r\nretry-after: 2\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = client.write_all(head.as_bytes()).await;
    let _ = client.write_all(body.as_bytes()).await;
    let _ = client.shutdown().await;
}

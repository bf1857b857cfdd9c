//! Waiting through a switch of managers (docs/HA.md): a request the platform could not serve
//! because no manager leads for a moment, or the leading one cannot reach its database, is
//! sent again for up to [`FAILOVER_WAIT`], with one notice line for the person waiting.
//!
//! What is sent again, and when:
//!
//! - `503 database-unavailable` and `503 not-leader` (a deposed leader: either way the
//!   manager changed nothing), and `503 no-leader` from a standby that sent the request
//!   nowhere: always;
//! - `503 no-leader` for a request a standby had relayed to a leader that then stopped
//!   answering or leading (`data.relayed`), and a connection that broke or timed out after
//!   the request went out: only a request that is safe to repeat (`GET`, `HEAD`, `OPTIONS`,
//!   or one with an `Idempotency-Key`: the same key finds what the first try made);
//! - a connection refused (nothing sent): only once the platform was seen switching (one of
//!   the above), as while a new leader starts listening; a manager that is simply not
//!   running is reported at once.

use crate::ClientError;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a request is sent again while the platform switches managers.
pub const FAILOVER_WAIT: Duration = Duration::from_secs(30);

/// The first pause between two tries; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(250);
const MAX_PAUSE: Duration = Duration::from_secs(2);

/// How far a failed try got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sent {
    /// No connection was made: nothing was sent.
    No,
    /// The request went out (and its answer, if any, is the error).
    Yes,
    /// The request went out and nothing came back within the read timeout.
    TimedOut,
}

impl Sent {
    /// How far the failed `e` got.
    pub(crate) fn of(e: &reqwest::Error) -> Sent {
        if e.is_connect() {
            Sent::No
        } else if e.is_timeout() {
            Sent::TimedOut
        } else {
            Sent::Yes
        }
    }
}

/// Whether a problem says its request reached a leader before it was cut off.
fn relayed(e: &ClientError) -> bool {
    match e {
        ClientError::Api { data: Some(d), .. } => d
            .get("relayed")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false),
        _ => false,
    }
}

/// Whether a try that failed with `e` may be sent again while the platform switches
/// managers. `repeatable`: the request is safe to send twice; `switching`: this request
/// has already met the switch.
pub(crate) fn transient(e: &ClientError, sent: Sent, repeatable: bool, switching: bool) -> bool {
    match e {
        ClientError::Api { status: 503, .. }
            if e.is_kind("database-unavailable") || e.is_kind("not-leader") =>
        {
            true
        }
        ClientError::Api { status: 503, .. } if e.is_kind("no-leader") => repeatable || !relayed(e),
        ClientError::Connect { .. } => match sent {
            Sent::No => switching,
            Sent::Yes | Sent::TimedOut => repeatable,
        },
        _ => false,
    }
}

/// Whether a request with `method` and `headers` is safe to send twice.
pub(crate) fn repeatable(method: &reqwest::Method, headers: &reqwest::header::HeaderMap) -> bool {
    matches!(
        *method,
        reqwest::Method::GET | reqwest::Method::HEAD | reqwest::Method::OPTIONS
    ) || headers.contains_key("idempotency-key")
}

/// What is told the notice line.
pub(crate) type Sink = Arc<dyn Fn(&str) + Send + Sync>;

/// Where the notice goes, shared by a client's clones: it is said once per switch.
#[derive(Clone, Default)]
pub(crate) struct Notice {
    sink: Option<Sink>,
    said: Arc<AtomicBool>,
}

impl std::fmt::Debug for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notice")
            .field("sink", &self.sink.is_some())
            .field("said", &self.said.load(Ordering::Relaxed))
            .finish()
    }
}

impl Notice {
    pub(crate) fn to(sink: Sink) -> Notice {
        Notice {
            sink: Some(sink),
            said: Arc::default(),
        }
    }

    /// Says that the platform switches managers, unless it was said for this switch.
    fn say(&self, wait: Duration) {
        if !self.said.swap(true, Ordering::SeqCst)
            && let Some(sink) = &self.sink
        {
            sink(&notice_line(wait));
        }
    }

    /// A request went through after the switch: the next switch is said again.
    fn over(&self) {
        self.said.store(false, Ordering::SeqCst);
    }
}

/// The notice line.
pub fn notice_line(wait: Duration) -> String {
    format!(
        "the platform is switching managers; retrying for up to {} s…",
        wait.as_secs()
    )
}

/// One request's way through a switch: when it gives up, how long it pauses.
#[derive(Debug)]
pub(crate) struct Failover {
    wait: Duration,
    since: Option<Instant>,
    pause: Duration,
}

impl Failover {
    pub(crate) fn new(wait: Duration) -> Failover {
        Failover {
            wait,
            since: None,
            pause: FIRST_PAUSE,
        }
    }

    /// Whether this request met the switch already.
    pub(crate) fn switching(&self) -> bool {
        self.since.is_some()
    }

    /// After a try failed with `e`: true (once the pause before the next try is over) when
    /// it is worth another, false when the caller should give `e` up.
    pub(crate) async fn again(
        &mut self,
        notice: &Notice,
        e: &ClientError,
        sent: Sent,
        repeatable: bool,
    ) -> bool {
        if !transient(e, sent, repeatable, self.switching()) {
            return false;
        }
        let since = *self.since.get_or_insert_with(Instant::now);
        if since.elapsed() >= self.wait {
            return false;
        }
        notice.say(self.wait);
        tracing::debug!(error = %e, "the platform is switching managers; trying again");
        tokio::time::sleep(self.pause).await;
        self.pause = (self.pause * 2).min(MAX_PAUSE);
        true
    }

    /// The request went through.
    pub(crate) fn done(&self, notice: &Notice) {
        if self.switching() {
            notice.over();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(kind: &str, relayed: bool) -> ClientError {
        let body = if relayed {
            format!(
                r#"{{"type":"https://api.backend.ai/probs/{kind}","title":"t","msg":"m","data":{{"relayed":true}}}}"#
            )
        } else {
            format!(r#"{{"type":"https://api.backend.ai/probs/{kind}","title":"t","msg":"m"}}"#)
        };
        ClientError::from_reply(503, body.as_bytes())
    }

    fn refused() -> ClientError {
        ClientError::Connect {
            endpoint: "http://m".into(),
            detail: "Connection refused".into(),
        }
    }

    #[test]
    fn what_is_sent_again_while_managers_switch() {
        let unsafe_post = false;
        // Nothing was sent, or nothing changed: always.
        assert!(transient(
            &problem("no-leader", false),
            Sent::Yes,
            unsafe_post,
            false
        ));
        assert!(transient(
            &problem("database-unavailable", false),
            Sent::Yes,
            unsafe_post,
            false
        ));
        // Relayed to a leader that stopped: only what is safe to repeat.
        assert!(!transient(
            &problem("no-leader", true),
            Sent::Yes,
            unsafe_post,
            false
        ));
        assert!(transient(
            &problem("no-leader", true),
            Sent::Yes,
            true,
            false
        ));
        // A broken or timed-out connection after sending: the same.
        assert!(!transient(&refused(), Sent::Yes, unsafe_post, true));
        assert!(transient(&refused(), Sent::TimedOut, true, false));
        // Refused: only once the switch was seen (a manager that is not running is said at once).
        assert!(!transient(&refused(), Sent::No, true, false));
        assert!(transient(&refused(), Sent::No, unsafe_post, true));
        // Other answers are the answer.
        assert!(transient(
            &problem("not-leader", false),
            Sent::Yes,
            false,
            false
        ));
        assert!(!transient(
            &problem("no-agents", false),
            Sent::Yes,
            true,
            true
        ));
        assert!(!transient(
            &ClientError::from_reply(500, b"x"),
            Sent::Yes,
            true,
            true
        ));
        let mut h = reqwest::header::HeaderMap::new();
        assert!(repeatable(&reqwest::Method::GET, &h));
        assert!(!repeatable(&reqwest::Method::POST, &h));
        h.insert("Idempotency-Key", "k".parse().unwrap());
        assert!(repeatable(&reqwest::Method::POST, &h));
    }

    #[tokio::test]
    async fn the_notice_is_said_once_per_switch_and_the_wait_is_bounded() {
        let lines = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let notice = {
            let lines = lines.clone();
            Notice::to(Arc::new(move |l: &str| {
                lines.lock().unwrap().push(l.into())
            }))
        };
        let e = problem("no-leader", false);
        let mut f = Failover::new(Duration::from_millis(600));
        let started = Instant::now();
        let mut tries = 1;
        while f.again(&notice, &e, Sent::Yes, false).await {
            tries += 1;
        }
        assert!(tries >= 3, "{tries}");
        assert!(started.elapsed() >= Duration::from_millis(600));
        assert!(started.elapsed() < Duration::from_secs(4));
        f.done(&notice);
        let mut g = Failover::new(Duration::from_millis(100));
        assert!(g.again(&notice, &e, Sent::Yes, false).await);
        assert_eq!(
            *lines.lock().unwrap(),
            vec![
                notice_line(Duration::from_millis(600)),
                notice_line(Duration::from_millis(100))
            ]
        );
    }
}

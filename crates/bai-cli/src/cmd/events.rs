//! `bai events` / `bai session events`.
//!
//! A stream that breaks off (the manager it went through died or restarted) is opened again
//! with the id of the last event read, so the server sends what was missed first and nothing
//! twice; it gives up after [`RECONNECT_FOR`] without a stream, or at once on a refusal that
//! another try would not change (4xx).

use crate::args::EventsArgs;
use anyhow::{Result, bail};
use bai_client::{Client, ClientError};
use futures::StreamExt;
use std::time::{Duration, Instant};

/// How long a broken stream is tried again before `bai events` gives up.
const RECONNECT_FOR: Duration = Duration::from_secs(60);

/// The pause between two tries to open a broken stream again.
const RECONNECT_PAUSE: Duration = Duration::from_millis(500);

/// Whether another try might open the stream: the manager was unreachable, answered 5xx
/// (e.g. `503 no-leader` while a standby takes over) or the stream broke off.
fn worth_retrying(e: &ClientError) -> bool {
    match e {
        ClientError::Api { status, .. } => *status >= 500,
        ClientError::Connect { .. } | ClientError::Protocol(_) => true,
        _ => false,
    }
}

/// The exit code `--wait WAIT` gives for `event`, or None to keep waiting.
/// `batch_session_result` waits for `session_success` (0) or `session_failure` (1).
pub fn wait_outcome(wait: &str, event: &str) -> Option<i32> {
    use bai_core::event::EventKind;
    match (wait, EventKind::parse(event)) {
        ("batch_session_result", Some(EventKind::SessionSuccess)) => Some(0),
        ("batch_session_result", Some(EventKind::SessionFailure)) => Some(1),
        ("batch_session_result", _) => None,
        (w, _) if w == event => Some(0),
        _ => None,
    }
}

pub async fn events(client: &Client, a: &EventsArgs) -> Result<i32> {
    let mut last_id: Option<String> = None;
    let mut broke_at: Option<Instant> = None;
    loop {
        let opened = client
            .events_after(&a.reference, &a.scope, last_id.as_deref())
            .await;
        let mut stream = match opened {
            Ok(s) => s,
            Err(e) => match broke_at {
                Some(t) if worth_retrying(&e) && t.elapsed() < RECONNECT_FOR => {
                    tokio::time::sleep(RECONNECT_PAUSE).await;
                    continue;
                }
                _ => return Err(e.into()),
            },
        };
        let mut broken = false;
        while let Some(ev) = stream.next().await {
            let ev = match ev {
                Ok(ev) => ev,
                Err(e) if worth_retrying(&e) => {
                    broken = true;
                    break;
                }
                Err(e) => return Err(e.into()),
            };
            broke_at = None;
            if ev.id.is_some() {
                last_id.clone_from(&ev.id);
            }
            println!("{} {}", ev.name, ev.data);
            if let Some(code) = a.wait.as_deref().and_then(|w| wait_outcome(w, &ev.name)) {
                return Ok(code);
            }
        }
        if stream.closed_by_server() {
            break;
        }
        // The connection ended without `server_close`: open it again where it broke off.
        let since = *broke_at.get_or_insert_with(Instant::now);
        if since.elapsed() >= RECONNECT_FOR {
            bail!(
                "the event stream of {} broke off and could not be opened again within {}s",
                a.reference,
                RECONNECT_FOR.as_secs()
            );
        }
        eprintln!(
            "the event stream {}; opening it again after event {}",
            if broken { "broke off" } else { "was closed" },
            last_id.as_deref().unwrap_or("(none yet)")
        );
        tokio::time::sleep(RECONNECT_PAUSE).await;
    }
    if let Some(w) = &a.wait {
        bail!(
            "the event stream of {} ended before {w} arrived",
            a.reference
        );
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting() {
        assert_eq!(
            wait_outcome("batch_session_result", "session_success"),
            Some(0)
        );
        assert_eq!(
            wait_outcome("batch_session_result", "session_failure"),
            Some(1)
        );
        assert_eq!(
            wait_outcome("batch_session_result", "session_started"),
            None
        );
        assert_eq!(wait_outcome("session_started", "session_started"), Some(0));
        assert_eq!(wait_outcome("session_started", "session_enqueued"), None);
    }
}

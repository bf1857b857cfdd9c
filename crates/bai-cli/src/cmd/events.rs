//! `bai events` / `bai session events`.

use crate::args::EventsArgs;
use anyhow::{Result, bail};
use bai_client::Client;
use futures::StreamExt;

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
    let mut stream = client.events(&a.reference, &a.scope).await?;
    while let Some(ev) = stream.next().await {
        let ev = ev?;
        println!("{} {}", ev.name, ev.data);
        if let Some(code) = a.wait.as_deref().and_then(|w| wait_outcome(w, &ev.name)) {
            return Ok(code);
        }
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

//! `GET /events/session`: lifecycle events as server-sent events (wire contract §6.1).
//! The stream first replays the session's stored events, then follows live ones, and ends
//! with `server_close` after the session terminated or was cancelled. `sessionName=*` follows
//! every session the caller may see, live, until the client leaves. A name that does not
//! exist yet is bound lazily, to the first session of that name the caller creates.
//!
//! Every event's SSE id is its `seq`, one order over all sessions. A client that reconnects
//! with `Last-Event-ID: N` (an `EventSource` does so by itself; `bai events` too) is sent what
//! it missed first: a one-session stream its stored events after N, a `sessionName=*` stream
//! every stored event after N the caller may see (at most [`REPLAY_LIMIT`]), then live ones,
//! none twice. So a stream relayed through a manager that died picks up where it broke off.

use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::Extension;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use bai_core::Problem;
use bai_core::event::SessionEvent;
use futures::Stream;
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio_stream::wrappers::ReceiverStream;

fn in_scope(scope: &str, ev: &SessionEvent) -> bool {
    let parts: Vec<&str> = scope.split(',').map(str::trim).collect();
    parts.contains(&"*")
        || parts.is_empty()
        || (if ev.kind.is_kernel() {
            parts.contains(&"kernel")
        } else {
            parts.contains(&"session")
        })
}

fn to_sse(ev: &SessionEvent) -> Event {
    Event::default()
        .event(ev.kind.as_str())
        .id(ev.seq.to_string())
        .json_data(bai_api::sessions::SessionEventData::from(ev))
        .unwrap_or_else(|e| Event::default().comment(format!("unsendable event: {e}")))
}

/// The most stored events a reconnecting `sessionName=*` stream is sent before live ones.
pub const REPLAY_LIMIT: usize = 10_000;

/// The header an `EventSource` sends when it reconnects: the id of the last event it got.
const LAST_EVENT_ID: &str = "last-event-id";

/// The `Last-Event-ID` a reconnecting client sent, if any: one of this stream's ids.
fn last_event_id(headers: &HeaderMap) -> Result<Option<i64>, Problem> {
    let Some(v) = headers.get(LAST_EVENT_ID) else {
        return Ok(None);
    };
    let text = v.to_str().unwrap_or_default().trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse::<i64>().map(Some).map_err(|_| {
        Problem::invalid(format!(
            "Last-Event-ID {text:?} is not an id this stream sent (they are whole numbers)"
        ))
    })
}

type Tx = tokio::sync::mpsc::Sender<Result<Event, Infallible>>;

/// How long a stream follows: one session (until it ends), or every session the caller may
/// see (`sessionName=*`, for as long as the client stays).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Follow {
    One,
    All,
}

/// The event that ends a stream (Backend.AI's clients stop reading at it).
pub(super) fn server_close() -> Event {
    Event::default()
        .event(bai_api::sessions::EventName::ServerClose.as_str())
        .data("{}")
}

/// Sends one event when in scope and, on a one-session stream, `server_close` after a final
/// one. Returns whether the stream goes on.
async fn forward(tx: &Tx, scope: &str, follow: Follow, ev: &SessionEvent) -> bool {
    if in_scope(scope, ev) && tx.send(Ok(to_sse(ev))).await.is_err() {
        return false;
    }
    if follow == Follow::One && ev.kind.is_final() {
        let _ = tx.send(Ok(server_close())).await;
        return false;
    }
    true
}

pub async fn session_events(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let target = ["sessionName", "sessionId", "name", "session_name"]
        .iter()
        .find_map(|k| q.get(*k))
        .cloned()
        .ok_or_else(|| {
            Problem::invalid("name the session: ?sessionName=NAME or ?sessionId=UUID")
        })?;
    let scope = q.get("scope").cloned().unwrap_or_else(|| "*".into());
    let resume = last_event_id(&headers)?;
    let owner: Option<String> = if caller.is_admin {
        q.get("owner_access_key")
            .or_else(|| q.get("ownerAccessKey"))
            .cloned()
    } else {
        Some(caller.access_key.clone())
    };
    let mut rx = m.bus.subscribe();
    // `sessionName=*`: every session the caller may see, live only (the web UI's list).
    let all = target == "*";
    let follow = if all { Follow::All } else { Follow::One };
    let existing = if all {
        None
    } else {
        m.store
            .find_session(&target, owner.as_deref())?
            .into_iter()
            .next()
    };
    let (tx, out) = tokio::sync::mpsc::channel::<Result<Event, Infallible>>(64);
    let store = m.store.clone();
    tokio::spawn(async move {
        let mut bound = existing.as_ref().map(|r| r.id);
        // Events up to here were sent already (to this client, before it reconnected).
        let mut last_seq = resume.unwrap_or(0);
        let past = match (bound, resume) {
            (Some(id), _) => store.events_of(id),
            (None, Some(after)) if all => store.events_since(after, owner.as_deref(), REPLAY_LIMIT),
            (None, _) => Ok(Vec::new()),
        };
        let Ok(past) = past else {
            return;
        };
        for ev in past {
            if ev.seq <= last_seq {
                // Sent before the reconnect; a final one still ends a one-session stream.
                if follow == Follow::One && ev.kind.is_final() {
                    let _ = tx.send(Ok(server_close())).await;
                    return;
                }
                continue;
            }
            last_seq = ev.seq;
            if !forward(&tx, &scope, follow, &ev).await {
                return;
            }
        }
        loop {
            let ev = match rx.recv().await {
                Ok(ev) => ev,
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return,
            };
            if owner.as_deref().is_some_and(|o| o != ev.access_key) {
                continue;
            }
            let matches = all
                || match bound {
                    Some(id) => ev.session_id == id,
                    None => ev.session_name == target || ev.session_id.to_string() == target,
                };
            if !matches || ev.seq <= last_seq {
                continue;
            }
            if !all {
                bound = Some(ev.session_id);
            }
            last_seq = ev.seq;
            if !forward(&tx, &scope, follow, &ev).await {
                return;
            }
        }
    });
    Ok(Sse::new(ReceiverStream::new(out)).keep_alive(
        KeepAlive::new()
            .interval(Duration::from_secs(15))
            .text("keep-alive"),
    ))
}

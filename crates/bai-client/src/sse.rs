//! Server-sent events (wire contract §6.1): a line parser and the session event stream.

use crate::{Client, ClientError, encode};
use futures::{Stream, StreamExt};
use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The event that tells the client the stream is over.
pub const SERVER_CLOSE: &str = bai_api::sessions::EventName::ServerClose.as_str();

/// One event: its name (`message` when the server gave none), its data (JSON text) and the
/// stream's last event id when it arrived (what a reconnect sends as `Last-Event-ID`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub name: String,
    pub data: String,
    pub id: Option<String>,
}

impl Event {
    /// The data parsed as JSON.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_str(&self.data).ok()
    }
}

/// Incremental parser: feed it bytes as they arrive, get complete events.
/// Handles `\n` and `\r\n`, multi-line `data:`, `:` comments and `id:` (kept until the next
/// one, as an `EventSource` keeps it); ignores `retry:`.
#[derive(Debug, Default)]
pub struct Parser {
    buf: Vec<u8>,
    name: String,
    data: Vec<String>,
    id: Option<String>,
}

impl Parser {
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Event> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(i) = self.buf.iter().position(|b| *b == b'\n') {
            let raw: Vec<u8> = self.buf.drain(..=i).collect();
            let line = String::from_utf8_lossy(&raw);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if let Some(ev) = self.dispatch() {
                    out.push(ev);
                }
            } else if line.starts_with(':') {
                // A comment: keep-alive.
            } else {
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "event" => self.name = value.to_string(),
                    "data" => self.data.push(value.to_string()),
                    "id" if !value.contains('\0') => {
                        self.id = Some(value.to_string()).filter(|v| !v.is_empty());
                    }
                    _ => {}
                }
            }
        }
        out
    }

    /// The event a blank line completes, if any field was seen.
    fn dispatch(&mut self) -> Option<Event> {
        if self.data.is_empty() && self.name.is_empty() {
            return None;
        }
        let name = match std::mem::take(&mut self.name) {
            n if n.is_empty() => "message".to_string(),
            n => n,
        };
        let data = std::mem::take(&mut self.data).join("\n");
        Some(Event {
            name,
            data,
            id: self.id.clone(),
        })
    }
}

type Body = Pin<Box<dyn Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>;

/// A stream of events. It ends after `server_close` (which it does not yield) or when the
/// connection ends; [`EventStream::closed_by_server`] tells the two apart.
pub struct EventStream {
    body: Body,
    parser: Parser,
    queue: VecDeque<Event>,
    done: bool,
    closed: bool,
}

impl EventStream {
    /// Events parsed from any byte stream (for tests and other transports).
    pub fn from_body(
        body: impl Stream<Item = reqwest::Result<bytes::Bytes>> + Send + 'static,
    ) -> Self {
        EventStream {
            body: Box::pin(body),
            parser: Parser::default(),
            queue: VecDeque::new(),
            done: false,
            closed: false,
        }
    }

    /// Whether the server ended the stream with `server_close` (the followed session ended),
    /// rather than the connection breaking off or closing: only then is a reconnect pointless.
    pub fn closed_by_server(&self) -> bool {
        self.closed
    }
}

impl Stream for EventStream {
    type Item = Result<Event, ClientError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(ev) = self.queue.pop_front() {
                return Poll::Ready(Some(Ok(ev)));
            }
            if self.done {
                return Poll::Ready(None);
            }
            match self.body.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {
                    self.done = true;
                }
                Poll::Ready(Some(Err(e))) => {
                    self.done = true;
                    return Poll::Ready(Some(Err(ClientError::Protocol(format!(
                        "the event stream broke off: {e}"
                    )))));
                }
                Poll::Ready(Some(Ok(chunk))) => {
                    for ev in self.parser.feed(&chunk) {
                        if self.done {
                            break;
                        }
                        if ev.name == SERVER_CLOSE {
                            self.done = true;
                            self.closed = true;
                        } else {
                            self.queue.push_back(ev);
                        }
                    }
                }
            }
        }
    }
}

impl Client {
    /// Follows a session's lifecycle events: `GET /events/session?sessionName=…&scope=…`
    /// (`scope` is `*`, `session`, `kernel` or `session,kernel`). The name may also be a
    /// session id; the server binds names lazily, so this may start before the session.
    pub async fn events(
        &self,
        session_name_or_id: &str,
        scope: &str,
    ) -> Result<EventStream, ClientError> {
        self.events_after(session_name_or_id, scope, None).await
    }

    /// [`Client::events`] for a reconnect: the server first sends what came after
    /// `last_event_id` (the [`Event::id`] of the last event read), then live events.
    pub async fn events_after(
        &self,
        session_name_or_id: &str,
        scope: &str,
        last_event_id: Option<&str>,
    ) -> Result<EventStream, ClientError> {
        let path = format!(
            "/events/session?{}",
            encode::query(&[("sessionName", session_name_or_id), ("scope", scope)])
        );
        let resp = self
            .dispatch(reqwest::Method::GET, &path, None, |r| match last_event_id {
                Some(id) => r.header("Last-Event-ID", id),
                None => r,
            })
            .await?;
        Ok(EventStream::from_body(resp.bytes_stream()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_events_comments_and_split_chunks() {
        let mut p = Parser::default();
        assert!(
            p.feed(b": keep-alive\n\nevent: session_started\nda")
                .is_empty()
        );
        let evs = p.feed(b"ta: {\"a\": 1}\n\nevent: server_close\ndata: {}\n\n");
        assert_eq!(evs.len(), 2);
        assert_eq!(
            evs[0],
            Event {
                name: "session_started".into(),
                data: "{\"a\": 1}".into(),
                id: None,
            }
        );
        assert_eq!(evs[0].json().unwrap()["a"], 1);
        assert_eq!(evs[1].name, "server_close");
    }

    #[test]
    fn multi_line_data_crlf_and_unnamed_events() {
        let mut p = Parser::default();
        let evs = p.feed(b"data: line1\r\ndata:line2\r\nid: 7\r\nretry: 5\r\n\r\n");
        assert_eq!(
            evs,
            vec![Event {
                name: "message".into(),
                data: "line1\nline2".into(),
                id: Some("7".into()),
            }]
        );
        // A multi-byte character split across chunks survives.
        let s = "event: e\ndata: \"é\"\n\n".as_bytes();
        let (a, b) = s.split_at(s.len() - 4);
        assert!(p.feed(a).is_empty());
        assert_eq!(p.feed(b)[0].data, "\"é\"");
    }

    #[tokio::test]
    async fn the_stream_stops_at_server_close() {
        let chunks: Vec<reqwest::Result<bytes::Bytes>> = vec![
            Ok(bytes::Bytes::from_static(b"event: session_enqueued\ndata: {}\n\n: ping\n\n")),
            Ok(bytes::Bytes::from_static(
                b"event: session_started\ndata: {\"x\":1}\n\nevent: server_close\ndata: {}\n\nevent: after\ndata: {}\n\n",
            )),
        ];
        let evs: Vec<_> = EventStream::from_body(futures::stream::iter(chunks))
            .collect()
            .await;
        let names: Vec<String> = evs.into_iter().map(|e| e.unwrap().name).collect();
        assert_eq!(names, vec!["session_enqueued", "session_started"]);
    }

    #[tokio::test]
    async fn ids_carry_over_and_a_broken_stream_is_not_a_close() {
        let chunks: Vec<reqwest::Result<bytes::Bytes>> = vec![Ok(bytes::Bytes::from_static(
            b"event: a\nid: 41\ndata: {}\n\nevent: b\ndata: {}\n\nevent: c\nid: 42\ndata: {}\n\n",
        ))];
        let mut s = EventStream::from_body(futures::stream::iter(chunks));
        let mut ids = Vec::new();
        while let Some(ev) = s.next().await {
            ids.push(ev.unwrap().id);
        }
        let want: Vec<Option<String>> =
            vec![Some("41".into()), Some("41".into()), Some("42".into())];
        assert_eq!(ids, want);
        assert!(!s.closed_by_server(), "the body ended without server_close");
        let closing: Vec<reqwest::Result<bytes::Bytes>> = vec![Ok(bytes::Bytes::from_static(
            b"event: server_close\ndata: {}\n\n",
        ))];
        let mut s = EventStream::from_body(futures::stream::iter(closing));
        assert!(s.next().await.is_none());
        assert!(s.closed_by_server());
    }
}

//! Server-sent events: a line parser and the session event stream.

use crate::{Client, ClientError, encode_query_value};
use futures::StreamExt;

/// One event: its name and its data (JSON text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub name: String,
    pub data: String,
}

/// Incremental parser: feed it text, get complete events.
#[derive(Default)]
pub struct Parser {
    buf: String,
    name: String,
    data: Vec<String>,
}

impl Parser {
    pub fn feed(&mut self, text: &str) -> Vec<Event> {
        self.buf.push_str(text);
        let mut out = Vec::new();
        while let Some(i) = self.buf.find('\n') {
            let line: String = self.buf.drain(..=i).collect();
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() || !self.name.is_empty() {
                    let name = if self.name.is_empty() {
                        "message".to_string()
                    } else {
                        std::mem::take(&mut self.name)
                    };
                    out.push(Event {
                        name,
                        data: self.data.join("\n"),
                    });
                    self.data.clear();
                }
            } else if line.starts_with(':') {
                // comment / keep-alive
            } else {
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "event" => self.name = value.to_string(),
                    "data" => self.data.push(value.to_string()),
                    _ => {}
                }
            }
        }
        out
    }
}

impl Client {
    /// Follows a session's lifecycle events until `server_close` (exclusive) or the end.
    pub async fn session_events(
        &self,
        reference: &str,
        scope: &str,
        mut on_event: impl FnMut(&Event) -> bool,
    ) -> Result<(), ClientError> {
        let path = format!(
            "/events/session?sessionName={}&scope={}",
            encode_query_value(reference),
            encode_query_value(scope)
        );
        let resp = self.get_stream(&path).await?;
        let mut body = resp.bytes_stream();
        let mut parser = Parser::default();
        let mut pending = Vec::new();
        while let Some(chunk) = body.next().await {
            let chunk =
                chunk.map_err(|e| ClientError::Protocol(format!("event stream broke off: {e}")))?;
            pending.extend_from_slice(&chunk);
            let valid = match std::str::from_utf8(&pending) {
                Ok(s) => s.len(),
                Err(e) => e.valid_up_to(),
            };
            let text = String::from_utf8_lossy(&pending[..valid]).into_owned();
            pending.drain(..valid);
            for ev in parser.feed(&text) {
                if ev.name == "server_close" || !on_event(&ev) {
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_events_comments_and_split_chunks() {
        let mut p = Parser::default();
        assert!(
            p.feed(": keep-alive\n\nevent: session_started\nda")
                .is_empty()
        );
        let evs = p.feed("ta: {\"a\": 1}\n\nevent: server_close\ndata: {}\n\n");
        assert_eq!(evs.len(), 2);
        assert_eq!(
            evs[0],
            Event {
                name: "session_started".into(),
                data: "{\"a\": 1}".into()
            }
        );
        assert_eq!(evs[1].name, "server_close");
        let evs = p.feed("data: line1\ndata: line2\n\n");
        assert_eq!(evs[0].data, "line1\nline2");
        assert_eq!(evs[0].name, "message");
    }
}

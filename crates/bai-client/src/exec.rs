//! Code execution over the execute WebSocket (wire contract §6.2).

use crate::retry::{Failover, Sent};
use crate::session::session_path;
use crate::{Client, ClientError};
use futures::{SinkExt, Stream, StreamExt};
use serde_json::{Value, json};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::{self, Message};

/// How the code is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `code` is a snippet for the kernel's REPL (`-c`).
    Query,
    /// Build and run files: `options` has `clean`, `build`, `exec`.
    Batch,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Query => "query",
            Mode::Batch => "batch",
        }
    }
}

/// One result frame from the server.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecResult {
    /// `continued`, `waiting-input`, `finished`, `clean-finished`, `build-finished`, …
    pub status: String,
    /// `(kind, text)` records in order; kind is `stdout`, `stderr`, `media`, `html`, …
    /// (non-text payloads are given as JSON text).
    pub console: Vec<(String, String)>,
    pub exit_code: Option<i32>,
    pub options: Value,
}

impl ExecResult {
    /// On `waiting-input`: whether the input should not be echoed.
    pub fn is_password(&self) -> bool {
        self.options
            .get("is_password")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    pub fn is_finished(&self) -> bool {
        self.status == "finished"
    }
}

/// Parses one server frame.
pub fn parse_frame(text: &str) -> Result<ExecResult, ClientError> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| ClientError::Protocol(format!("bad execute frame ({e}): {text}")))?;
    let console = v
        .get("console")
        .and_then(Value::as_array)
        .map(|recs| {
            recs.iter()
                .filter_map(|r| {
                    let kind = r.get(0)?.as_str()?.to_string();
                    let text = match r.get(1)? {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    Some((kind, text))
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(ExecResult {
        status: v
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        console,
        exit_code: v
            .get("exitCode")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok()),
        options: v.get("options").cloned().unwrap_or(Value::Null),
    })
}

pub(crate) type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// An open execution: a stream of [`ExecResult`]s, ending when the server closes.
pub struct Execution {
    ws: Ws,
}

impl Client {
    /// Opens a signed WebSocket to `path_and_query` (signed as a GET without Content-Type);
    /// a refused upgrade becomes the server's problem as [`ClientError::Api`]. The opening
    /// is bounded (the connect and read timeouts) and, as a GET, is tried again while the
    /// platform switches managers.
    pub(crate) async fn signed_ws(&self, path_and_query: &str) -> Result<Ws, ClientError> {
        let mut failover = Failover::new(self.config.failover_wait);
        loop {
            match self.ws_once(path_and_query).await {
                Ok(ws) => {
                    failover.done(&self.notice);
                    return Ok(ws);
                }
                Err((e, sent)) => {
                    if !failover.again(&self.notice, &e, sent, true).await {
                        return Err(e);
                    }
                }
            }
        }
    }

    async fn ws_once(&self, path_and_query: &str) -> Result<Ws, (ClientError, Sent)> {
        let url = format!(
            "{}://{}{}{}",
            if self.config.is_https() { "wss" } else { "ws" },
            self.config.authority(),
            self.config.path_prefix(),
            path_and_query
        );
        let fail = |e| (e, Sent::No);
        let mut req = url
            .as_str()
            .into_client_request()
            .map_err(|e| fail(ClientError::Config(format!("bad WebSocket URL {url}: {e}"))))?;
        for (k, v) in self.sign_headers("GET", path_and_query, None).headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| fail(ClientError::Config(format!("bad header name {k}"))))?;
            let value = HeaderValue::from_str(&v).map_err(|_| {
                fail(ClientError::Config(format!(
                    "bad value for header {k}: {v:?}"
                )))
            })?;
            req.headers_mut().insert(name, value);
        }
        let connector = if self.config.is_https() {
            Some(tokio_tungstenite::Connector::Rustls(
                crate::tls::client_config(&self.config.ca_files, self.config.skip_tls_verify)
                    .map_err(fail)?,
            ))
        } else {
            None
        };
        let bound =
            self.config.connect_timeout + self.config.read_timeout.unwrap_or(crate::REQUEST_IDLE);
        let opened = tokio::time::timeout(
            bound,
            tokio_tungstenite::connect_async_tls_with_config(req, None, false, connector),
        )
        .await
        .map_err(|_| {
            let e = std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer in time");
            (
                ClientError::connect(self.config.endpoint(), &e),
                Sent::TimedOut,
            )
        })?;
        let (ws, _) = opened.map_err(|e| match e {
            tungstenite::Error::Http(resp) => {
                let body = resp.body().clone().unwrap_or_default();
                (
                    ClientError::from_reply(resp.status().as_u16(), &body),
                    Sent::Yes,
                )
            }
            tungstenite::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
                (ClientError::connect(self.config.endpoint(), &io), Sent::No)
            }
            other => (
                ClientError::connect(self.config.endpoint(), &other),
                Sent::Yes,
            ),
        })?;
        Ok(ws)
    }

    /// Opens `WS /stream/session/{ref}/execute` (signed, no Content-Type) and sends the
    /// first frame `{"code", "mode", "options"}`.
    pub async fn execute_ws(
        &self,
        session: &str,
        code: &str,
        mode: Mode,
        options: Value,
    ) -> Result<Execution, ClientError> {
        let path = format!("/stream{}", session_path(session, "/execute")?);
        let mut ws = self.signed_ws(&path).await?;
        let first = json!({"code": code, "mode": mode.as_str(), "options": options});
        ws.send(Message::Text(first.to_string().into()))
            .await
            .map_err(|e| ClientError::Protocol(format!("cannot send the code: {e}")))?;
        Ok(Execution { ws })
    }
}

impl Execution {
    /// Answers a `waiting-input` frame with one line (sent as a text frame).
    pub async fn send_input(&mut self, line: &str) -> Result<(), ClientError> {
        self.ws
            .send(Message::Text(line.to_string().into()))
            .await
            .map_err(|e| ClientError::Protocol(format!("cannot send input: {e}")))
    }

    /// Closes the socket (code 1000).
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}

impl Stream for Execution {
    type Item = Result<ExecResult, ClientError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            let msg = match self.ws.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Ready(Some(m)) => m,
            };
            return Poll::Ready(match msg {
                Ok(Message::Text(t)) => Some(parse_frame(t.as_str())),
                Ok(Message::Binary(b)) => Some(parse_frame(&String::from_utf8_lossy(&b))),
                Ok(Message::Close(_)) => None,
                Ok(_) => continue,
                Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                    None
                }
                Err(e) => Some(Err(ClientError::Protocol(format!(
                    "the execution stream broke off: {e}"
                )))),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames() {
        let r = parse_frame(
            r#"{"status":"finished","console":[["stdout","hi\n"],["stderr","x"],["media",["image/png","AAA"]]],"exitCode":3,"options":null}"#,
        )
        .unwrap();
        assert!(r.is_finished());
        assert_eq!(r.exit_code, Some(3));
        assert_eq!(
            r.console,
            vec![
                ("stdout".to_string(), "hi\n".to_string()),
                ("stderr".to_string(), "x".to_string()),
                ("media".to_string(), "[\"image/png\",\"AAA\"]".to_string()),
            ]
        );
        let r = parse_frame(
            r#"{"status":"waiting-input","console":[],"options":{"is_password":true}}"#,
        )
        .unwrap();
        assert!(r.is_password() && !r.is_finished());
        assert!(parse_frame("not json").is_err());
    }
}

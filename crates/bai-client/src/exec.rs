//! Code execution over the execute WebSocket (wire contract §6.2).

use crate::{Client, ClientError, encode_path_segment};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// One frame from the server.
#[derive(Debug, Clone)]
pub struct ExecResult {
    pub status: String,
    /// `(stdout|stderr|…, text)` records in order.
    pub console: Vec<(String, String)>,
    pub exit_code: Option<i32>,
    pub is_password: bool,
}

/// An open execution.
pub struct Execution {
    ws: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
}

fn parse_frame(text: &str) -> Result<ExecResult, ClientError> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| ClientError::Protocol(format!("bad execute frame: {e}")))?;
    let console = v["console"]
        .as_array()
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
        status: v["status"].as_str().unwrap_or("").to_string(),
        console,
        exit_code: v["exitCode"].as_i64().map(|c| c as i32),
        is_password: v["options"]["is_password"].as_bool().unwrap_or(false),
    })
}

impl Client {
    /// Opens the execute WebSocket and sends the first frame.
    pub async fn execute(
        &self,
        session: &str,
        mode: &str,
        code: &str,
        options: Value,
    ) -> Result<Execution, ClientError> {
        let path = format!("/stream/session/{}/execute", encode_path_segment(session));
        let url = format!("{}{}", self.config.endpoint.replacen("http", "ws", 1), path);
        let mut req = url
            .into_client_request()
            .map_err(|e| ClientError::Config(format!("bad endpoint: {e}")))?;
        for (k, v) in self.sign_headers("GET", &path, None).headers {
            let value = v
                .parse()
                .map_err(|_| ClientError::Config(format!("bad header value for {k}")))?;
            req.headers_mut().insert(k, value);
        }
        let (mut ws, _) = tokio_tungstenite::connect_async(req)
            .await
            .map_err(|e| match e {
                tokio_tungstenite::tungstenite::Error::Http(resp) => {
                    let body = resp.body().clone().unwrap_or_default();
                    ClientError::from_reply(resp.status().as_u16(), &body)
                }
                other => ClientError::Connect {
                    endpoint: self.config.endpoint.clone(),
                    detail: other.to_string(),
                },
            })?;
        let first = json!({"code": code, "mode": mode, "options": options});
        ws.send(Message::Text(first.to_string().into()))
            .await
            .map_err(|e| ClientError::Protocol(format!("cannot send the code: {e}")))?;
        Ok(Execution { ws })
    }
}

impl Execution {
    /// The next result frame; `None` when the server closed.
    pub async fn next(&mut self) -> Result<Option<ExecResult>, ClientError> {
        while let Some(msg) = self.ws.next().await {
            match msg
                .map_err(|e| ClientError::Protocol(format!("execution stream broke off: {e}")))?
            {
                Message::Text(t) => return parse_frame(&t).map(Some),
                Message::Close(_) => return Ok(None),
                _ => continue,
            }
        }
        Ok(None)
    }

    /// Answers a `waiting-input` frame.
    pub async fn send_input(&mut self, line: &str) -> Result<(), ClientError> {
        self.ws
            .send(Message::Text(line.to_string().into()))
            .await
            .map_err(|e| ClientError::Protocol(format!("cannot send input: {e}")))
    }

    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}

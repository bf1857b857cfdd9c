//! Session apps and files (wire contract §5.4, §5.5): the app list, TCP tunnels to an app
//! over `/stream/session/{ref}/tcpproxy` (raw when the manager offers it, else the
//! WebSocket), and downloads of session files as tar parts.

use crate::exec::Ws;
use crate::session::session_path;
use crate::{Client, ClientError, encode};
use bai_api::sessions::{ProxyMode, StartServiceReply, StartServiceRequest};
use futures::{SinkExt, StreamExt};
use reqwest::Method;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

/// One app of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppInfo {
    pub name: String,
    pub protocol: String,
    pub ports: Vec<u16>,
}

/// An open tunnel to an app.
pub struct Tunnel {
    inner: Carrier,
}

enum Carrier {
    /// The wire contract's WebSocket: the bytes in binary frames.
    WebSocket(Box<Ws>),
    /// bai's raw tunnel (`Upgrade: bai-tcp`): the connection carries the bytes as they are;
    /// `early` arrived from the app together with the switch.
    Raw {
        conn: tokio::net::TcpStream,
        early: bytes::Bytes,
    },
}

impl Client {
    /// `GET /stream/session/{ref}/apps`.
    pub async fn apps(&self, session: &str) -> Result<Vec<AppInfo>, ClientError> {
        let path = format!("/stream{}", session_path(session, "/apps")?);
        let v = self.send_json(Method::GET, &path, None).await?;
        let items = v
            .as_array()
            .ok_or_else(|| ClientError::Protocol("the app list is not a list".into()))?;
        Ok(items
            .iter()
            .map(|a| AppInfo {
                name: a["name"].as_str().unwrap_or_default().to_string(),
                protocol: a["protocol"].as_str().unwrap_or_default().to_string(),
                ports: a["ports"]
                    .as_array()
                    .map(|p| {
                        p.iter()
                            .filter_map(Value::as_u64)
                            .filter_map(|n| u16::try_from(n).ok())
                            .collect()
                    })
                    .unwrap_or_default(),
            })
            .collect())
    }

    /// `POST /session/{ref}/start-service`: starts a web app and opens an HTTP proxy to it;
    /// the reply's `url` (with a one-time permit) opens it in a browser.
    pub async fn start_service(
        &self,
        session: &str,
        app: &str,
        path_mode: bool,
        preferred_port: Option<u16>,
        public: bool,
    ) -> Result<StartServiceReply, ClientError> {
        let request = StartServiceRequest {
            app: app.to_string(),
            mode: Some(if path_mode {
                ProxyMode::Path
            } else {
                ProxyMode::Port
            }),
            port: preferred_port,
            open_to_public: Some(public),
            arguments: None,
            envs: None,
        };
        let path = session_path(session, "/start-service")?;
        self.send_as(Method::POST, &path, &request, "start-service")
            .await
    }

    /// Opens a tunnel to `app` of the session (`tcpproxy`: any app).
    pub async fn open_tunnel(&self, session: &str, app: &str) -> Result<Tunnel, ClientError> {
        self.open_tunnel_at(session, app, "tcpproxy").await
    }

    /// Opens a tunnel to a web app through `httpproxy` (HTTP apps only).
    pub async fn open_http_tunnel(&self, session: &str, app: &str) -> Result<Tunnel, ClientError> {
        self.open_tunnel_at(session, app, "httpproxy").await
    }

    /// Opens a tunnel to `app` through the WebSocket only, as the official client does.
    pub async fn open_ws_tunnel(&self, session: &str, app: &str) -> Result<Tunnel, ClientError> {
        self.ws_tunnel(&tunnel_path(session, app, "tcpproxy")?)
            .await
    }

    async fn ws_tunnel(&self, path: &str) -> Result<Tunnel, ClientError> {
        Ok(Tunnel {
            inner: Carrier::WebSocket(Box::new(self.signed_ws(path).await?)),
        })
    }

    /// A raw tunnel when the manager offers one, else the WebSocket.
    async fn open_tunnel_at(
        &self,
        session: &str,
        app: &str,
        kind: &str,
    ) -> Result<Tunnel, ClientError> {
        let path = tunnel_path(session, app, kind)?;
        match self.open_raw_tunnel(&path).await? {
            Some(t) => Ok(t),
            None => self.ws_tunnel(&path).await,
        }
    }

    /// Asks for a raw tunnel (an HTTP/1.1 upgrade to `bai-tcp`, signed like the WebSocket).
    /// `None`: the server does not know raw tunnels (its answer lacks the raw-tunnel header).
    async fn open_raw_tunnel(&self, path: &str) -> Result<Option<Tunnel>, ClientError> {
        // Raw tunnels are plain TCP; over https the WebSocket carries the tunnel.
        if self.config.is_https() {
            return Ok(None);
        }
        let mut conn = self.raw_connect().await?;
        let extra = format!(
            "Connection: Upgrade\r\nUpgrade: {}\r\n",
            bai_core::RAW_TUNNEL_UPGRADE
        );
        let Some((head, early)) = self.raw_exchange(&mut conn, "GET", path, &extra).await? else {
            return Ok(None);
        };
        if head.get(bai_core::RAW_TUNNEL_HEADER).is_none() {
            return Ok(None);
        }
        if head.status != 101 {
            return Err(self.raw_error(&mut conn, &head, early).await);
        }
        Ok(Some(Tunnel {
            inner: Carrier::Raw {
                conn,
                early: early.freeze(),
            },
        }))
    }

    /// `POST /session/{ref}/download?files=…`: extracts each returned tar part into `dest`;
    /// returns the paths of the entries written.
    pub async fn download_session_files(
        &self,
        session: &str,
        files: &[String],
        dest: &Path,
    ) -> Result<Vec<PathBuf>, ClientError> {
        let query: Vec<String> = files
            .iter()
            .map(|f| format!("files={}", encode::query_value(f)))
            .collect();
        let path = format!(
            "{}?{}",
            session_path(session, "/download")?,
            query.join("&")
        );
        let resp = self
            .dispatch(Method::POST, &path, Some("text/plain"), |r| r.body(""))
            .await?;
        let ct = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|h| h.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let body = resp.bytes().await.map_err(|e| self.connect_error(&e))?;
        let boundary = ct
            .split(';')
            .filter_map(|p| p.trim().strip_prefix("boundary="))
            .next()
            .map(|b| b.trim_matches('"').to_string())
            .ok_or_else(|| ClientError::Protocol(format!("not a multipart reply: {ct:?}")))?;
        let mut written = Vec::new();
        for part in multipart_parts(&body, &boundary)? {
            let mut archive = tar::Archive::new(part);
            let entries = archive
                .entries()
                .map_err(|e| ClientError::Protocol(format!("bad tar part: {e}")))?;
            for entry in entries {
                let mut entry =
                    entry.map_err(|e| ClientError::Protocol(format!("bad tar entry: {e}")))?;
                let rel = entry
                    .path()
                    .map_err(|e| ClientError::Protocol(format!("bad tar path: {e}")))?
                    .into_owned();
                // unpack_in refuses entries that would land outside `dest`.
                let ok = entry.unpack_in(dest).map_err(|err| ClientError::File {
                    what: "write",
                    path: dest.join(&rel).display().to_string(),
                    err,
                })?;
                if ok {
                    written.push(dest.join(rel));
                }
            }
        }
        Ok(written)
    }
}

/// `/stream/session/{ref}/{kind}?app=APP`.
fn tunnel_path(session: &str, app: &str, kind: &str) -> Result<String, ClientError> {
    Ok(format!(
        "/stream{}?app={}",
        session_path(session, &format!("/{kind}"))?,
        encode::query_value(app)
    ))
}

/// The bodies of a `multipart/mixed` reply.
fn multipart_parts<'a>(body: &'a [u8], boundary: &str) -> Result<Vec<&'a [u8]>, ClientError> {
    let delim = format!("--{boundary}");
    let find = |hay: &[u8], needle: &[u8], from: usize| -> Option<usize> {
        hay.get(from..)?
            .windows(needle.len())
            .position(|w| w == needle)
            .map(|p| p + from)
    };
    let bad = || ClientError::Protocol("malformed multipart reply".into());
    let mut parts = Vec::new();
    let mut pos = find(body, delim.as_bytes(), 0).ok_or_else(bad)?;
    loop {
        let after = pos + delim.len();
        if body.get(after..after + 2) == Some(b"--") {
            return Ok(parts);
        }
        let head_end = find(body, b"\r\n\r\n", after).ok_or_else(bad)?;
        let head = String::from_utf8_lossy(&body[after..head_end]).to_ascii_lowercase();
        let start = head_end + 4;
        let len = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok());
        let end = match len {
            Some(n) if start + n <= body.len() => start + n,
            _ => find(body, format!("\r\n{delim}").as_bytes(), start).ok_or_else(bad)?,
        };
        parts.push(&body[start..end]);
        pos = find(body, delim.as_bytes(), end).ok_or_else(bad)?;
    }
}

impl Tunnel {
    /// Whether this is a raw tunnel (not the WebSocket).
    pub fn is_raw(&self) -> bool {
        matches!(self.inner, Carrier::Raw { .. })
    }

    /// Pumps bytes between `conn` and the app until the app's side closes (the local side
    /// closing ends only what goes to the app).
    pub async fn pump(self, conn: tokio::net::TcpStream) -> Result<(), ClientError> {
        let _ = conn.set_nodelay(true);
        match self.inner {
            Carrier::WebSocket(ws) => pump_ws(*ws, conn).await,
            Carrier::Raw {
                conn: server,
                early,
            } => {
                // A broken connection ends the tunnel as the app's end would.
                if bai_relay::write_all_tcp(&conn, &early).await.is_ok() {
                    let _ = bai_relay::tunnel(&conn, &server, |_| {}, |_| {}).await;
                }
                Ok(())
            }
        }
    }
}

async fn pump_ws(ws: Ws, conn: tokio::net::TcpStream) -> Result<(), ClientError> {
    let (mut rd, mut wr) = conn.into_split();
    let (mut ws_tx, mut ws_rx) = ws.split();
    let up = async move {
        let mut buf = vec![0u8; 256 * 1024];
        loop {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if ws_tx
                        .send(Message::Binary(bytes::Bytes::copy_from_slice(&buf[..n])))
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
            }
        }
        let _ = ws_tx.close().await;
    };
    let down = async move {
        while let Some(msg) = ws_rx.next().await {
            match msg {
                Ok(Message::Binary(b)) => {
                    if wr.write_all(&b).await.is_err() {
                        break;
                    }
                }
                Ok(Message::Text(t)) => {
                    if wr.write_all(t.as_bytes()).await.is_err() {
                        break;
                    }
                }
                Ok(Message::Close(frame)) => {
                    if let Some(f) = frame
                        && u16::from(f.code) != 1000
                    {
                        let msg = format!(
                            "HTTP/1.1 503 Service Unavailable\r\n\r\nWebSocket reply: {}",
                            f.reason
                        );
                        let _ = wr.write_all(msg.as_bytes()).await;
                    }
                    break;
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        let _ = wr.shutdown().await;
    };
    tokio::pin!(up, down);
    // The app's side decides: once it is done, so is the connection.
    tokio::select! {
        _ = &mut down => {}
        _ = async { (&mut up).await; std::future::pending::<()>().await } => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipart_parts_are_split_with_and_without_lengths() {
        let body = b"--XYZ\r\nContent-Type: application/x-tar\r\nContent-Length: 5\r\n\r\nhello\r\n--XYZ\r\nContent-Type: application/x-tar\r\n\r\nwor\r\nld\r\n--XYZ--\r\n";
        let parts = multipart_parts(body, "XYZ").unwrap();
        assert_eq!(parts, [&b"hello"[..], &b"wor\r\nld"[..]]);
        assert!(multipart_parts(b"garbage", "XYZ").is_err());
    }
}

//! HTTP/1.1 spoken by hand on a plain TCP connection, for the paths where the connection
//! itself is wanted afterwards: raw tunnels (an upgrade, then the socket is relayed with
//! splice(2)) and data-folder transfers (the file's bytes go between the socket and the file
//! with sendfile(2) / splice(2)).

use crate::{Client, ClientError};
use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The most a response head may take.
const MAX_HEAD: usize = 64 * 1024;
/// The most of an error body that is read.
const MAX_ERROR_BODY: usize = 1 << 20;

/// The status line and headers of a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Head {
    pub status: u16,
    pub headers: Vec<(String, String)>,
}

impl Head {
    /// The first value of header `name` (case-insensitive).
    pub fn get(&self, name: &str) -> Option<&str> {
        crate::request::header(&self.headers, name)
    }

    /// Parses `HTTP/1.x CODE REASON\r\nName: value\r\n…` (without the final empty line).
    fn parse(text: &str) -> Option<Head> {
        let mut lines = text.split("\r\n");
        let status_line = lines.next()?;
        let mut parts = status_line.splitn(3, ' ');
        if !parts.next()?.starts_with("HTTP/1.") {
            return None;
        }
        let status = parts.next()?.parse().ok()?;
        let headers = lines
            .filter(|l| !l.is_empty())
            .map(|l| {
                let (k, v) = l.split_once(':')?;
                Some((k.trim().to_string(), v.trim().to_string()))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Head { status, headers })
    }
}

/// Where the response head ends (the index after `\r\n\r\n`).
fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4)
}

impl Client {
    pub(crate) fn raw_err(&self, e: std::io::Error) -> ClientError {
        ClientError::connect(self.config.endpoint(), &e)
    }

    /// A new TCP connection to the manager (within the connect timeout).
    pub(crate) async fn raw_connect(&self) -> Result<TcpStream, ClientError> {
        self.raw_connect_to(self.config.authority()).await
    }

    /// A new TCP connection to `authority` (`host:port`), within the connect timeout.
    pub(crate) async fn raw_connect_to(&self, authority: &str) -> Result<TcpStream, ClientError> {
        let conn = tokio::time::timeout(self.config.connect_timeout, TcpStream::connect(authority))
            .await
            .map_err(|_| {
                self.raw_err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "connection timed out",
                ))
            })?
            .map_err(|e| self.raw_err(e))?;
        let _ = conn.set_nodelay(true);
        Ok(conn)
    }

    /// Sends a signed `method path_and_query` with `extra` header lines (each ending in
    /// `\r\n`) and no body, then reads the response head. Returns it with the bytes read past
    /// it. `None`: the connection closed before a whole head arrived.
    pub(crate) async fn raw_exchange(
        &self,
        conn: &mut TcpStream,
        method: &str,
        path_and_query: &str,
        extra: &str,
    ) -> Result<Option<(Head, BytesMut)>, ClientError> {
        let mut req = format!(
            "{method} {}{path_and_query} HTTP/1.1\r\nHost: {}\r\n{extra}",
            self.config.path_prefix(),
            self.config.authority()
        );
        for (k, v) in self.sign_headers(method, path_and_query, None).headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        self.raw_request(conn, &req).await
    }

    /// Sends a whole request head (`request`), then reads the response head.
    pub(crate) async fn raw_request(
        &self,
        conn: &mut TcpStream,
        request: &str,
    ) -> Result<Option<(Head, BytesMut)>, ClientError> {
        conn.write_all(request.as_bytes())
            .await
            .map_err(|e| self.raw_err(e))?;
        self.raw_head(conn).await
    }

    /// Reads a response head (within the read timeout, when one is set).
    pub(crate) async fn raw_head(
        &self,
        conn: &mut TcpStream,
    ) -> Result<Option<(Head, BytesMut)>, ClientError> {
        let read = async {
            let mut buf = BytesMut::with_capacity(8192);
            loop {
                if let Some(end) = head_end(&buf) {
                    let text = std::str::from_utf8(&buf[..end - 4])
                        .map_err(|_| ClientError::Protocol("the reply head is not UTF-8".into()))?;
                    let head = Head::parse(text).ok_or_else(|| {
                        ClientError::Protocol(format!("bad reply head: {:?}", text))
                    })?;
                    let rest = buf.split_off(end);
                    return Ok(Some((head, rest)));
                }
                if buf.len() > MAX_HEAD {
                    return Err(ClientError::Protocol("the reply head is too long".into()));
                }
                if conn.read_buf(&mut buf).await.map_err(|e| self.raw_err(e))? == 0 {
                    return Ok(None);
                }
            }
        };
        match self.config.read_timeout {
            Some(t) => tokio::time::timeout(t, read).await.map_err(|_| {
                self.raw_err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "no reply in time",
                ))
            })?,
            None => read.await,
        }
    }

    /// The error a non-2xx reply stands for; its body (by Content-Length, at most 1 MiB) is
    /// `early` and what follows it.
    pub(crate) async fn raw_error(
        &self,
        conn: &mut TcpStream,
        head: &Head,
        early: BytesMut,
    ) -> ClientError {
        let mut body = early;
        if let Some(want) = head
            .get("content-length")
            .and_then(|v| v.parse::<usize>().ok())
            .map(|n| n.min(MAX_ERROR_BODY))
        {
            while body.len() < want {
                match conn.read_buf(&mut body).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
            body.truncate(want);
        }
        ClientError::from_reply(head.status, &Bytes::from(body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_are_parsed() {
        let h = Head::parse(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: bai-tcp\r\nx-bai-tunnel: raw",
        )
        .unwrap();
        assert_eq!(h.status, 101);
        assert_eq!(h.get("X-BAI-Tunnel"), Some("raw"));
        assert_eq!(h.get("upgrade"), Some("bai-tcp"));
        assert!(Head::parse("SSH-2.0-OpenSSH").is_none());
        assert!(Head::parse("HTTP/1.1 200 OK\r\nno colon").is_none());
        assert_eq!(head_end(b"HTTP/1.1 200 OK\r\n\r\nbody"), Some(19));
        assert_eq!(head_end(b"HTTP/1.1 200 OK\r\n"), None);
    }
}

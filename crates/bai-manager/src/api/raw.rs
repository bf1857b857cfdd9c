//! Connections switched away from HTTP for bai's own client (raw app tunnels, raw file
//! transfers): recognising the request, answering `101 Switching Protocols`, and getting the
//! plain TCP socket back from hyper.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use hyper_util::rt::TokioIo;
use hyper_util::server::conn::auto::upgrade::downcast;

/// Whether the request asks to switch to `protocol` (`Upgrade: protocol`).
pub(crate) fn wants(headers: &HeaderMap, protocol: &str) -> bool {
    headers
        .get_all(header::UPGRADE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim().eq_ignore_ascii_case(protocol))
}

/// `101 Switching Protocols` to `protocol`, with `extra` headers.
pub(crate) fn switching(
    protocol: &str,
    extra: &[(&str, String)],
) -> crate::error::ApiResult<Response> {
    let mut b = Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::CONNECTION, "upgrade")
        .header(header::UPGRADE, protocol);
    for (k, v) in extra {
        b = b.header(*k, v);
    }
    Ok(b.body(Body::empty())?)
}

/// A connection after the switch.
pub(crate) enum Switched {
    /// The TCP socket `axum::serve` accepted, with the bytes hyper had read past the request.
    Tcp {
        stream: tokio::net::TcpStream,
        early: Bytes,
    },
    /// Anything else (served some other way): usable through buffers only.
    Other(TokioIo<hyper::upgrade::Upgraded>),
}

/// Waits for the switch (hyper completes it once the 101 is sent).
pub(crate) async fn switched(on: hyper::upgrade::OnUpgrade) -> Result<Switched, hyper::Error> {
    let upgraded = on.await?;
    Ok(match downcast::<TokioIo<tokio::net::TcpStream>>(upgraded) {
        Ok(parts) => Switched::Tcp {
            stream: parts.io.into_inner(),
            early: parts.read_buf,
        },
        Err(upgraded) => Switched::Other(TokioIo::new(upgraded)),
    })
}

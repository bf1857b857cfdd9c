//! Raw transfers of bai's own client: after `101 Switching Protocols` (`Upgrade: bai-file`)
//! the file's bytes go on the bare connection, spliced into the file or sent with
//! sendfile(2) on a blocking thread.

use super::transfers::{upload_reached, write_problem};
use crate::state::Manager;
use bai_core::Problem;
use bai_ground::storage::Transfer;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

/// How long a raw transfer waits for its peer before giving up.
const RAW_IDLE: Duration = Duration::from_secs(120);

/// The blocking socket of a switched connection, for a transfer thread.
fn blocking_socket(stream: tokio::net::TcpStream) -> std::io::Result<std::net::TcpStream> {
    bai_relay::file::into_blocking(stream, RAW_IDLE)
}

/// The answer to a raw upload, written on the connection after its bytes (an HTTP response
/// head, with the problem as its body on failure).
fn raw_answer(result: Result<u64, Problem>) -> Vec<u8> {
    match result {
        Ok(offset) => format!(
            "HTTP/1.1 204 No Content\r\nUpload-Offset: {offset}\r\nTus-Resumable: 1.0.0\r\n\r\n"
        )
        .into_bytes(),
        Err(p) => {
            let body = serde_json::to_vec(&p).unwrap_or_default();
            let mut out = format!(
                "HTTP/1.1 {} Error\r\nContent-Type: application/problem+json\r\nContent-Length: {}\r\n\r\n",
                p.status,
                body.len()
            )
            .into_bytes();
            out.extend_from_slice(&body);
            out
        }
    }
}

/// Receives `len` bytes of a raw upload into `file` at `offset` (splice(2) from the socket
/// into the file on a blocking thread), then answers on the same connection.
pub(super) async fn receive_raw(
    m: Arc<Manager>,
    token: String,
    t: Transfer,
    on: hyper::upgrade::OnUpgrade,
    file: std::fs::File,
    offset: u64,
    len: u64,
) {
    use crate::api::raw::Switched;
    let switched = match crate::api::raw::switched(on).await {
        Ok(s) => s,
        Err(e) => {
            tracing::info!(error = %e, "raw upload: the connection did not switch protocols");
            return;
        }
    };
    let done = |got: u64| -> Result<u64, Problem> {
        let end = offset + got;
        if got < len {
            return Err(Problem::invalid(format!(
                "upload interrupted after {end} bytes; resume at that offset"
            )));
        }
        upload_reached(&m, &token, &t, end);
        Ok(end)
    };
    match switched {
        Switched::Tcp { stream, early } => {
            let sock = match blocking_socket(stream) {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "raw upload: cannot use the connection");
                    return;
                }
            };
            let received = tokio::task::spawn_blocking(move || {
                let got =
                    bai_relay::file::recv_file_after(&sock, &file, offset, &early, len, |_| {});
                (sock, got)
            })
            .await;
            let (mut sock, got) = match received {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!(error = %e, "raw upload thread failed");
                    return;
                }
            };
            if let Ok(n) = &got {
                tracing::info!(bytes = n, mode = "raw", "upload received");
            }
            let answer = raw_answer(got.map_err(|e| write_problem(&e)).and_then(done));
            let _ = tokio::task::spawn_blocking(move || sock.write_all(&answer)).await;
        }
        Switched::Other(mut conn) => {
            use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
            let mut f = tokio::fs::File::from_std(file);
            let got = async {
                f.seek(std::io::SeekFrom::Start(offset)).await?;
                let n = tokio::io::copy(&mut (&mut conn).take(len), &mut f).await?;
                f.flush().await?;
                Ok::<u64, std::io::Error>(n)
            }
            .await;
            let answer = raw_answer(got.map_err(|e| write_problem(&e)).and_then(done));
            let _ = conn.write_all(&answer).await;
            let _ = conn.shutdown().await;
        }
    }
}

/// Sends `len` bytes of `file` on a switched connection (sendfile(2) on a blocking thread).
pub(super) async fn send_raw(on: hyper::upgrade::OnUpgrade, file: std::fs::File, len: u64) {
    use crate::api::raw::Switched;
    let result = match crate::api::raw::switched(on).await {
        Ok(Switched::Tcp { stream, .. }) => match blocking_socket(stream) {
            Ok(sock) => tokio::task::spawn_blocking(move || {
                bai_relay::file::send_file(&sock, &file, 0, len, |_| {})
            })
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string()))),
            Err(e) => Err(e),
        },
        Ok(Switched::Other(mut conn)) => {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut f = tokio::fs::File::from_std(file).take(len);
            let r = tokio::io::copy(&mut f, &mut conn).await;
            let _ = conn.shutdown().await;
            r
        }
        Err(e) => Err(std::io::Error::other(e.to_string())),
    };
    if let Err(e) = result {
        tracing::info!(error = %e, "raw download ended early");
    }
}

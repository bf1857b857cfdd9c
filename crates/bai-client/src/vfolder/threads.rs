//! The plumbing of the transfer threads: a socket handed to a blocking thread and back, and
//! progress reported while one runs.

use crate::{Client, ClientError};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How long a raw transfer waits for the server when no read timeout is configured.
const RAW_IDLE: Duration = Duration::from_secs(120);

impl Client {
    /// Waits for a transfer thread, reporting `done` of `total` about ten times a second.
    pub(super) async fn with_progress<T>(
        &self,
        task: tokio::task::JoinHandle<T>,
        done: &AtomicU64,
        total: u64,
        progress: &mut impl FnMut(u64, u64),
    ) -> Result<T, ClientError> {
        tokio::pin!(task);
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        loop {
            tokio::select! {
                r = &mut task => {
                    return r.map_err(|e| ClientError::Protocol(format!("the transfer thread failed: {e}")));
                }
                _ = tick.tick() => progress(done.load(Ordering::Relaxed), total),
            }
        }
    }

    /// The connection in blocking mode for a transfer thread (every wait bounded).
    pub(super) fn blocking(
        &self,
        conn: tokio::net::TcpStream,
    ) -> Result<std::net::TcpStream, ClientError> {
        let wait = self.config.read_timeout.unwrap_or(RAW_IDLE);
        bai_relay::file::into_blocking(conn, wait).map_err(|e| self.raw_err(e))
    }

    /// A connection back from a transfer thread.
    pub(super) fn nonblocking(
        &self,
        sock: std::net::TcpStream,
    ) -> Result<tokio::net::TcpStream, ClientError> {
        sock.set_nonblocking(true)
            .and_then(|()| tokio::net::TcpStream::from_std(sock))
            .map_err(|e| self.raw_err(e))
    }

    pub(super) fn closed_early(&self) -> ClientError {
        self.raw_err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the server closed the connection",
        ))
    }
}

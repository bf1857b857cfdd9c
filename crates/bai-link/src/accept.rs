//! The manager's side of a new connection: TLS with its identity, then the agent's hello.
//! What to answer is the caller's decision ([`Arrival::admit`] or [`Arrival::refuse`]).

use crate::hello::{self, Hello, HelloError, Welcome};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// How long a new connection may take to finish TLS and say hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection that said hello and waits for its answer.
pub struct Arrival {
    pub hello: Hello,
    pub peer: SocketAddr,
    io: TlsStream<TcpStream>,
}

/// TLS, then the hello (bounded in time: a silent peer cannot hold a task).
pub async fn arrive(
    tcp: TcpStream,
    peer: SocketAddr,
    acceptor: &TlsAcceptor,
) -> Result<Arrival, HelloError> {
    let _ = tcp.set_nodelay(true);
    let handshake = async {
        let mut io = acceptor.accept(tcp).await?;
        let hello: Hello = hello::read(&mut io).await?;
        Ok::<_, HelloError>(Arrival { hello, peer, io })
    };
    tokio::time::timeout(HELLO_TIMEOUT, handshake)
        .await
        .map_err(|_| HelloError::Malformed("no hello in time".into()))?
}

impl Arrival {
    /// Admits the agent (a first join gets its `credential`); the connection is then ready
    /// for a link or a tunnel.
    pub async fn admit(
        mut self,
        credential: Option<String>,
    ) -> Result<TlsStream<TcpStream>, HelloError> {
        hello::write(&mut self.io, &Welcome::Admitted { credential }).await?;
        Ok(self.io)
    }

    /// Refuses with a reason the agent logs; `retry` false tells it to stop.
    pub async fn refuse(mut self, reason: &str, retry: bool) {
        let w = Welcome::Refused {
            reason: reason.to_string(),
            retry,
        };
        let _ = hello::write(&mut self.io, &w).await;
        use tokio::io::AsyncWriteExt;
        let _ = self.io.shutdown().await;
    }
}

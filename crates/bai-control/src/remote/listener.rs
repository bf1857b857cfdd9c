//! The agent listener: TLS with the manager's identity, a hello, the gate's decision, then a
//! control link ([`super::connect`]) or a tunnel handed to whoever asked for it.

use super::Remote;
use super::gate;
use bai_link::hello::Purpose;
use bai_link::{ManagerIdentity, TlsAcceptor, accept};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};

/// Loads (or makes) the manager's identity, binds `addr` and accepts agents from then on.
/// Returns the address bound.
pub async fn start(remote: &Arc<Remote>, addr: SocketAddr) -> Result<SocketAddr, String> {
    let identity = ManagerIdentity::load_or_create(&remote.config.data_dir)?;
    let acceptor = identity.acceptor()?;
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen for agents on {addr}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    let _ = remote.identity.set(identity);
    let _ = remote.listen.set(bound);
    let remote = remote.clone();
    tokio::spawn(async move {
        loop {
            match listener.accept().await {
                Ok((tcp, peer)) => {
                    tokio::spawn(arrived(remote.clone(), tcp, peer, acceptor.clone()));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "accepting an agent connection failed");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            }
        }
    });
    Ok(bound)
}

async fn arrived(remote: Arc<Remote>, tcp: TcpStream, peer: SocketAddr, acceptor: TlsAcceptor) {
    let arrival = match accept::arrive(tcp, peer, &acceptor).await {
        Ok(a) => a,
        Err(e) => {
            tracing::info!(%peer, error = %e, "an agent connection failed its handshake");
            return;
        }
    };
    let hello = arrival.hello.clone();
    let admitted = match gate::admit(&remote, &hello, &peer.to_string()) {
        Ok(a) => a,
        Err(r) => {
            tracing::warn!(%peer, agent = %hello.agent_id, reason = %r.reason, "agent refused");
            arrival.refuse(&r.reason, r.retry).await;
            return;
        }
    };
    match hello.purpose {
        Purpose::Tunnel(id) => {
            if let Ok(io) = arrival.admit(None).await
                && !remote.tunnels.deliver(&hello.agent_id, id, Box::new(io))
            {
                tracing::info!(agent = %hello.agent_id, tunnel = %id, "a tunnel nobody waits for");
            }
        }
        Purpose::Control => match arrival.admit(admitted.new_credential).await {
            Ok(io) => super::connect::connected(&remote, io, hello, peer, admitted.token).await,
            Err(e) => tracing::info!(%peer, error = %e, "an admitted agent went away"),
        },
    }
}

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
    let identity = identity(remote)?;
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

/// The identity agents pin. On PostgreSQL it lives in the database, so every manager of
/// it presents the same certificate and one join token serves them all (the first leader
/// puts its own there); on SQLite it is the data dir's.
fn identity(remote: &Remote) -> Result<ManagerIdentity, String> {
    let local = || ManagerIdentity::load_or_create(&remote.config.data_dir);
    if remote.store.engine() != bai_store::db::Engine::Postgres {
        return local();
    }
    let kept = |key: &str| -> Result<Option<Vec<u8>>, String> {
        let v = remote.store.meta_get(key).map_err(|e| e.to_string())?;
        v.map(|h| hex::decode(h).map_err(|e| format!("{key} in the database: {e}")))
            .transpose()
    };
    if let (Some(cert), Some(key)) = (kept(CERT_KEY)?, kept(KEY_KEY)?) {
        return Ok(ManagerIdentity::from_parts(cert, key));
    }
    // Only the leader listens for agents, so no other manager writes these meanwhile.
    let id = local()?;
    let (cert, key) = id.parts();
    for (k, v) in [(KEY_KEY, key), (CERT_KEY, cert)] {
        remote
            .store
            .meta_set(k, &hex::encode(v))
            .map_err(|e| format!("cannot keep the agent link's identity in the database: {e}"))?;
    }
    Ok(id)
}

/// Where the shared identity is kept (`meta`).
const CERT_KEY: &str = "agent_link_cert";
const KEY_KEY: &str = "agent_link_key";

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

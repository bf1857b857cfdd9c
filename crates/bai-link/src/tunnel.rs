//! App tunnels: the manager never dials a kernel port on the network. For an app connection it
//! asks the agent (over the link) to open tunnel `T`; the agent connects to the kernel port on
//! its own host, dials the manager with a new TLS connection whose hello names `T`, and the
//! two byte streams are joined. [`Tunnels`] pairs the connections the manager waits for with
//! the ones that arrive; [`Listeners`] gives the manager's proxy a loopback address per
//! kernel port that feeds those tunnels.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::oneshot;
use tokio::task::AbortHandle;
use uuid::Uuid;

/// A byte stream of either end of a tunnel.
pub trait TunnelIo: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> TunnelIo for T {}

pub type BoxIo = Box<dyn TunnelIo>;

/// How long the manager waits for the agent to dial back a tunnel it asked for.
pub const DIAL_BACK: Duration = Duration::from_secs(30);

fn lock<T>(lock: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    lock.lock().unwrap_or_else(|p| p.into_inner())
}

/// Tunnels the manager asked for and waits on, each for one agent.
#[derive(Default)]
pub struct Tunnels {
    pending: Mutex<HashMap<Uuid, (String, oneshot::Sender<BoxIo>)>>,
}

impl Tunnels {
    /// A new tunnel id that only `agent_id` may answer, and where its connection arrives.
    pub fn expect(&self, agent_id: &str) -> (Uuid, oneshot::Receiver<BoxIo>) {
        let id = Uuid::new_v4();
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, (agent_id.to_string(), tx));
        (id, rx)
    }

    /// Hands an arrived tunnel connection to whoever waits for it. False (and the connection
    /// dropped) when nobody asked `agent_id` for this tunnel.
    pub fn deliver(&self, agent_id: &str, id: Uuid, io: BoxIo) -> bool {
        let mut pending = lock(&self.pending);
        match pending.get(&id) {
            Some((owner, _)) if owner == agent_id => {}
            _ => return false,
        }
        match pending.remove(&id) {
            Some((_, tx)) => tx.send(io).is_ok(),
            None => false,
        }
    }

    /// Forgets a tunnel nobody answered.
    pub fn forget(&self, id: Uuid) {
        lock(&self.pending).remove(&id);
    }

    pub fn waiting(&self) -> usize {
        lock(&self.pending).len()
    }
}

/// An open listener: its address and its accept task.
type Open = HashMap<(Uuid, u16), (SocketAddr, AbortHandle)>;

/// The loopback listeners that stand for kernel ports, by kernel and port.
#[derive(Default, Clone)]
pub struct Listeners {
    open: Arc<Mutex<Open>>,
}

impl Listeners {
    pub fn get(&self, kernel: Uuid, port: u16) -> Option<SocketAddr> {
        lock(&self.open).get(&(kernel, port)).map(|(a, _)| *a)
    }

    pub fn insert(&self, kernel: Uuid, port: u16, addr: SocketAddr, task: AbortHandle) {
        if let Some((_, old)) = lock(&self.open).insert((kernel, port), (addr, task)) {
            old.abort();
        }
    }

    /// Closes the listeners of one kernel (it was destroyed).
    pub fn close_kernel(&self, kernel: Uuid) {
        lock(&self.open).retain(|(k, _), (_, task)| {
            if *k == kernel {
                task.abort();
            }
            *k != kernel
        });
    }

    /// Closes them all (the link is gone).
    pub fn close_all(&self) {
        for (_, (_, task)) in lock(&self.open).drain() {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_tunnel_is_delivered_only_to_the_agent_that_was_asked() {
        let t = Tunnels::default();
        let (id, rx) = t.expect("node-1");
        let (a, _b) = tokio::io::duplex(64);
        // Another agent cannot answer it, nor can anyone answer an id never asked for.
        assert!(!t.deliver("node-2", id, Box::new(a)));
        let (a, _b) = tokio::io::duplex(64);
        assert!(!t.deliver("node-1", Uuid::new_v4(), Box::new(a)));
        let (a, _b) = tokio::io::duplex(64);
        assert!(t.deliver("node-1", id, Box::new(a)));
        assert!(rx.await.is_ok());
        // Once delivered it is gone.
        let (a, _b) = tokio::io::duplex(64);
        assert!(!t.deliver("node-1", id, Box::new(a)));
        assert_eq!(t.waiting(), 0);
    }
}

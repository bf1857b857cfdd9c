//! Remote agents (`baid agent` on other machines). They dial the manager's agent listener
//! ([`listener`]), are admitted by join token and credential ([`gate`]), are held across
//! reconnects by an [`bai_ground::agents::slot::AgentSlot`], are reconciled when they come back
//! ([`connect`]), and move ALIVE → DISCONNECTED → LOST → GONE when they stay away
//! ([`states`]). Admins mint and revoke tokens and drain or remove agents ([`admin`]).

pub mod admin;
pub mod connect;
pub mod gate;
pub mod listener;
mod lost;
pub mod node_down;
pub mod states;

use crate::lifecycle::Lifecycle;
use bai_ground::agents::Agents;
use bai_ground::bus::Bus;
use bai_ground::config::ManagerConfig;
use bai_link::ManagerIdentity;
use bai_link::tunnel::Tunnels;
use bai_store::Store;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

/// What the remote-agent tasks receive (the store, the registry of agents, the bus, the
/// lifecycle that reconciles a returning agent's sessions and ends a gone one's) and what
/// they keep (the manager's identity, where it listens, the tunnels it waits for).
pub struct Remote {
    pub store: Arc<Store>,
    pub agents: Arc<Agents>,
    pub bus: Arc<Bus>,
    pub config: Arc<ManagerConfig>,
    pub lifecycle: Arc<Lifecycle>,
    /// The certificate agents pin (set when the listener starts).
    pub identity: OnceLock<ManagerIdentity>,
    /// Where agents connect (set when the listener starts).
    pub listen: OnceLock<SocketAddr>,
    /// App tunnels the manager waits for.
    pub tunnels: Arc<Tunnels>,
}

impl Remote {
    /// Remote agents on the lifecycle's ground, not listening yet.
    pub fn new(lifecycle: Arc<Lifecycle>) -> Remote {
        Remote {
            store: lifecycle.store.clone(),
            agents: lifecycle.agents.clone(),
            bus: lifecycle.bus.clone(),
            config: lifecycle.config.clone(),
            lifecycle,
            identity: OnceLock::new(),
            listen: OnceLock::new(),
            tunnels: Arc::default(),
        }
    }

    /// The fingerprint join tokens carry; None when this manager takes no remote agents.
    pub fn fingerprint(&self) -> Option<String> {
        self.identity.get().map(|i| i.fingerprint())
    }
}

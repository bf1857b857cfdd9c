//! Remote agents (`baid agent` on other machines). They dial the manager's agent listener
//! ([`listener`]), are admitted by join token and credential ([`gate`]), are held across
//! reconnects by an [`slot::AgentSlot`], are reconciled when they come back
//! ([`connect`]), and move ALIVE → DISCONNECTED → LOST → GONE when they stay away
//! ([`states`]). Admins mint and revoke tokens and drain or remove agents ([`admin`]).

pub mod admin;
pub mod connect;
pub mod gate;
pub mod listener;
pub mod slot;
pub mod states;

use bai_link::ManagerIdentity;
use bai_link::tunnel::Tunnels;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

/// What the manager keeps for remote agents.
#[derive(Default)]
pub struct Remote {
    /// The certificate agents pin (set when the listener starts).
    pub identity: OnceLock<ManagerIdentity>,
    /// Where agents connect (set when the listener starts).
    pub listen: OnceLock<SocketAddr>,
    /// App tunnels the manager waits for.
    pub tunnels: Arc<Tunnels>,
}

impl Remote {
    /// The fingerprint join tokens carry; None when this manager takes no remote agents.
    pub fn fingerprint(&self) -> Option<String> {
        self.identity.get().map(|i| i.fingerprint())
    }
}

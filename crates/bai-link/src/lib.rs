//! The link between the manager and a remote agent.
//!
//! The agent dials the manager (so a node behind NAT works) and keeps one TLS connection
//! open. The agent trusts exactly one certificate: the one whose SHA-256 its join token
//! carries ([`pin`]); the manager knows the agent by the credential it sends first, never by
//! its address. Over the connection, [`conn::Link`] multiplexes calls in both directions as
//! numbered streams of frames ([`frame`]), with explicit keepalive pings; [`rpc`] carries the
//! agent RPC interface (`bai_core::agent::AgentRpc`) over it: [`remote::RemoteAgent`] on the
//! manager's side, [`serve::serve`] on the agent's. A connection starts with a [`hello`];
//! [`join::run`] is the agent's whole side (dial, serve, dial again), and app connections
//! travel through [`tunnel`]s the agent dials back.
#![forbid(unsafe_code)]

pub mod accept;
pub mod conn;
pub mod credential;
pub mod frame;
pub mod hello;
pub mod identity;
pub mod join;
pub mod memory;
pub mod pin;
pub mod remote;
pub mod rpc;
pub mod serve;
pub mod token;
pub mod tunnel;

pub use conn::{Inbound, Link, LinkError, Side};
pub use identity::ManagerIdentity;
pub use token::JoinToken;
pub use tokio_rustls::TlsAcceptor;

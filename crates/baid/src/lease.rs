//! The manager lease's name and lifetime: the leader keeps it ([`crate::lead`]), the
//! standbys watch how late its renewal is ([`crate::standby`]).

use std::time::Duration;

/// The lease's name.
pub const LEASE: &str = "manager";
/// How long a lease lasts without a renewal: a dead leader's lease is taken over this long
/// after its last renewal.
pub const TTL: Duration = Duration::from_secs(5);

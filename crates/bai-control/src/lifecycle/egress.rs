//! The egress spec a session's kernels start under: its resource group's policy at launch
//! (recorded on the session, which its detail shows) and the cluster's nodes, which the
//! `default` policy closes to kernels (each agent at the address its link comes from, the
//! manager's host as [`PEER_MANAGER`]).

use super::Lifecycle;
use super::overlay::underlay_of;
use bai_core::cluster::PEER_MANAGER;
use bai_core::egress::{EgressPolicy, EgressSpec};
use bai_store::SessionRow;

/// The group's policy now (the default policy, never `open`, when it cannot be read).
pub fn policy_of(lifecycle: &Lifecycle, row: &SessionRow) -> EgressPolicy {
    match lifecycle.store.resource_group(&row.spec.scaling_group) {
        Ok(Some(g)) => g.egress,
        Ok(None) => EgressPolicy::default(),
        Err(e) => {
            tracing::warn!(session = %row.id, error = %e, "cannot read the group's egress policy; the default one applies");
            EgressPolicy::default()
        }
    }
}

/// `policy` with the cluster's nodes as they are now.
pub fn spec(lifecycle: &Lifecycle, policy: EgressPolicy) -> EgressSpec {
    let mut nodes = vec![PEER_MANAGER.to_string()];
    for a in lifecycle.agents.all() {
        let n = underlay_of(&a);
        if !nodes.contains(&n) {
            nodes.push(n);
        }
    }
    EgressSpec { policy, nodes }
}

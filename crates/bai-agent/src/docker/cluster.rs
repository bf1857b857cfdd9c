//! What a kernel of a cluster session gets on this node besides its container: the
//! session's bridge network (its kernels reach each other there by hostname, and reach no
//! other session's kernels, which sit on other bridges), and the session's SSH key pair with
//! a client configuration ([`crate::kernel_files::cluster`], shared with the Kubernetes
//! backend), so `ssh sub1` and `mpirun -H main1,sub1` work without a password. The networks
//! themselves are made and removed in `netpool`.

use bai_core::agent::AgentError;
use bai_core::cluster::ClusterInfo;
use bollard::models::{EndpointIpamConfig, EndpointSettings, NetworkingConfig};
use std::collections::HashMap;
use std::path::Path;

/// The container's network settings: on the session's network under its hostname (at its
/// fixed address, in a multi-node session).
pub fn networking(cluster: &ClusterInfo) -> Option<(String, NetworkingConfig)> {
    let name = cluster.network.clone()?;
    let endpoint = EndpointSettings {
        aliases: Some(vec![cluster.place.hostname.clone()]),
        ipam_config: cluster.overlay.as_ref().map(|o| EndpointIpamConfig {
            ipv4_address: Some(o.address.to_string()),
            ..Default::default()
        }),
        ..Default::default()
    };
    Some((
        name.clone(),
        NetworkingConfig {
            endpoints_config: Some(HashMap::from([(name, endpoint)])),
        },
    ))
}

/// A multi-node session's host entries: every kernel's hostname and address (the engine's
/// name service knows only the kernels on this node).
pub fn extra_hosts(cluster: &ClusterInfo) -> Option<Vec<String>> {
    let o = cluster.overlay.as_ref()?;
    Some(o.hosts.iter().map(|(h, a)| format!("{h}:{a}")).collect())
}

/// Writes the session's keys into the kernel's run directory and returns the binds that
/// put them where the kernel's ssh and sshd look ([`crate::kernel_files::cluster`]).
pub fn ssh_binds(run: &Path, cluster: &ClusterInfo) -> Result<Vec<String>, AgentError> {
    Ok(crate::kernel_files::cluster::ssh_files(run, cluster)?
        .into_iter()
        .map(|(host, inside)| format!("{}:{inside}:ro", host.display()))
        .collect())
}

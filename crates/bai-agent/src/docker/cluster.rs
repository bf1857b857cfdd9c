//! What a kernel of a cluster session gets on this node besides its container: the
//! session's bridge network (its kernels reach each other there by hostname, and reach no
//! other session's kernels, which sit on other bridges), and the session's SSH key pair with
//! a client configuration, so `ssh sub1` and `mpirun -H main1,sub1` work without a password.

use super::{Inner, LABEL_AGENT, LABEL_SESSION, overlay};
use crate::error::{is_not_found, runtime};
use bai_core::agent::{AgentError, KernelSpec};
use bai_core::cluster::ClusterInfo;
use bollard::models::{
    EndpointIpamConfig, EndpointSettings, NetworkCreateRequest, NetworkingConfig,
};
use std::collections::HashMap;
use std::path::Path;

/// Label on containers (the network they are on) and on networks bai made.
pub const LABEL_NETWORK: &str = "ai.bai.network";

/// Where the agent puts the session's private key inside the kernel (Backend.AI's path,
/// which scripts written for it use) and the SSH client configuration.
const KEY_IN_KERNEL: &str = "/home/config/ssh/id_cluster";
const SSH_CONFIG_IN_KERNEL: &str = "/etc/ssh/ssh_config.d/bai-cluster.conf";

/// Makes the session's bridge network unless it exists (kernels of one session are made
/// concurrently: one makes it, the others find it made).
pub async fn ensure_network(
    inner: &Inner,
    spec: &KernelSpec,
    name: &str,
) -> Result<(), AgentError> {
    let _one_at_a_time = inner.networks.lock().await;
    if inner.docker.inspect_network(name, None).await.is_ok() {
        return Ok(());
    }
    let overlay = spec.cluster.as_ref().and_then(|c| c.overlay.as_ref());
    let (options, ipam) = match overlay {
        Some(o) => {
            let (options, ipam) = overlay::network_settings(spec.session_id, o);
            (Some(options), Some(ipam))
        }
        None => (None, None),
    };
    let req = NetworkCreateRequest {
        name: name.to_string(),
        driver: Some("bridge".into()),
        options,
        ipam,
        labels: Some(HashMap::from([
            (LABEL_AGENT.to_string(), inner.config.agent_id.clone()),
            (LABEL_SESSION.to_string(), spec.session_id.to_string()),
            (LABEL_NETWORK.to_string(), name.to_string()),
        ])),
        ..Default::default()
    };
    if let Err(e) = inner.docker.create_network(req).await {
        return Err(runtime(format_args!("cannot make network {name}"), e));
    }
    tracing::info!(network = name, session = %spec.session_id, "cluster network made");
    if let Some(o) = overlay
        && let Err(e) = overlay::join(inner, spec.session_id, o).await
    {
        release_network(inner, name).await;
        return Err(e);
    }
    Ok(())
}

/// Removes a session's network once no container is on it (the last kernel's removal
/// removes it; the others are refused by the engine, which is fine).
pub async fn release_network(inner: &Inner, name: &str) {
    match inner.docker.remove_network(name).await {
        Ok(()) => {
            tracing::info!(network = name, "cluster network removed");
            if let Some(session) = name
                .strip_prefix("bai-cluster-")
                .and_then(|s| uuid::Uuid::parse_str(s).ok())
            {
                overlay::leave(session).await;
            }
        }
        Err(e) if is_not_found(&e) => {}
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 403 | 409,
            ..
        }) => {}
        Err(e) => tracing::warn!(network = name, error = %e, "cannot remove cluster network"),
    }
}

/// Removes this agent's cluster networks that no container uses (after a crash).
pub async fn prune_networks(inner: &Inner) {
    let filters = HashMap::from([(
        "label".to_string(),
        vec![format!("{LABEL_AGENT}={}", inner.config.agent_id)],
    )]);
    let opts = bollard::query_parameters::PruneNetworksOptions {
        filters: Some(filters),
    };
    if let Err(e) = inner.docker.prune_networks(Some(opts)).await {
        tracing::warn!(error = %e, "cannot prune cluster networks");
    }
    overlay::prune().await;
}

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

/// The SSH client configuration for the session's hosts.
fn ssh_config() -> String {
    format!(
        "# Made by bai for this cluster session: ssh main1, ssh sub1, … with the session's key.\n\
         Host main* sub*\n\
         \x20   Port {port}\n\
         \x20   IdentityFile {KEY_IN_KERNEL}\n\
         \x20   StrictHostKeyChecking no\n\
         \x20   UserKnownHostsFile /dev/null\n\
         \x20   LogLevel ERROR\n",
        port = bai_core::cluster::SSH_PORT
    )
}

fn write_private(path: &Path, text: &str, mode: u32) -> Result<(), AgentError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text)
        .map_err(|e| runtime(format_args!("cannot write {}", path.display()), e))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| runtime(format_args!("cannot chmod {}", path.display()), e))?;
    std::os::unix::fs::chown(path, Some(super::WORK_UID), Some(super::WORK_UID))
        .map_err(|e| runtime(format_args!("cannot chown {}", path.display()), e))
}

/// Writes the session's keys into the kernel's run directory and returns the binds that
/// put them where the kernel's ssh and sshd look: the private key at Backend.AI's path, the
/// client configuration, and the public key among the keys sshd accepts
/// (`cluster_authorized_keys` in the run directory, which krunner's sshd reads).
pub fn ssh_binds(run: &Path, cluster: &ClusterInfo) -> Result<Vec<String>, AgentError> {
    let Some(keys) = &cluster.keys else {
        return Ok(Vec::new());
    };
    let key = run.join("id_cluster");
    write_private(&key, &keys.private_key, 0o600)?;
    write_private(&run.join("id_cluster.pub"), &keys.public_key, 0o644)?;
    write_private(
        &run.join("cluster_authorized_keys"),
        &keys.public_key,
        0o600,
    )?;
    let cfg = run.join("ssh_cluster.conf");
    write_private(&cfg, &ssh_config(), 0o644)?;
    Ok(vec![
        format!("{}:{KEY_IN_KERNEL}:ro", key.display()),
        format!(
            "{}:{KEY_IN_KERNEL}.pub:ro",
            run.join("id_cluster.pub").display()
        ),
        format!("{}:{SSH_CONFIG_IN_KERNEL}:ro", cfg.display()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ssh_config_points_at_port_2200_and_the_session_key() {
        let c = ssh_config();
        assert!(c.contains("Host main* sub*\n"));
        assert!(c.contains("    Port 2200\n"));
        assert!(c.contains("    IdentityFile /home/config/ssh/id_cluster\n"));
        assert!(c.contains("    StrictHostKeyChecking no\n"));
    }
}

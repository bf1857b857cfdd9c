//! What a kernel of a cluster session gets on this node besides its container: the
//! session's bridge network (its kernels reach each other there by hostname, and reach no
//! other session's kernels, which sit on other bridges), and the session's SSH key pair with
//! a client configuration, so `ssh sub1` and `mpirun -H main1,sub1` work without a password.
//! The networks themselves are made and removed in `netpool`.

use crate::error::runtime;
use bai_core::agent::AgentError;
use bai_core::cluster::ClusterInfo;
use bollard::models::{EndpointIpamConfig, EndpointSettings, NetworkingConfig};
use std::collections::HashMap;
use std::path::Path;

/// Where the agent puts the session's private key inside the kernel (Backend.AI's path,
/// which scripts written for it use) and the SSH client configuration.
const KEY_IN_KERNEL: &str = "/home/config/ssh/id_cluster";
const SSH_CONFIG_IN_KERNEL: &str = "/etc/ssh/ssh_config.d/bai-cluster.conf";

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
    std::os::unix::fs::chown(
        path,
        Some(crate::kernel_files::WORK_UID),
        Some(crate::kernel_files::WORK_UID),
    )
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

//! A cluster session's files in each of its kernels, the same on both backends:
//! - the session's SSH key pair and client configuration, so `ssh sub1` and
//!   `mpirun -H main1,sub1` work without a password ([`ssh_files`]);
//! - where the kernels have no name service that knows their siblings (pods without
//!   cluster DNS), the session's host table ([`hosts_text`], [`HOSTS_FILE`]): every kernel's
//!   hostname at its address, rewritten in place as kernels come up.

use crate::error::runtime;
use bai_core::agent::AgentError;
use bai_core::cluster::ClusterInfo;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// Where the agent puts the session's private key inside the kernel (Backend.AI's path,
/// which scripts written for it use) and the SSH client configuration.
const KEY_IN_KERNEL: &str = "/home/config/ssh/id_cluster";
const PUB_IN_KERNEL: &str = "/home/config/ssh/id_cluster.pub";
const SSH_CONFIG_IN_KERNEL: &str = "/etc/ssh/ssh_config.d/bai-cluster.conf";

/// The host table's name in the kernel's run directory (mounted at `/etc/hosts`).
pub const HOSTS_FILE: &str = "hosts";

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

/// Writes `text` as the work user's file of `mode` (in place: a file mounted into a
/// running kernel keeps its inode, so the kernel sees the new text).
fn write_private(path: &Path, text: &str, mode: u32) -> Result<(), AgentError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text)
        .map_err(|e| runtime(format_args!("cannot write {}", path.display()), e))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| runtime(format_args!("cannot chmod {}", path.display()), e))?;
    super::hand_to_work_user(path)
}

/// One of a cluster session's SSH files: its name in the kernel's run directory, its text
/// and mode, and where it goes inside the kernel (read-only), or `None` for the one that
/// stays in the run directory (`cluster_authorized_keys`, which krunner's sshd reads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshFile {
    pub name: &'static str,
    pub text: String,
    pub mode: u32,
    pub inside: Option<&'static str>,
}

/// The session's SSH files: the private key at Backend.AI's path, its public half, the
/// client configuration, and the public key among those the kernel's sshd accepts. Nothing
/// for a session of one kernel.
pub fn ssh_set(cluster: &ClusterInfo) -> Vec<SshFile> {
    let Some(keys) = &cluster.keys else {
        return Vec::new();
    };
    let file = |name, text: &str, mode, inside| SshFile {
        name,
        text: text.to_string(),
        mode,
        inside,
    };
    vec![
        file("id_cluster", &keys.private_key, 0o600, Some(KEY_IN_KERNEL)),
        file(
            "id_cluster.pub",
            &keys.public_key,
            0o644,
            Some(PUB_IN_KERNEL),
        ),
        file("cluster_authorized_keys", &keys.public_key, 0o600, None),
        file(
            "ssh_cluster.conf",
            &ssh_config(),
            0o644,
            Some(SSH_CONFIG_IN_KERNEL),
        ),
    ]
}

/// Writes the session's SSH files ([`ssh_set`]) into the kernel's run directory `run` and
/// returns where each that goes elsewhere is on the node and where it goes inside the kernel.
pub fn ssh_files(
    run: &Path,
    cluster: &ClusterInfo,
) -> Result<Vec<(PathBuf, &'static str)>, AgentError> {
    let mut out = Vec::new();
    for f in ssh_set(cluster) {
        let path = run.join(f.name);
        write_private(&path, &f.text, f.mode)?;
        if let Some(inside) = f.inside {
            out.push((path, inside));
        }
    }
    Ok(out)
}

/// The host table of a session whose kernels are at `hosts` (hostname, address; those
/// whose address is not known yet are left out), as the engine's own `/etc/hosts` reads.
pub fn hosts_text(hosts: &[(String, IpAddr)]) -> String {
    let mut out = String::from(
        "# Made by bai for this cluster session: its kernels by hostname.\n\
         127.0.0.1\tlocalhost\n\
         ::1\tlocalhost ip6-localhost ip6-loopback\n",
    );
    for (name, addr) in hosts {
        out.push_str(&format!("{addr}\t{name}\n"));
    }
    out
}

/// Writes the session's host table into a kernel's run directory (in place).
pub fn write_hosts(run: &Path, hosts: &[(String, IpAddr)]) -> Result<PathBuf, AgentError> {
    let path = run.join(HOSTS_FILE);
    write_private(&path, &hosts_text(hosts), 0o644)?;
    Ok(path)
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

    #[test]
    fn the_host_table_names_each_kernel_at_its_address() {
        let t = hosts_text(&[
            ("main1".into(), "10.0.0.5".parse().unwrap()),
            ("sub1".into(), "10.0.0.6".parse().unwrap()),
        ]);
        let lines: Vec<&str> = t.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            lines,
            vec![
                "127.0.0.1\tlocalhost",
                "::1\tlocalhost ip6-localhost ip6-loopback",
                "10.0.0.5\tmain1",
                "10.0.0.6\tsub1"
            ]
        );
    }
}

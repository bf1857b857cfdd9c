//! A multi-node session's network on this node: the session's bridge (made by the engine,
//! under a name bai picks, with the session's subnet and this node's gateway in it) joined to
//! the same bridge on the other nodes by a VXLAN device (the session's id, UDP 4789 to each
//! other node). Kernels on any node are then on one Ethernet segment, and on nothing else of
//! other sessions (each has its own id and bridge).
//!
//! The links are made with iproute2 (`ip`, `bridge`), the seam to the OS: the agent runs as
//! root beside its engine, in the engine's network namespace.

use super::Inner;
use crate::error::runtime;
use bai_core::agent::AgentError;
use bai_core::cluster::{Overlay, PEER_MANAGER, VXLAN_PORT};
use bollard::models::{Ipam, IpamConfig};
use std::collections::HashMap;
use uuid::Uuid;

/// What the tunnel costs of every packet (VXLAN over IPv4 and UDP).
pub const MTU: u32 = 1450;

fn short(session: Uuid) -> String {
    session.simple().to_string()[..12].to_string()
}

/// The session's bridge on this node (15 characters at most, as Linux allows).
pub fn bridge_name(session: Uuid) -> String {
    format!("bbr{}", short(session))
}

/// The session's VXLAN device on this node.
pub fn vxlan_name(session: Uuid) -> String {
    format!("bvx{}", short(session))
}

/// The engine's options and address plan for the session's network.
pub fn network_settings(session: Uuid, o: &Overlay) -> (HashMap<String, String>, Ipam) {
    let options = HashMap::from([
        (
            "com.docker.network.bridge.name".to_string(),
            bridge_name(session),
        ),
        ("com.docker.network.driver.mtu".to_string(), MTU.to_string()),
    ]);
    let ipam = Ipam {
        config: Some(vec![IpamConfig {
            subnet: Some(o.subnet.clone()),
            gateway: Some(o.gateway.to_string()),
            ..Default::default()
        }]),
        ..Default::default()
    };
    (options, ipam)
}

/// The commands that join the session's bridge to the other nodes (`peers` resolved).
pub fn join_commands(session: Uuid, vni: u32, peers: &[String]) -> Vec<Vec<String>> {
    let vx = vxlan_name(session);
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<String>>();
    let mut out = vec![
        s(&[
            "ip",
            "link",
            "add",
            &vx,
            "type",
            "vxlan",
            "id",
            &vni.to_string(),
            "dstport",
            &VXLAN_PORT.to_string(),
        ]),
        s(&["ip", "link", "set", &vx, "mtu", &MTU.to_string()]),
        s(&["ip", "link", "set", &vx, "master", &bridge_name(session)]),
        s(&["ip", "link", "set", &vx, "up"]),
    ];
    for p in peers {
        out.push(s(&[
            "bridge",
            "fdb",
            "append",
            "00:00:00:00:00:00",
            "dev",
            &vx,
            "dst",
            p,
        ]));
    }
    out
}

async fn run(cmd: &[String]) -> Result<(), AgentError> {
    let out = tokio::process::Command::new(&cmd[0])
        .args(&cmd[1..])
        .output()
        .await
        .map_err(|e| runtime(format_args!("cannot run {}", cmd[0]), e))?;
    if out.status.success() {
        return Ok(());
    }
    Err(AgentError::Runtime(format!(
        "`{}` failed: {}",
        cmd.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    )))
}

/// Where a peer receives the tunnel: its address, or for [`PEER_MANAGER`] the manager's host
/// as this agent dials it.
pub(super) async fn resolve(inner: &Inner, peer: &str) -> Result<String, AgentError> {
    if peer != PEER_MANAGER {
        return Ok(peer.to_string());
    }
    let Some(host) = inner.config.manager_host.as_deref() else {
        return Err(AgentError::BadRequest(
            "a kernel peer is on the manager's host, but this agent does not know the manager's address".into(),
        ));
    };
    let addrs = tokio::net::lookup_host((host, VXLAN_PORT))
        .await
        .map_err(|e| runtime(format_args!("cannot resolve the manager's host {host}"), e))?;
    addrs
        .map(|a| a.ip().to_string())
        .next()
        .ok_or_else(|| AgentError::Runtime(format!("the manager's host {host} has no address")))
}

/// Joins the session's bridge (just made by the engine) to the other nodes.
pub async fn join(inner: &Inner, session: Uuid, o: &Overlay) -> Result<(), AgentError> {
    let mut peers = Vec::new();
    for p in &o.peers {
        peers.push(resolve(inner, p).await?);
    }
    // A device left by a crash goes first: it would hold the old peers.
    leave(session).await;
    for cmd in join_commands(session, o.vni, &peers) {
        run(&cmd).await?;
    }
    tracing::info!(%session, vni = o.vni, peers = ?peers, "overlay joined");
    Ok(())
}

/// Removes the session's VXLAN device (with the last kernel; none there is fine).
pub async fn leave(session: Uuid) {
    let vx = vxlan_name(session);
    let cmd: Vec<String> = ["ip", "link", "del", &vx].map(String::from).to_vec();
    if run(&cmd).await.is_ok() {
        tracing::info!(%session, device = vx, "overlay left");
    }
}

/// Removes VXLAN devices of bai whose bridge is gone (after a crash).
pub async fn prune() {
    let Ok(out) = tokio::process::Command::new("ip")
        .args(["-o", "link", "show", "type", "vxlan"])
        .output()
        .await
    else {
        return;
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some(name) = line.split(':').nth(1).map(|n| n.trim()) else {
            continue;
        };
        let name = name.split('@').next().unwrap_or(name);
        if name.starts_with("bvx") && !line.contains(" master bbr") {
            let cmd: Vec<String> = ["ip", "link", "del", name].map(String::from).to_vec();
            if let Err(e) = run(&cmd).await {
                tracing::warn!(device = name, error = %e, "cannot remove a stale overlay device");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_linux_and_commands_name_every_peer() {
        let s = Uuid::new_v4();
        assert!(bridge_name(s).len() <= 15 && vxlan_name(s).len() <= 15);
        assert_ne!(bridge_name(s), vxlan_name(s));
        let cmds = join_commands(s, 0x10_0007, &["10.0.0.2".into(), "10.0.0.3".into()]);
        let first = cmds[0].join(" ");
        assert!(
            first.contains("type vxlan id 1048583 dstport 4789"),
            "{first}"
        );
        let fdb: Vec<String> = cmds
            .iter()
            .filter(|c| c[0] == "bridge")
            .map(|c| c.last().cloned().unwrap_or_default())
            .collect();
        assert_eq!(fdb, vec!["10.0.0.2", "10.0.0.3"]);
        assert!(
            cmds.iter()
                .any(|c| c.join(" ").ends_with(&format!("master {}", bridge_name(s))))
        );
    }
}

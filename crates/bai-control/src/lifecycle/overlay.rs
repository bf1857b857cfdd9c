//! The overlay network of a multi-node session: which subnet and VXLAN id it holds, each
//! kernel's address, each agent's bridge address, and where each agent sends the session's
//! tunnelled traffic (the other agents that hold its kernels).

use bai_core::cluster::{
    OVERLAY_SUBNETS, Overlay, PEER_MANAGER, overlay_address, overlay_gateway, overlay_subnet,
    overlay_vni,
};
use bai_ground::agents::AgentHandle;

/// Where an agent receives VXLAN traffic: a remote agent at the address its link comes from;
/// the in-process agent on the manager's host, [`PEER_MANAGER`], which each remote agent
/// resolves to the address it dials.
pub fn underlay_of(agent: &AgentHandle) -> String {
    match &agent.remote {
        None => PEER_MANAGER.to_string(),
        Some(slot) => {
            let addr = slot
                .address
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            addr.parse::<std::net::SocketAddr>()
                .map(|a| a.ip().to_string())
                .unwrap_or(addr)
        }
    }
}

/// The overlay of every kernel, main1 first: `kernels[i]` is kernel i's `(agent id, agent
/// underlay address)`.
pub fn plan(slot: u32, hosts: &[String], kernels: &[(String, String)]) -> Vec<Overlay> {
    let net = overlay_subnet(slot);
    let mut agents: Vec<&(String, String)> = Vec::new();
    for k in kernels {
        if !agents.iter().any(|a| a.0 == k.0) {
            agents.push(k);
        }
    }
    let addresses: Vec<(String, std::net::Ipv4Addr)> = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| (h.clone(), overlay_address(net, i as u32)))
        .collect();
    kernels
        .iter()
        .enumerate()
        .map(|(i, (agent, _))| {
            let ordinal = agents.iter().position(|a| &a.0 == agent).unwrap_or(0);
            Overlay {
                vni: overlay_vni(slot),
                subnet: format!("{}.{}.{}.0/24", net[0], net[1], net[2]),
                gateway: overlay_gateway(net, ordinal as u32),
                address: overlay_address(net, i as u32),
                hosts: addresses.clone(),
                peers: agents
                    .iter()
                    .filter(|a| &a.0 != agent)
                    .map(|a| a.1.clone())
                    .collect(),
            }
        })
        .collect()
}

/// How many sessions can hold an overlay at once.
pub const SLOTS: u32 = OVERLAY_SUBNETS;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_agent_gets_its_own_gateway_and_the_others_as_peers() {
        let hosts: Vec<String> = ["main1", "sub1", "sub2"].map(String::from).to_vec();
        let kernels = vec![
            ("a".to_string(), "10.0.0.1".to_string()),
            ("b".to_string(), "10.0.0.2".to_string()),
            ("a".to_string(), "10.0.0.1".to_string()),
        ];
        let o = plan(7, &hosts, &kernels);
        assert_eq!(o.len(), 3);
        assert!(
            o.iter()
                .all(|k| k.subnet == "10.224.7.0/24" && k.vni == o[0].vni)
        );
        let addrs: Vec<String> = o.iter().map(|k| k.address.to_string()).collect();
        assert_eq!(addrs, ["10.224.7.10", "10.224.7.11", "10.224.7.12"]);
        // Kernels on one agent share its gateway; the other agent has another.
        assert_eq!(o[0].gateway, o[2].gateway);
        assert_ne!(o[0].gateway, o[1].gateway);
        assert_eq!(o[0].peers, vec!["10.0.0.2"]);
        assert_eq!(o[1].peers, vec!["10.0.0.1"]);
        assert_eq!(o[1].hosts[2].0, "sub2");
        assert_eq!(o[1].hosts[2].1.to_string(), "10.224.7.12");
    }
}

//! Cluster sessions: several kernels (containers) per session, named and numbered as
//! Backend.AI names them, because user scripts (MPI host lists, `torchrun`) depend on it:
//! `main1` (role `main`, index 1, local rank 0) and `sub1` … `subN-1` (role `sub`, index and
//! local rank i).

use crate::problem::Problem;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use uuid::Uuid;

/// The most kernels one session may have, whatever a policy says.
pub const MAX_CLUSTER_SIZE: u32 = 64;
/// A session's `clusterSize`: 1 to [`MAX_CLUSTER_SIZE`] (the owner's policy is the
/// lifecycle's). A size over bai's bound is "unavailable", as an over-limit size is in
/// Backend.AI.
pub fn check_size(n: u32) -> Result<u32, Problem> {
    match n {
        0 => Err(Problem::invalid(format!(
            "clusterSize 0 is invalid: use a whole number from 1 to {MAX_CLUSTER_SIZE}"
        ))),
        n if n <= MAX_CLUSTER_SIZE => Ok(n),
        n => Err(Problem::new(
            400,
            "too-many-containers",
            "Too many containers.",
            format!(
                "the session asks for {n} containers, but a session has at most {MAX_CLUSTER_SIZE}"
            ),
        )
        .with_code("session_create_unavailable")),
    }
}

/// Where every kernel's sshd listens (Backend.AI's port; `~/.ssh/config` of kernels says so).
pub const SSH_PORT: u16 = 2200;

/// Where a kernel's runner listens on the pod network for an agent that does not share its
/// node (the Kubernetes backend's `--runner-reach network`); in Backend.AI's range of the
/// kernel runner's own ports (2000–2003), which no preopen port may take.
pub const RUNNER_PORT: u16 = 2001;

/// How the kernels of a session are spread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ClusterMode {
    // (A bridge network of their own joins them.)
    /// All kernels on one agent.
    #[default]
    #[serde(rename = "single-node")]
    SingleNode,
    /// Kernels spread over several agents of the resource group, on an overlay network.
    #[serde(rename = "multi-node")]
    MultiNode,
}

impl ClusterMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ClusterMode::SingleNode => "single-node",
            ClusterMode::MultiNode => "multi-node",
        }
    }
}

impl std::fmt::Display for ClusterMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ClusterMode {
    type Err = String;
    /// Accepts the spellings clients send: `single-node`, `single_node`, `SINGLE_NODE`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "single-node" => Ok(ClusterMode::SingleNode),
            "multi-node" => Ok(ClusterMode::MultiNode),
            _ => Err(format!(
                "cluster mode {s:?} is unknown: use single-node or multi-node"
            )),
        }
    }
}

/// A kernel's part in its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusterRole {
    Main,
    Sub,
}

impl ClusterRole {
    pub fn as_str(self) -> &'static str {
        match self {
            ClusterRole::Main => "main",
            ClusterRole::Sub => "sub",
        }
    }
}

/// Where one kernel stands in its session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelPlace {
    pub kernel_id: Uuid,
    pub role: ClusterRole,
    /// 1 for main1, i for sub i.
    pub idx: u32,
    /// 0 for main1, i for sub i.
    pub local_rank: u32,
    /// `main1`, `sub1`, …: the container's hostname and its name on the session's network.
    pub hostname: String,
}

/// The kernels of a session of `1 + subs.len()` kernels, main first.
pub fn layout(main: Uuid, subs: &[Uuid]) -> Vec<KernelPlace> {
    let mut out = vec![KernelPlace {
        kernel_id: main,
        role: ClusterRole::Main,
        idx: 1,
        local_rank: 0,
        hostname: "main1".into(),
    }];
    for (i, id) in subs.iter().enumerate() {
        let i = i as u32 + 1;
        out.push(KernelPlace {
            kernel_id: *id,
            role: ClusterRole::Sub,
            idx: i,
            local_rank: i,
            hostname: format!("sub{i}"),
        });
    }
    out
}

/// The session's key pair for SSH between its kernels (OpenSSH formats).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterKeys {
    /// `-----BEGIN OPENSSH PRIVATE KEY-----` …
    pub private_key: String,
    /// `ssh-ed25519 AAAA… comment`
    pub public_key: String,
}

impl std::fmt::Debug for ClusterKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterKeys")
            .field("public_key", &self.public_key)
            .field("private_key", &"<hidden>")
            .finish()
    }
}

/// What a kernel knows of its session's cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterInfo {
    pub mode: ClusterMode,
    pub size: u32,
    pub place: KernelPlace,
    /// Every kernel's hostname, main first.
    pub hosts: Vec<String>,
    /// Single-node sessions of more than one kernel: the bridge network the agent makes for
    /// the session (its kernels reach each other by hostname there, and nothing else).
    pub network: Option<String>,
    /// Sessions of more than one kernel: the key pair for `ssh sub1`, `mpirun -H …`.
    pub keys: Option<ClusterKeys>,
    /// Multi-node sessions: the overlay that joins the session's network across agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlay: Option<Overlay>,
}

/// The network of a multi-node session: on every agent that holds one of its kernels, a
/// bridge of the session's own with one subnet and VXLAN id cluster-wide, joined to the other
/// agents' bridges by a VXLAN tunnel (UDP 4789 between the agents). Every kernel has a fixed
/// address and knows every other kernel's by hostname.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overlay {
    /// The VXLAN network identifier (24 bits), the session's alone while it lives.
    pub vni: u32,
    /// `10.224.3.0/24`.
    pub subnet: String,
    /// This agent's address on the session's bridge (its kernels' gateway).
    pub gateway: std::net::Ipv4Addr,
    /// This kernel's address.
    pub address: std::net::Ipv4Addr,
    /// Every kernel's hostname and address, main first.
    pub hosts: Vec<(String, std::net::Ipv4Addr)>,
    /// Where the other agents holding kernels of the session receive VXLAN traffic. The word
    /// [`PEER_MANAGER`] stands for the manager's host (the in-process agent), whose address
    /// only the remote agent knows (the one it dials).
    pub peers: Vec<String>,
}

/// In [`Overlay::peers`]: the manager's own host.
pub const PEER_MANAGER: &str = "manager";

/// The UDP port of the VXLAN tunnels between agents (IANA's).
pub const VXLAN_PORT: u16 = 4789;

/// The pool multi-node sessions' subnets come from: `10.224.0.0/12`, one `/24` per session.
pub const OVERLAY_SUBNETS: u32 = 4096;

/// The subnet of overlay slot `slot` (below [`OVERLAY_SUBNETS`]): `10.224.0.0/24` onwards.
pub fn overlay_subnet(slot: u32) -> [u8; 3] {
    let base: u32 = (10 << 16) | (224 << 8);
    let n = base + (slot % OVERLAY_SUBNETS);
    [(n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// The VXLAN id of overlay slot `slot` (kept away from small ids other tools pick).
pub fn overlay_vni(slot: u32) -> u32 {
    0x10_0000 + (slot % OVERLAY_SUBNETS)
}

/// A kernel's address in the overlay: main1 is `.10`, sub i is `.10+i`.
pub fn overlay_address(net: [u8; 3], kernel_index: u32) -> std::net::Ipv4Addr {
    std::net::Ipv4Addr::new(net[0], net[1], net[2], 10 + kernel_index.min(200) as u8)
}

/// The `ordinal`-th agent's bridge address in the overlay: `.254`, `.253`, …
pub fn overlay_gateway(net: [u8; 3], ordinal: u32) -> std::net::Ipv4Addr {
    std::net::Ipv4Addr::new(net[0], net[1], net[2], 254 - ordinal.min(40) as u8)
}

impl ClusterInfo {
    /// A session of one kernel.
    pub fn single(kernel_id: Uuid) -> ClusterInfo {
        let place = layout(kernel_id, &[]).remove(0);
        ClusterInfo {
            mode: ClusterMode::SingleNode,
            size: 1,
            hosts: vec![place.hostname.clone()],
            place,
            network: None,
            keys: None,
            overlay: None,
        }
    }

    /// `BACKENDAI_CLUSTER_*`, `BACKENDAI_KERNEL_ID` and `BACKENDAI_SESSION_ID`, as Backend.AI
    /// sets them.
    pub fn environment(&self, session_id: Uuid) -> BTreeMap<String, String> {
        let subs = self.size.saturating_sub(1);
        let replicas = if subs > 0 {
            format!("main:1,sub:{subs}")
        } else {
            "main:1".to_string()
        };
        BTreeMap::from([
            ("BACKENDAI_SESSION_ID".into(), session_id.to_string()),
            (
                "BACKENDAI_KERNEL_ID".into(),
                self.place.kernel_id.to_string(),
            ),
            ("BACKENDAI_CLUSTER_SIZE".into(), self.size.to_string()),
            ("BACKENDAI_CLUSTER_HOSTS".into(), self.hosts.join(",")),
            ("BACKENDAI_CLUSTER_REPLICAS".into(), replicas),
            (
                "BACKENDAI_CLUSTER_ROLE".into(),
                self.place.role.as_str().into(),
            ),
            ("BACKENDAI_CLUSTER_IDX".into(), self.place.idx.to_string()),
            (
                "BACKENDAI_CLUSTER_LOCAL_RANK".into(),
                self.place.local_rank.to_string(),
            ),
            ("BACKENDAI_CLUSTER_HOST".into(), self.place.hostname.clone()),
        ])
    }
}

/// The bridge network of a single-node cluster session on its agent.
pub fn network_name(session_id: Uuid) -> String {
    format!("bai-cluster-{session_id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_are_named_and_numbered_as_backend_ai_does() {
        let ids: Vec<Uuid> = (0..3).map(|_| Uuid::new_v4()).collect();
        let l = layout(ids[0], &ids[1..]);
        let got: Vec<_> = l
            .iter()
            .map(|k| (k.role, k.idx, k.local_rank, k.hostname.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (ClusterRole::Main, 1, 0, "main1"),
                (ClusterRole::Sub, 1, 1, "sub1"),
                (ClusterRole::Sub, 2, 2, "sub2"),
            ]
        );
    }

    #[test]
    fn the_environment_names_the_cluster() {
        let s = Uuid::new_v4();
        let ids: Vec<Uuid> = (0..4).map(|_| Uuid::new_v4()).collect();
        let l = layout(ids[0], &ids[1..]);
        let info = ClusterInfo {
            mode: ClusterMode::SingleNode,
            size: 4,
            place: l[2].clone(),
            hosts: l.iter().map(|k| k.hostname.clone()).collect(),
            network: Some(network_name(s)),
            keys: None,
            overlay: None,
        };
        let env = info.environment(s);
        assert_eq!(env["BACKENDAI_CLUSTER_HOSTS"], "main1,sub1,sub2,sub3");
        assert_eq!(env["BACKENDAI_CLUSTER_REPLICAS"], "main:1,sub:3");
        assert_eq!(env["BACKENDAI_CLUSTER_ROLE"], "sub");
        assert_eq!(env["BACKENDAI_CLUSTER_IDX"], "2");
        assert_eq!(env["BACKENDAI_CLUSTER_LOCAL_RANK"], "2");
        assert_eq!(env["BACKENDAI_CLUSTER_HOST"], "sub2");
        assert_eq!(env["BACKENDAI_CLUSTER_SIZE"], "4");
        assert_eq!(env["BACKENDAI_KERNEL_ID"], ids[2].to_string());
        assert_eq!(env["BACKENDAI_SESSION_ID"], s.to_string());
        let one = ClusterInfo::single(ids[0]).environment(s);
        assert_eq!(one["BACKENDAI_CLUSTER_REPLICAS"], "main:1");
        assert_eq!(one["BACKENDAI_CLUSTER_HOSTS"], "main1");
    }

    #[test]
    fn modes_parse_in_the_spellings_clients_send() {
        for s in ["single-node", "single_node", "SINGLE_NODE"] {
            assert_eq!(s.parse::<ClusterMode>(), Ok(ClusterMode::SingleNode));
        }
        assert_eq!(
            "MULTI_NODE".parse::<ClusterMode>(),
            Ok(ClusterMode::MultiNode)
        );
        assert!("both".parse::<ClusterMode>().is_err());
    }

    #[test]
    fn overlay_slots_give_disjoint_subnets_and_ids() {
        assert_eq!(overlay_subnet(0), [10, 224, 0]);
        assert_eq!(overlay_subnet(300), [10, 225, 44]);
        assert_eq!(overlay_subnet(OVERLAY_SUBNETS - 1), [10, 239, 255]);
        assert_ne!(overlay_vni(1), overlay_vni(2));
        let net = overlay_subnet(5);
        assert_eq!(overlay_address(net, 0).to_string(), "10.224.5.10");
        assert_eq!(overlay_address(net, 63).to_string(), "10.224.5.73");
        assert_eq!(overlay_gateway(net, 0).to_string(), "10.224.5.254");
        assert_eq!(overlay_gateway(net, 1).to_string(), "10.224.5.253");
    }

    #[test]
    fn keys_never_print_their_private_half() {
        let k = ClusterKeys {
            private_key: "SECRET".into(),
            public_key: "ssh-ed25519 AAAA".into(),
        };
        assert!(!format!("{k:?}").contains("SECRET"));
    }
}

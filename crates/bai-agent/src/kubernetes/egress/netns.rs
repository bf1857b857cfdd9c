//! `--network-policies node`: a kernel pod's egress policy and isolation as an nftables
//! table inside the pod's own network namespace, for clusters whose network plugin does not
//! enforce NetworkPolicy. No I/O here; [`super::node`] finds the namespace and loads it.
//!
//! The table (`inet bai`) lives and dies with the pod's namespace: no rule outlives its pod,
//! and a pod address reused by another tenant's pod never inherits one. The kernel cannot
//! change it (its containers drop every capability, `NET_ADMIN` included). Two base chains:
//! - `output` (what the kernel dials): under `default`, the node (its addresses and the
//!   pod's gateway), link-local and the clouds' metadata addresses and the cluster's nodes
//!   closed, DNS (port 53) to anywhere kept; under `closed`, everything but the session's
//!   own pods and the allowed destinations; under `open`, nothing closed;
//! - `input` (who dials the kernel), under every policy: only the session's own pods (the
//!   set `peers`, filled as they get their addresses) and its node, as bai reaches a kernel
//!   only from its node (the agent there relays the app proxy, SSH and the runner).
//!
//! Replies pass both ways (`ct state established,related`), loopback is untouched, and a
//! refused connection is refused at once (TCP reset, ICMP administratively prohibited).

use bai_core::egress::{Allowed, EgressMode, EgressPolicy};
use std::collections::BTreeSet;
use std::fmt::Write;
use std::net::{IpAddr, Ipv4Addr};

/// The table's name (family `inet`).
pub const TABLE: &str = "bai";

/// Link-local blocks and the clouds' metadata addresses outside them, closed under `default`.
const METADATA: [&str; 4] = [
    "169.254.0.0/16",
    "fe80::/10",
    "fd00:ec2::254/128",
    "100.100.100.200/32",
];

/// What one kernel pod's table is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodRules<'a> {
    pub policy: &'a EgressPolicy,
    /// Its node: the node's addresses and the pod's gateway (closed under `default` and
    /// `closed`; the only outside source let in).
    pub node: &'a BTreeSet<IpAddr>,
    /// The cluster's nodes (the manager's host among them), closed under `default`.
    pub nodes: &'a BTreeSet<IpAddr>,
    /// The session's own pods known so far.
    pub peers: &'a BTreeSet<IpAddr>,
}

fn family(a: &IpAddr) -> &'static str {
    if a.is_ipv6() { "ip6" } else { "ip" }
}

fn allow_rule(a: &Allowed) -> String {
    let mut r = format!("{} daddr {}", family(&a.addr), a.block());
    if let Some(p) = a.port {
        let _ = write!(r, " meta l4proto {{ tcp, udp }} th dport {p}");
    }
    r.push_str(" accept");
    r
}

fn set(out: &mut String, name: &str, ty: &str, addrs: impl Iterator<Item = IpAddr>) {
    let elems: Vec<String> = addrs.map(|a| a.to_string()).collect();
    let _ = writeln!(out, "  set {name} {{\n    type {ty}");
    if !elems.is_empty() {
        let _ = writeln!(out, "    elements = {{ {} }}", elems.join(", "));
    }
    out.push_str("  }\n");
}

/// Both families' sets of `name` (`name4`, `name6`) from `addrs`.
fn sets(out: &mut String, name: &str, addrs: &BTreeSet<IpAddr>) {
    set(
        out,
        &format!("{name}4"),
        "ipv4_addr",
        addrs.iter().copied().filter(IpAddr::is_ipv4),
    );
    set(
        out,
        &format!("{name}6"),
        "ipv6_addr",
        addrs.iter().copied().filter(IpAddr::is_ipv6),
    );
}

/// The script that (re)makes the pod's table in one transaction.
pub fn script(r: &PodRules<'_>) -> String {
    let mut out = format!("table inet {TABLE} {{}}\ndelete table inet {TABLE}\n");
    let _ = writeln!(out, "table inet {TABLE} {{");
    sets(&mut out, "node", r.node);
    sets(&mut out, "nodes", r.nodes);
    sets(&mut out, "peers", r.peers);
    out.push_str(
        "  chain refuse {\n    meta l4proto tcp reject with tcp reset\n    reject with icmpx type admin-prohibited\n  }\n",
    );
    let mut output = vec![
        "oifname \"lo\" accept".to_string(),
        "ct state established,related accept".to_string(),
    ];
    match r.policy.mode {
        EgressMode::Open => {}
        EgressMode::Default => {
            output.push("meta l4proto { tcp, udp } th dport 53 accept".into());
            output.extend(r.policy.allow.iter().map(allow_rule));
            output.push("ip daddr @node4 jump refuse".into());
            output.push("ip6 daddr @node6 jump refuse".into());
            for m in METADATA {
                let fam = if m.contains(':') { "ip6" } else { "ip" };
                output.push(format!("{fam} daddr {m} jump refuse"));
            }
            output.push("ip daddr @nodes4 jump refuse".into());
            output.push("ip6 daddr @nodes6 jump refuse".into());
        }
        EgressMode::Closed => {
            output.push("ip daddr @peers4 accept".into());
            output.push("ip6 daddr @peers6 accept".into());
            output.extend(r.policy.allow.iter().map(allow_rule));
            output.push("jump refuse".into());
        }
    }
    let input = [
        "iifname \"lo\" accept",
        "ct state established,related accept",
        "ip saddr @node4 accept",
        "ip6 saddr @node6 accept",
        "ip saddr @peers4 accept",
        "ip6 saddr @peers6 accept",
        "jump refuse",
    ];
    for (name, hook, rules) in [
        ("output", "output", output),
        ("input", "input", input.map(String::from).to_vec()),
    ] {
        let _ = writeln!(
            out,
            "  chain {name} {{\n    type filter hook {hook} priority filter; policy accept;"
        );
        for rule in rules {
            let _ = writeln!(out, "    {rule}");
        }
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}

/// The table of a pool pod, whose session nobody knows yet (pure): nothing out but its
/// loopback, nothing in but its node. The same table, so the claim's [`script`] replaces it
/// in one transaction before the runner is bound (no moment without rules, and none with a
/// pool's in place of the session's once code runs).
pub fn pool_script(node: &BTreeSet<IpAddr>) -> String {
    script(&PodRules {
        policy: &EgressPolicy {
            mode: EgressMode::Closed,
            allow: Vec::new(),
        },
        node,
        nodes: &BTreeSet::new(),
        peers: &BTreeSet::new(),
    })
}

/// The script that lets the session's pods `peers` in (and, under `closed`, out to them):
/// added to the sets, the rest unchanged.
pub fn add_peers(peers: &BTreeSet<IpAddr>) -> String {
    let mut out = String::new();
    for (set, fam) in [("peers4", true), ("peers6", false)] {
        let elems: Vec<String> = peers
            .iter()
            .filter(|a| a.is_ipv4() == fam)
            .map(ToString::to_string)
            .collect();
        if !elems.is_empty() {
            let _ = writeln!(
                out,
                "add element inet {TABLE} {set} {{ {} }}",
                elems.join(", ")
            );
        }
    }
    out
}

/// The default gateway of a network namespace, from its `/proc/PID/net/route` (hex, little
/// endian): the pod's bridge address on its node.
pub fn gateway(route: &str) -> Option<Ipv4Addr> {
    route.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 3 || f[1] != "00000000" {
            return None;
        }
        let g = u32::from_str_radix(f[2], 16).ok().filter(|g| *g != 0)?;
        Some(Ipv4Addr::from(g.swap_bytes()))
    })
}

/// The node's own addresses from `ip -j addr show` in its network namespace, loopback left
/// out (inside the pod, loopback is the pod's own).
pub fn host_addresses(ip_json: &str) -> BTreeSet<IpAddr> {
    let Ok(serde_json::Value::Array(ifaces)) = serde_json::from_str(ip_json) else {
        return BTreeSet::new();
    };
    ifaces
        .iter()
        .flat_map(|i| i["addr_info"].as_array().cloned().unwrap_or_default())
        .filter_map(|a| a["local"].as_str()?.parse::<IpAddr>().ok())
        .filter(|a| !a.is_loopback())
        .collect()
}

/// The runtime's id of a container from its status' `containerID` (`docker://<id>`,
/// `containerd://<id>`, `cri-o://<id>`).
pub fn container_id(status_id: &str) -> Option<&str> {
    let id = status_id.split_once("://").map_or(status_id, |(_, id)| id);
    (id.len() >= 12 && id.chars().all(|c| c.is_ascii_hexdigit())).then_some(id)
}

/// Whether a process's `/proc/PID/cgroup` text puts it in container `id`'s cgroup: every
/// runtime names the container's cgroup by its id (`/docker/<id>`,
/// `…/pod<uid>/<id>`, `docker-<id>.scope`, `cri-containerd-<id>.scope`, `crio-<id>.scope`).
pub fn in_container(cgroup: &str, id: &str) -> bool {
    !id.is_empty() && cgroup.lines().any(|l| l.contains(id))
}

#[cfg(test)]
#[path = "netns_tests.rs"]
mod tests;

//! The nftables tables of kernel bridges, as text: what each policy closes. No I/O here;
//! [`super::Nft`] loads the text.
//!
//! One table per bridge (`inet bai_<bridge>`), replaced whole in one transaction when its
//! policy or the cluster's nodes change and removed with the bridge; so several agents on one
//! engine (tests) write the same table for a shared bridge, and what a crash leaves is found by
//! its name. An `open` bridge has no table. The two base chains run just before the engine's
//! own (`filter - 5`) and only on packets that enter from the bridge:
//! - `input` (to the host's own addresses, every interface's): closed under `default` and
//!   `closed`, DNS (port 53) excepted under `default`;
//! - `forward` (to anywhere else): under `default`, link-local and the clouds' metadata
//!   addresses and the cluster's nodes closed; under `closed`, everything but the bridge's
//!   own peers.
//!
//! Replies to connections made *to* a kernel (the manager reaching its apps) and packets
//! between kernels on one bridge pass; an accept here never opens what the engine's own rules
//! close (another session's container stays unreachable). A refused connection is refused at
//! once (TCP reset, ICMP administratively prohibited), never left to time out.

use bai_core::egress::{Allowed, EgressMode, EgressPolicy};
use std::collections::BTreeSet;
use std::fmt::Write;
use std::net::IpAddr;

/// Link-local blocks and the clouds' metadata addresses outside them (AWS's IPv6 one,
/// Alibaba's), closed under `default`.
const METADATA: [&str; 4] = [
    "169.254.0.0/16",
    "fe80::/10",
    "fd00:ec2::254/128",
    "100.100.100.200/32",
];

/// Prefix of every table bai makes.
pub const PREFIX: &str = "bai_";

/// The table of a bridge (letters, digits and `_` only).
pub fn table_name(iface: &str) -> String {
    let id: String = iface
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(64)
        .collect();
    format!("{PREFIX}{id}")
}

/// The script that removes a bridge's table (none there is fine).
pub fn removal(iface: &str) -> String {
    drop_table(&table_name(iface))
}

/// The script that removes table `t` (none there is fine).
pub fn drop_table(t: &str) -> String {
    format!("table inet {t} {{}}\ndelete table inet {t}\n")
}

/// bai's tables (`tables`: the names `nft list tables inet` gives) whose bridge is gone
/// (`ifaces`: the interfaces there are).
pub fn stale(tables: &[String], ifaces: &[String]) -> Vec<String> {
    let live: Vec<String> = ifaces.iter().map(|i| table_name(i)).collect();
    tables
        .iter()
        .filter(|t| t.starts_with(PREFIX) && !live.contains(t))
        .cloned()
        .collect()
}

fn family(a: &Allowed) -> &'static str {
    if a.addr.is_ipv6() { "ip6" } else { "ip" }
}

/// The rule that accepts one allowed destination.
fn allow_rule(a: &Allowed) -> String {
    let mut r = format!("{} daddr {}", family(a), a.block());
    if let Some(p) = a.port {
        let _ = write!(r, " meta l4proto {{ tcp, udp }} th dport {p}");
    }
    r.push_str(" accept");
    r
}

/// The chains of one policy (`p<i>_in`, `p<i>_fwd`); `open` has none.
fn policy_chains(out: &mut String, i: usize, p: &EgressPolicy) {
    let mut input = Vec::new();
    let mut forward = Vec::new();
    if p.mode == EgressMode::Default {
        input.push("meta l4proto { tcp, udp } th dport 53 accept".to_string());
    }
    for a in &p.allow {
        input.push(allow_rule(a));
        forward.push(allow_rule(a));
    }
    input.push("jump refuse".into());
    match p.mode {
        EgressMode::Default => {
            for m in METADATA {
                let fam = if m.contains(':') { "ip6" } else { "ip" };
                forward.push(format!("{fam} daddr {m} jump refuse"));
            }
            forward.push("ip daddr @nodes4 jump refuse".into());
            forward.push("ip6 daddr @nodes6 jump refuse".into());
        }
        EgressMode::Closed => forward.push("jump refuse".into()),
        EgressMode::Open => {}
    }
    for (name, rules) in [("in", input), ("fwd", forward)] {
        let _ = writeln!(out, "  chain p{i}_{name} {{");
        for r in rules {
            let _ = writeln!(out, "    {r}");
        }
        out.push_str("  }\n");
    }
}

fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace(['"', '\\'], ""))
}

fn node_set(out: &mut String, name: &str, ty: &str, nodes: &[String]) {
    let _ = writeln!(out, "  set {name} {{\n    type {ty}");
    if !nodes.is_empty() {
        let _ = writeln!(out, "    elements = {{ {} }}", nodes.join(", "));
    }
    out.push_str("  }\n");
}

/// The script that puts bridge `iface` under `p` (replacing its table in one transaction;
/// `open`: removing it), with `nodes` the cluster's nodes.
pub fn script(iface: &str, p: &EgressPolicy, nodes: &BTreeSet<IpAddr>) -> String {
    let table = table_name(iface);
    let mut out = removal(iface);
    if p.mode == EgressMode::Open {
        return out;
    }
    let _ = writeln!(out, "table inet {table} {{");
    let v4: Vec<String> = nodes
        .iter()
        .filter(|a| a.is_ipv4())
        .map(ToString::to_string)
        .collect();
    let v6: Vec<String> = nodes
        .iter()
        .filter(|a| a.is_ipv6())
        .map(ToString::to_string)
        .collect();
    node_set(&mut out, "nodes4", "ipv4_addr", &v4);
    node_set(&mut out, "nodes6", "ipv6_addr", &v6);
    out.push_str(
        "  chain refuse {\n    meta l4proto tcp reject with tcp reset\n    reject with icmpx type admin-prohibited\n  }\n",
    );
    policy_chains(&mut out, 0, p);
    let dev = quoted(iface);
    let _ = write!(
        out,
        "  chain input {{\n    type filter hook input priority filter - 5; policy accept;\n    ct state established,related accept\n    iifname {dev} jump p0_in\n  }}\n"
    );
    let _ = write!(
        out,
        "  chain forward {{\n    type filter hook forward priority filter - 5; policy accept;\n    ct state established,related accept\n    iifname {dev} oifname {dev} accept\n    iifname {dev} jump p0_fwd\n  }}\n"
    );
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(mode: &str, allow: &[&str]) -> EgressPolicy {
        let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
        EgressPolicy::parse(mode, &allow).expect("policy")
    }

    /// The lines of one chain of the script.
    fn chain<'a>(script: &'a str, name: &str) -> Vec<&'a str> {
        let start = format!("  chain {name} {{");
        script
            .lines()
            .skip_while(|l| *l != start)
            .skip(1)
            .take_while(|l| *l != "  }")
            .map(str::trim)
            .collect()
    }

    #[test]
    fn default_closes_the_host_metadata_and_nodes_and_keeps_dns() {
        let nodes = BTreeSet::from([
            "10.213.1.1".parse().expect("ip"),
            "fd00::9".parse().expect("ip"),
        ]);
        let s = script("br-1", &policy("default", &[]), &nodes);
        assert!(s.starts_with("table inet bai_br_1 {}\ndelete table inet bai_br_1\n"));
        assert_eq!(chain(&s, "input")[2..], [r#"iifname "br-1" jump p0_in"#]);
        assert_eq!(
            chain(&s, "p0_in"),
            [
                "meta l4proto { tcp, udp } th dport 53 accept",
                "jump refuse"
            ]
        );
        let fwd = chain(&s, "p0_fwd");
        assert!(
            fwd.contains(&"ip daddr 169.254.0.0/16 jump refuse"),
            "{fwd:?}"
        );
        assert!(fwd.contains(&"ip6 daddr fe80::/10 jump refuse"), "{fwd:?}");
        assert!(fwd.contains(&"ip daddr @nodes4 jump refuse"), "{fwd:?}");
        assert!(s.contains("elements = { 10.213.1.1 }"), "{s}");
        assert!(s.contains("elements = { fd00::9 }"), "{s}");
        // The bridge's own peers pass before its policy.
        assert_eq!(
            chain(&s, "forward")[2..],
            [
                r#"iifname "br-1" oifname "br-1" accept"#,
                r#"iifname "br-1" jump p0_fwd"#
            ]
        );
    }

    #[test]
    fn closed_allows_only_its_list_and_open_has_no_table() {
        let s = script(
            "bbr1",
            &policy("closed", &["10.0.0.0/8:3128", "[fd00::1]:443"]),
            &BTreeSet::new(),
        );
        assert_eq!(
            chain(&s, "p0_fwd"),
            [
                "ip daddr 10.0.0.0/8 meta l4proto { tcp, udp } th dport 3128 accept",
                "ip6 daddr fd00::1/128 meta l4proto { tcp, udp } th dport 443 accept",
                "jump refuse"
            ]
        );
        // No DNS to the host under closed, unless listed.
        assert!(!chain(&s, "p0_in").iter().any(|l| l.contains("dport 53")));
        assert!(!s.contains("elements"), "{s}");
        let open = script("br-open", &policy("open", &[]), &BTreeSet::new());
        assert_eq!(open, removal("br-open"));
    }

    #[test]
    fn tables_of_gone_bridges_are_stale_and_names_are_safe() {
        assert_eq!(table_name("br-0a1b"), "bai_br_0a1b");
        assert_eq!(table_name("a\"; flush ruleset"), "bai_a___flush_ruleset");
        let tables = ["bai_br_1", "bai_bbr2", "filter", "bai_br_3"].map(String::from);
        let ifaces = ["lo", "br-1", "bbr2"].map(String::from);
        assert_eq!(stale(&tables, &ifaces), ["bai_br_3"]);
    }

    /// Every shape of table is one nftables takes (`nft -c`, checked without loading).
    #[test]
    fn nft_accepts_every_shape() {
        let nodes = BTreeSet::from([
            "10.0.0.1".parse().expect("ip"),
            "fd00::1".parse().expect("ip"),
        ]);
        for p in [
            policy("default", &[]),
            policy("default", &["10.1.0.0/16", "10.2.0.1:3128"]),
            policy("closed", &[]),
            policy("closed", &["[fd00::/8]:443", "0.0.0.0/0:53"]),
            policy("open", &[]),
        ] {
            for n in [BTreeSet::new(), nodes.clone()] {
                let s = script("br-0123456789ab", &p, &n);
                let mut child = std::process::Command::new("nft")
                    .args(["-c", "-f", "-"])
                    .stdin(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("nft (Debian's nftables) is installed");
                use std::io::Write;
                child
                    .stdin
                    .take()
                    .expect("stdin")
                    .write_all(s.as_bytes())
                    .expect("script written");
                let out = child.wait_with_output().expect("nft ran");
                assert!(
                    out.status.success(),
                    "{}\n{s}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
}

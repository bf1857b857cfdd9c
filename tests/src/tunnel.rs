//! Lets two test [`Machine`]s exchange VXLAN traffic (UDP 4789), or other traffic a test
//! names, through the host, as two servers on one network would for a multi-node session's
//! overlay. Everything else between machines stays dropped by the host's `FORWARD` policy.
//! The rules go when the guard drops.

use crate::netns::Machine;
use std::process::Command;

/// Host `FORWARD` rules accepting UDP 4789 between two machines' veths, both ways.
pub struct Tunnel {
    rules: Vec<Vec<String>>,
}

const VXLAN_PORT: &str = "4789";

fn iptables(op: &str, rule: &[String]) -> bool {
    let mut args = vec![op.to_string(), "FORWARD".to_string()];
    if op == "-I" {
        args.push("1".into());
    }
    args.extend(rule.iter().cloned());
    Command::new("iptables")
        .args(&args)
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

impl Tunnel {
    /// Opens UDP 4789 between `a` and `b`. Panics if iptables refuses.
    pub fn between(a: &Machine, b: &Machine) -> Tunnel {
        Tunnel::forward(a, b, &["-p", "udp", "--dport", VXLAN_PORT])
    }

    /// Opens what `matching` selects (iptables match arguments, e.g. `-p tcp`) between `a`
    /// and `b`, both ways, as between two servers of one network. Panics if iptables refuses.
    pub fn forward(a: &Machine, b: &Machine, matching: &[&str]) -> Tunnel {
        let rule = |from: &Machine, to: &Machine| -> Vec<String> {
            let mut r: Vec<String> = ["-i", &from.host_veth(), "-o", &to.host_veth()]
                .map(String::from)
                .to_vec();
            r.extend(matching.iter().map(|m| m.to_string()));
            r.extend(["-j", "ACCEPT"].map(String::from));
            r
        };
        let rules = vec![rule(a, b), rule(b, a)];
        for r in &rules {
            assert!(
                iptables("-I", r),
                "iptables -I FORWARD {} failed",
                r.join(" ")
            );
        }
        Tunnel { rules }
    }
}

impl Drop for Tunnel {
    fn drop(&mut self) {
        for r in &self.rules {
            iptables("-D", r);
        }
    }
}

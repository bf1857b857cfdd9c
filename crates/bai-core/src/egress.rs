//! Where a session's kernels may open connections: the egress policy of a resource group,
//! given to every kernel it starts and enforced by the agent on the kernel's bridge.
//!
//! - `open`: nothing is closed (Backend.AI's behaviour; a kernel reaches the host's control
//!   ports and the cloud's metadata service — a stated risk).
//! - `default`: a kernel cannot open connections to its host's own addresses (DNS excepted),
//!   to link-local and metadata addresses, or to the cluster's other nodes; everything else
//!   (the internet, the site's mirrors, its own cluster peers) works.
//! - `closed`: a kernel reaches only its own cluster peers and what `allow` lists.
//!
//! Under `default` and `closed`, `allow` opens what it lists (an internal mirror on a node,
//! a proxy, a resolver).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// The three policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum EgressMode {
    /// Nothing closed (a kernel reaches the host's control ports and metadata services).
    Open,
    /// The host, link-local and metadata addresses and the cluster's nodes closed.
    #[default]
    Default,
    /// Only the session's own peers and the allowed destinations.
    Closed,
}

impl EgressMode {
    pub fn as_str(self) -> &'static str {
        match self {
            EgressMode::Open => "open",
            EgressMode::Default => "default",
            EgressMode::Closed => "closed",
        }
    }
}

impl fmt::Display for EgressMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EgressMode {
    type Err = EgressError;
    fn from_str(s: &str) -> Result<Self, EgressError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "open" => Ok(EgressMode::Open),
            "default" => Ok(EgressMode::Default),
            "closed" => Ok(EgressMode::Closed),
            other => Err(EgressError(format!(
                "unknown egress policy {other:?}: open, default or closed"
            ))),
        }
    }
}

/// Why a policy or one of its destinations was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EgressError(pub String);

/// One allowed destination: an address block and, optionally, one port (TCP and UDP).
/// Written `10.0.0.0/8`, `10.1.2.3:3128`, `10.0.0.0/8:443`, `fd00::/8` or `[fd00::1]:443`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Allowed {
    pub addr: IpAddr,
    pub prefix: u8,
    pub port: Option<u16>,
}

impl Allowed {
    fn is_v6(&self) -> bool {
        self.addr.is_ipv6()
    }

    /// The block in nftables' notation (`10.0.0.0/8`, `fd00::/8`).
    pub fn block(&self) -> String {
        format!("{}/{}", self.addr, self.prefix)
    }
}

impl fmt::Display for Allowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let full = if self.is_v6() { 128 } else { 32 };
        let net = if self.prefix == full {
            self.addr.to_string()
        } else {
            self.block()
        };
        match (self.port, self.is_v6()) {
            (None, _) => f.write_str(&net),
            (Some(p), false) => write!(f, "{net}:{p}"),
            (Some(p), true) => write!(f, "[{net}]:{p}"),
        }
    }
}

fn mask(addr: IpAddr, prefix: u8) -> IpAddr {
    match addr {
        IpAddr::V4(a) => {
            let bits = u32::from(a);
            let m = if prefix == 0 {
                0
            } else {
                u32::MAX << (32 - u32::from(prefix))
            };
            IpAddr::V4((bits & m).into())
        }
        IpAddr::V6(a) => {
            let bits = u128::from(a);
            let m = if prefix == 0 {
                0
            } else {
                u128::MAX << (128 - u32::from(prefix))
            };
            IpAddr::V6((bits & m).into())
        }
    }
}

impl FromStr for Allowed {
    type Err = EgressError;
    fn from_str(s: &str) -> Result<Self, EgressError> {
        let s = s.trim();
        let bad = |why: &str| EgressError(format!("bad destination {s:?}: {why}"));
        // `[v6]:port`, `v6` (several colons), `v4:port` or `v4`.
        let (net, port) = if let Some(rest) = s.strip_prefix('[') {
            let (net, tail) = rest.split_once(']').ok_or_else(|| bad("no closing ']'"))?;
            let port = match tail {
                "" => None,
                t => Some(
                    t.strip_prefix(':')
                        .ok_or_else(|| bad("':' must follow ']'"))?,
                ),
            };
            (net, port)
        } else if s.matches(':').count() > 1 {
            (s, None)
        } else {
            match s.split_once(':') {
                Some((n, p)) => (n, Some(p)),
                None => (s, None),
            }
        };
        let port = match port {
            None => None,
            // One port per destination: a range would need nftables' and NetworkPolicy's
            // ranges (`endPort`, which a Kubernetes 1.20 API server drops silently).
            Some(p) if p.contains('-') => {
                return Err(bad(
                    "port ranges are not supported; list each port as a destination of its own",
                ));
            }
            Some(p) => match p.parse::<u16>() {
                Ok(0) | Err(_) => return Err(bad("the port must be 1 to 65535")),
                Ok(p) => Some(p),
            },
        };
        let (addr, prefix) = match net.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (net, None),
        };
        let addr: IpAddr = addr
            .parse()
            .map_err(|_| bad("not an IPv4 or IPv6 address"))?;
        let full = if addr.is_ipv6() { 128 } else { 32 };
        let prefix = match prefix {
            None => full,
            Some(p) => match p.parse::<u8>() {
                Ok(p) if p <= full => p,
                _ => return Err(bad(&format!("the prefix length must be 0 to {full}"))),
            },
        };
        Ok(Allowed {
            addr: mask(addr, prefix),
            prefix,
            port,
        })
    }
}

impl Serialize for Allowed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Allowed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Most destinations one policy may allow (each becomes a rule on every bridge under it).
pub const MAX_ALLOWED: usize = 64;

/// A resource group's egress policy.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EgressPolicy {
    /// `open`, `default` or `closed`.
    pub mode: EgressMode,
    /// Destinations opened under `default` and `closed` (`10.0.0.0/8`, `10.1.2.3:3128`,
    /// `[fd00::1]:443`); `open` needs none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(with = "Vec<String>"))]
    pub allow: Vec<Allowed>,
}

impl EgressPolicy {
    /// A policy from its mode and its destinations as written, sorted and without repeats;
    /// `open` keeps none.
    pub fn parse(mode: &str, allow: &[String]) -> Result<EgressPolicy, EgressError> {
        let mode: EgressMode = mode.parse()?;
        let mut list = Vec::new();
        for a in allow
            .iter()
            .flat_map(|a| a.split(','))
            .filter(|a| !a.trim().is_empty())
        {
            list.push(a.parse::<Allowed>()?);
        }
        EgressPolicy { mode, allow: list }.normalized()
    }

    /// Sorted, without repeats, within [`MAX_ALLOWED`]; `open` keeps none.
    pub fn normalized(mut self) -> Result<EgressPolicy, EgressError> {
        if self.mode == EgressMode::Open {
            self.allow.clear();
        }
        self.allow.sort();
        self.allow.dedup();
        if self.allow.len() > MAX_ALLOWED {
            return Err(EgressError(format!(
                "{} allowed destinations; at most {MAX_ALLOWED}",
                self.allow.len()
            )));
        }
        Ok(self)
    }

    /// One line for listings: `default`, `closed +2 (10.0.0.0/8, 10.1.2.3:3128)`.
    pub fn summary(&self) -> String {
        if self.allow.is_empty() {
            return self.mode.to_string();
        }
        let list: Vec<String> = self.allow.iter().map(ToString::to_string).collect();
        format!("{} allow {}", self.mode, list.join(","))
    }

    /// A short name for the policy, the same on every agent: `open`, `default`, or a hash of
    /// the mode and the destinations (names the shared bridge of its single-kernel sessions).
    pub fn key(&self) -> String {
        if self.allow.is_empty() && self.mode != EgressMode::Closed {
            return self.mode.to_string();
        }
        // FNV-1a over the canonical text: stable across builds and machines.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.summary().bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        format!("{}{:08x}", &self.mode.as_str()[..1], h as u32)
    }
}

/// What a kernel's agent is told: its session's policy and the cluster's nodes (closed to it
/// under `default`): remote agents' addresses, and [`crate::cluster::PEER_MANAGER`] for the
/// manager's host as the agent dials it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EgressSpec {
    pub policy: EgressPolicy,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_parse_in_every_form_and_print_back() {
        for (given, shown) in [
            ("10.0.0.0/8", "10.0.0.0/8"),
            ("10.1.2.3", "10.1.2.3"),
            ("10.1.2.3/32", "10.1.2.3"),
            ("10.1.2.3:3128", "10.1.2.3:3128"),
            ("10.1.2.77/24:443", "10.1.2.0/24:443"),
            ("fd00::/8", "fd00::/8"),
            ("fd00::1", "fd00::1"),
            ("[fd00::1]:443", "[fd00::1]:443"),
            ("[fd00::/16]:53", "[fd00::/16]:53"),
        ] {
            let a: Allowed = given.parse().expect(given);
            assert_eq!(a.to_string(), shown, "{given}");
            assert_eq!(shown.parse::<Allowed>().expect(shown), a);
        }
    }

    #[test]
    fn bad_destinations_are_refused_with_the_reason() {
        for (given, why) in [
            ("10.0.0.0/33", "prefix length must be 0 to 32"),
            ("fd00::/129", "prefix length must be 0 to 128"),
            ("10.0.0.1:0", "port must be 1 to 65535"),
            ("10.0.0.1:70000", "port must be 1 to 65535"),
            ("example.com", "not an IPv4 or IPv6 address"),
            ("[fd00::1", "no closing"),
            ("[fd00::1]443", "':' must follow"),
            ("10.0.0.1:8000-8080", "port ranges are not supported"),
            ("[fd00::1]:1-2", "port ranges are not supported"),
        ] {
            let e = given.parse::<Allowed>().expect_err(given);
            assert!(e.0.contains(why), "{given}: {e}");
        }
        assert!(EgressPolicy::parse("shut", &[]).is_err());
        let many: Vec<String> = (0..65).map(|i| format!("10.0.{i}.0/24")).collect();
        assert!(EgressPolicy::parse("closed", &many).is_err());
    }

    #[test]
    fn a_policy_is_sorted_and_open_keeps_no_destinations() {
        let p = EgressPolicy::parse("closed", &["10.0.0.2,10.0.0.1".into(), "10.0.0.2".into()])
            .expect("policy");
        assert_eq!(p.summary(), "closed allow 10.0.0.1,10.0.0.2");
        let q =
            EgressPolicy::parse("CLOSED", &["10.0.0.1".into(), "10.0.0.2".into()]).expect("policy");
        assert_eq!(p, q);
        assert_eq!(p.key(), q.key());
        let open = EgressPolicy::parse("open", &["10.0.0.1".into()]).expect("policy");
        assert!(open.allow.is_empty());
        assert_eq!(open.key(), "open");
        assert_eq!(EgressPolicy::default().key(), "default");
        let closed = EgressPolicy::parse("closed", &[]).expect("policy");
        assert_ne!(closed.key(), "closed");
        assert!(closed.key().starts_with('c') && closed.key().len() == 9);
        assert_ne!(p.key(), closed.key());
    }

    #[test]
    fn the_policy_travels_as_json_with_destinations_as_text() {
        let p = EgressPolicy::parse("default", &["[fd00::1]:443".into(), "10.0.0.0/8".into()])
            .expect("policy");
        let j = serde_json::to_value(&p).expect("json");
        assert_eq!(
            j,
            serde_json::json!({"mode": "default", "allow": ["10.0.0.0/8", "[fd00::1]:443"]})
        );
        let back: EgressPolicy = serde_json::from_value(j).expect("back");
        assert_eq!(back, p);
        let bad = serde_json::from_value::<EgressPolicy>(
            serde_json::json!({"mode": "closed", "allow": ["nope"]}),
        );
        assert!(bad.is_err());
    }
}

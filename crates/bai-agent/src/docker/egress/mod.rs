//! Egress policies where the packets are: each kernel bridge of this agent under its
//! session's policy, as an nftables table of its own (`rules`), loaded through the [`Nft`]
//! seam when the bridge is bound or the cluster's nodes change, and removed with the bridge.
//!
//! - A single-kernel session sits on the shared bridge of its policy: `bai-kernels` for the
//!   plain `default`, `bai-kernels-<key>` for any other (made on first use, inter-container
//!   traffic off like the first); a cluster session's bridge (pooled or overlay) is its own
//!   and takes its policy when the session takes it.
//! - The tables live in the kernel's network stack, not in the agent: they stay across agent
//!   and engine restarts (bridge names do not change), and a starting agent loads them again
//!   from its kernels' labels (`ai.bai.egress`), so a host reboot is covered too; tables of
//!   bridges that are gone (a crash) are removed then.
//! - An agent that cannot load them (no `nft`, no nf_tables) says why in its info; the
//!   manager then gives it only sessions of `open` groups, and a kernel under another policy
//!   is refused here too.

pub mod rules;

use super::{Inner, isolation};
use async_trait::async_trait;
use bai_core::agent::AgentError;
use bai_core::cluster::PEER_MANAGER;
use bai_core::egress::{EgressMode, EgressPolicy, EgressSpec};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::IpAddr;
use std::sync::Arc;

/// Label on each kernel's container: its egress spec as JSON.
pub const LABEL_EGRESS: &str = "ai.bai.egress";

/// The OS seam: loads a script (`nft -f -`), lists tables and interfaces.
#[async_trait]
pub trait Nft: Send + Sync {
    async fn load(&self, script: &str) -> Result<(), String>;
    /// The names of the `inet` tables.
    async fn tables(&self) -> Result<Vec<String>, String>;
    /// The network interfaces of the agent's namespace.
    async fn interfaces(&self) -> Result<Vec<String>, String>;
}

async fn output(program: &str, args: &[&str]) -> Result<String, String> {
    let out = tokio::process::Command::new(program)
        .args(args)
        .output()
        .await
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{program} {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The real one: Debian's `nft`, run as the agent (root, in the engine's network namespace).
pub struct NftCommand;

#[async_trait]
impl Nft for NftCommand {
    async fn load(&self, script: &str) -> Result<(), String> {
        crate::nft::load("nft", &["-f", "-"], script, "install Debian's nftables").await
    }

    async fn tables(&self) -> Result<Vec<String>, String> {
        // `table inet NAME` per line.
        Ok(output("nft", &["list", "tables", "inet"])
            .await?
            .lines()
            .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
            .collect())
    }

    async fn interfaces(&self) -> Result<Vec<String>, String> {
        // `N: NAME[@PEER]: <...` per line (netlink: this namespace's, unlike /sys).
        Ok(output("ip", &["-o", "link", "show"])
            .await?
            .lines()
            .filter_map(|l| l.split(':').nth(1))
            .map(|n| n.trim().split('@').next().unwrap_or("").to_string())
            .filter(|n| !n.is_empty())
            .collect())
    }
}

/// What the agent enforces now.
pub struct Egress {
    nft: Arc<dyn Nft>,
    /// Each bridge (interface) of this agent's kernels and its policy.
    bridges: BTreeMap<String, EgressPolicy>,
    /// The cluster's nodes as this agent reaches them.
    nodes: BTreeSet<IpAddr>,
    /// The manager's host as this agent dials it, once resolved (not again per kernel).
    manager: Option<IpAddr>,
    /// Network name → its bridge's interface.
    ifaces: HashMap<String, String>,
    /// Why the last load failed (none: every table is as `bridges` says).
    error: Option<String>,
}

impl Egress {
    pub fn new(nft: Arc<dyn Nft>) -> Egress {
        Egress {
            nft,
            bridges: BTreeMap::new(),
            nodes: BTreeSet::new(),
            manager: None,
            ifaces: HashMap::new(),
            error: None,
        }
    }

    /// Why the agent cannot enforce policies, if it cannot.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Loads the table of each bridge in `which` (all: every bridge).
    async fn load(&mut self, which: Option<&str>) -> Result<(), String> {
        let mut result = Ok(());
        for (iface, p) in &self.bridges {
            if which.is_some_and(|w| w != iface) {
                continue;
            }
            if let Err(e) = self.nft.load(&rules::script(iface, p, &self.nodes)).await {
                result = Err(e);
            }
        }
        self.error = result.as_ref().err().cloned();
        result
    }
}

/// The shared bridge of single-kernel sessions under `p`.
pub fn shared_network(p: &EgressPolicy) -> String {
    match p.key().as_str() {
        "default" => isolation::NETWORK.to_string(),
        key => format!("{}-{key}", isolation::NETWORK),
    }
}

/// The bridge interface of a network, as the engine names it.
async fn iface_of(inner: &Inner, network: &str) -> Result<String, AgentError> {
    let n = inner
        .docker
        .inspect_network(network, None)
        .await
        .map_err(|e| crate::error::runtime(format_args!("cannot inspect network {network}"), e))?;
    if let Some(name) = n
        .options
        .as_ref()
        .and_then(|o| o.get("com.docker.network.bridge.name"))
    {
        return Ok(name.clone());
    }
    let id = n.id.unwrap_or_default();
    Ok(format!("br-{}", &id[..id.len().min(12)]))
}

/// The nodes' addresses as this agent reaches them: the manager's host is `manager` when it
/// was resolved before, else resolved now (and returned as the second value).
async fn nodes(
    inner: &Inner,
    spec: &EgressSpec,
    manager: Option<IpAddr>,
) -> (Vec<IpAddr>, Option<IpAddr>) {
    let mut out = Vec::new();
    let mut resolved = manager;
    for n in &spec.nodes {
        let text = if n == PEER_MANAGER {
            if inner.config.manager_host.is_none() {
                // The manager's own agent: its host's addresses are closed by `input`.
                continue;
            }
            if let Some(a) = resolved {
                out.push(a);
                continue;
            }
            match super::overlay::resolve(inner, n).await {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot resolve the manager's host for the egress rules");
                    continue;
                }
            }
        } else {
            n.clone()
        };
        match text.parse() {
            Ok(a) => {
                if n == PEER_MANAGER {
                    resolved = Some(a);
                }
                out.push(a);
            }
            Err(_) => tracing::warn!(node = %text, "a node's address is not an IP address"),
        }
    }
    (out, resolved)
}

/// Puts `network`'s bridge under `spec`'s policy (and its nodes among the closed ones) before
/// a kernel joins it. Loads the table only when something changed.
pub async fn bind(inner: &Inner, network: &str, spec: &EgressSpec) -> Result<(), AgentError> {
    let known = inner.egress.lock().await.manager;
    let (nodes, manager) = nodes(inner, spec, known).await;
    let mut e = inner.egress.lock().await;
    e.manager = e.manager.or(manager);
    let iface = match e.ifaces.get(network) {
        Some(i) => i.clone(),
        None => {
            let i = iface_of(inner, network).await?;
            e.ifaces.insert(network.to_string(), i.clone());
            i
        }
    };
    let policy_changed = e.bridges.get(&iface) != Some(&spec.policy);
    if policy_changed {
        e.bridges.insert(iface.clone(), spec.policy.clone());
    }
    let mut nodes_changed = false;
    for n in nodes {
        nodes_changed |= e.nodes.insert(n);
    }
    if !policy_changed && !nodes_changed && e.error.is_none() {
        return Ok(());
    }
    // New nodes reach every bridge's table; otherwise only this bridge's changed.
    let which = (!nodes_changed && e.error.is_none()).then_some(iface.as_str());
    let loaded = e.load(which).await;
    match loaded {
        Ok(()) => {
            tracing::info!(network, bridge = %iface, policy = %spec.policy.summary(), "egress policy applied");
            Ok(())
        }
        Err(why) if spec.policy.mode == EgressMode::Open => {
            tracing::warn!(network, error = %why, "egress rules not loaded (the kernel's policy is open)");
            Ok(())
        }
        Err(why) => Err(AgentError::Runtime(format!(
            "this agent cannot enforce the egress policy {}: {why}",
            spec.policy.summary()
        ))),
    }
}

/// Forgets a removed network's bridge (the engine may give its interface name to another).
pub async fn unbind(inner: &Inner, network: &str) {
    let mut e = inner.egress.lock().await;
    let Some(iface) = e.ifaces.remove(network) else {
        return;
    };
    if e.bridges.remove(&iface).is_some()
        && let Err(why) = e.nft.load(&rules::removal(&iface)).await
    {
        tracing::warn!(network, error = %why, "cannot remove the bridge's egress rules");
    }
}

/// Forgets where `network` was (it is being made again, under another interface).
pub async fn forget_iface(inner: &Inner, network: &str) {
    inner.egress.lock().await.ifaces.remove(network);
}

/// At the agent's start: the tables again from the kernels that are there (`kernels`: each
/// one's network and egress label) and the shared default bridge, with the manager's host
/// among the nodes; tables of bridges that are gone are removed. A failure is kept as the
/// agent's reason and logged; the agent still starts.
pub async fn restore(inner: &Inner, kernels: Vec<(String, Option<String>)>) {
    let mut seen: HashMap<String, EgressSpec> =
        HashMap::from([(isolation::NETWORK.to_string(), EgressSpec::default())]);
    for (network, label) in kernels {
        let spec = label
            .and_then(|l| serde_json::from_str::<EgressSpec>(&l).ok())
            .unwrap_or_default();
        seen.insert(network, spec);
    }
    let manager = EgressSpec {
        nodes: vec![PEER_MANAGER.to_string()],
        ..Default::default()
    };
    // The manager's host is resolved once here; the kernels' specs reuse it.
    let (mut all_nodes, manager) = nodes(inner, &manager, None).await;
    let mut found = Vec::new();
    for (network, spec) in &seen {
        match iface_of(inner, network).await {
            Ok(i) => {
                all_nodes.extend(nodes(inner, spec, manager).await.0);
                found.push((network.clone(), i, spec.policy.clone()));
            }
            Err(err) => tracing::warn!(network, error = %err, "a kernel's network is gone"),
        }
    }
    let mut e = inner.egress.lock().await;
    e.nodes.extend(all_nodes);
    e.manager = manager;
    for (network, iface, policy) in found {
        e.ifaces.insert(network, iface.clone());
        e.bridges.insert(iface, policy);
    }
    match e.load(None).await {
        Ok(()) => tracing::info!(bridges = e.bridges.len(), "egress rules loaded"),
        Err(why) => {
            tracing::warn!(
                error = %why,
                "this agent cannot enforce egress policies; it takes only sessions of groups whose policy is open"
            );
            return;
        }
    }
    // What a crash left: tables of bridges that are no more.
    let (tables, ifaces) = (e.nft.tables().await, e.nft.interfaces().await);
    if let (Ok(tables), Ok(ifaces)) = (tables, ifaces) {
        for t in rules::stale(&tables, &ifaces) {
            match e.nft.load(&rules::drop_table(&t)).await {
                Ok(()) => {
                    tracing::info!(table = t, "egress rules of a bridge that is gone removed")
                }
                Err(why) => {
                    tracing::warn!(table = t, error = %why, "cannot remove stale egress rules")
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Keeps what it was given; fails while `broken`.
    #[derive(Default)]
    struct Recorder {
        scripts: Mutex<Vec<String>>,
        broken: Mutex<bool>,
    }

    #[async_trait]
    impl Nft for Recorder {
        async fn load(&self, script: &str) -> Result<(), String> {
            if *self.broken.lock().unwrap_or_else(|p| p.into_inner()) {
                return Err("nft: no such file".into());
            }
            self.scripts
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(script.to_string());
            Ok(())
        }

        async fn tables(&self) -> Result<Vec<String>, String> {
            Ok(Vec::new())
        }

        async fn interfaces(&self) -> Result<Vec<String>, String> {
            Ok(Vec::new())
        }
    }

    #[tokio::test]
    async fn a_failed_load_is_the_agents_reason_until_one_succeeds() {
        let nft = Arc::new(Recorder::default());
        *nft.broken.lock().unwrap_or_else(|p| p.into_inner()) = true;
        let mut e = Egress::new(nft.clone());
        e.bridges.insert("br-1".into(), EgressPolicy::default());
        e.bridges.insert(
            "br-2".into(),
            EgressPolicy::parse("closed", &[]).expect("closed"),
        );
        assert!(e.load(None).await.is_err());
        assert_eq!(e.error(), Some("nft: no such file"));
        *nft.broken.lock().unwrap_or_else(|p| p.into_inner()) = false;
        assert!(e.load(Some("br-2")).await.is_ok());
        assert_eq!(e.error(), None);
        let scripts = nft.scripts.lock().unwrap_or_else(|p| p.into_inner());
        assert_eq!(scripts.len(), 1, "only the bridge asked for");
        assert!(scripts[0].contains("table inet bai_br_2 {"));
        assert!(scripts[0].contains(r#"iifname "br-2" jump p0_in"#));
    }

    #[test]
    fn single_kernels_share_a_bridge_per_policy() {
        let d = EgressPolicy::default();
        assert_eq!(shared_network(&d), "bai-kernels");
        let open = EgressPolicy::parse("open", &[]).expect("open");
        assert_eq!(shared_network(&open), "bai-kernels-open");
        let closed = EgressPolicy::parse("closed", &["10.0.0.1".into()]).expect("closed");
        let name = shared_network(&closed);
        assert!(name.starts_with("bai-kernels-c"), "{name}");
        assert_ne!(
            name,
            shared_network(&EgressPolicy::parse("closed", &[]).expect("closed"))
        );
    }
}

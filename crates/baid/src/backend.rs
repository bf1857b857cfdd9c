//! `baid agent --backend`: where the agent's kernels run, this machine's Docker engine
//! (the default) or pods on a Kubernetes cluster (`--backend kubernetes --kubeconfig FILE`).

use crate::node::NodeArgs;
use anyhow::{Context, Result};
use bai_agent::kubernetes::Enforcement;
use bai_agent::{KubernetesAgent, KubernetesAgentConfig};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// Containers in this machine's Docker engine.
    Docker,
    /// Pods on a Kubernetes cluster (the agent runs on the node it offers).
    Kubernetes,
}

#[derive(clap::Args)]
pub struct BackendArgs {
    /// Where kernels run: `docker` (this machine's engine) or `kubernetes` (pods).
    #[arg(long, env = "BAI_AGENT_BACKEND", value_enum, default_value = "docker")]
    pub backend: Backend,
    /// The Kubernetes backend: the cluster's kubeconfig (its current context); without it,
    /// the service account of the pod the agent runs in.
    #[arg(long, env = "BAI_KUBECONFIG", value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The Kubernetes backend: the namespace of the kernels' pods (made when missing).
    #[arg(long, env = "BAI_KUBE_NAMESPACE", default_value = bai_agent::kubernetes::DEFAULT_NAMESPACE)]
    pub namespace: String,
    /// The Kubernetes backend: only nodes with this label are offered (repeatable).
    #[arg(long = "node-selector", env = "BAI_KUBE_NODE_SELECTOR", value_name = "KEY=VALUE",
          value_delimiter = ',', value_parser = parse_label)]
    pub node_selector: Vec<(String, String)>,
    /// The Kubernetes backend: whether the cluster's network plugin enforces NetworkPolicy
    /// (Calico, Cilium …; bai cannot see it). `enforced`: kernels under an egress policy
    /// other than `open` get a NetworkPolicy each; `node`: the agent enforces each kernel's
    /// policy and isolation itself, with nftables in the pod's own network namespace (it
    /// runs on the kernels' node as root, with `--runner-reach socket`); `not-enforced`:
    /// the agent takes only sessions of `open` groups.
    #[arg(
        long = "network-policies",
        env = "BAI_KUBE_NETWORK_POLICIES",
        value_enum,
        default_value = "not-enforced"
    )]
    pub network_policies: NetworkPolicies,
    /// The Kubernetes backend: how the agent reaches its kernels' runners. `socket` (the
    /// default): their Unix socket in the kernel's directory on the node; `network`: the
    /// pod's IP at port 2001, each connection opening with the kernel's token, and the pods
    /// need nothing of the node's disk (with `--runner-image`).
    #[arg(
        long = "runner-reach",
        env = "BAI_KUBE_RUNNER_REACH",
        value_enum,
        default_value = "socket"
    )]
    pub runner_reach: RunnerReach,
    /// The Kubernetes backend with `--runner-reach network`: an image holding
    /// `/usr/local/bin/bai-krunner` (the agent's own, `images/agent`) that every offered node
    /// has or can pull; each kernel pod's init container copies the runner from it, so the
    /// pods need nothing of the node's disk.
    #[arg(
        long = "runner-image",
        env = "BAI_KUBE_RUNNER_IMAGE",
        value_name = "IMAGE"
    )]
    pub runner_image: Option<String>,
    /// The Kubernetes backend: offer every usable node the selector matches, each joining as
    /// an agent of its own (`NAME-NODE`, or `NODE` without `--name`), nodes that come later
    /// too; needs `--runner-reach network`. Without it the agent offers one node.
    #[arg(long = "each-node", env = "BAI_KUBE_EACH_NODE")]
    pub each_node: bool,
    /// Where the agent keeps the credential the manager gives it on its first join (without
    /// it a restarted agent is refused its own id): `file`, in the data dir (the default), or
    /// with the Kubernetes backend `secret`, a Secret per agent id in the kernels' namespace,
    /// for an agent in a pod whose data dir goes with the pod (needs rbac-network.yaml).
    #[arg(
        long,
        env = "BAI_AGENT_CREDENTIALS",
        value_enum,
        default_value = "file"
    )]
    pub credentials: crate::credentials::Place,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RunnerReach {
    /// The runner's socket in the kernel's run directory on the node.
    Socket,
    /// The pod's IP, with the kernel's token.
    Network,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum NetworkPolicies {
    /// The cluster's network plugin enforces NetworkPolicy.
    Enforced,
    /// It does not, or nobody checked (the default).
    NotEnforced,
    /// The agent enforces them itself, with nftables in each kernel pod's network
    /// namespace (the agent on the kernels' node as root, `--runner-reach socket`).
    Node,
}

fn parse_label(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("{s:?} is not KEY=VALUE")),
    }
}

/// What the agent for one node (`offer`; `None`: the first usable one) is given.
#[allow(clippy::too_many_arguments)]
pub fn kubernetes_config(
    args: &BackendArgs,
    node: &NodeArgs,
    id: &str,
    group: &str,
    data_dir: &Path,
    storage_hosts: BTreeMap<String, PathBuf>,
    manager_host: Option<String>,
    offer: Option<String>,
) -> Result<KubernetesAgentConfig> {
    let krunner = match node.krunner.clone() {
        Some(p) => p,
        None => std::env::current_exe()
            .context("cannot find baid's own path")?
            .with_file_name("bai-krunner"),
    };
    Ok(KubernetesAgentConfig {
        agent_id: id.to_string(),
        scaling_group: group.to_string(),
        kubeconfig: args.kubeconfig.clone(),
        namespace: args.namespace.clone(),
        node_selector: args.node_selector.iter().cloned().collect(),
        node: offer,
        data_dir: data_dir.to_path_buf(),
        krunner_path: krunner,
        storage_hosts,
        registry: node.registry.clone(),
        manager_host,
        network_policies: match args.network_policies {
            NetworkPolicies::Enforced => Enforcement::NetworkPolicy,
            NetworkPolicies::Node => Enforcement::Node,
            NetworkPolicies::NotEnforced => Enforcement::None,
        },
        runner_reach: match args.runner_reach {
            RunnerReach::Socket => bai_agent::kubernetes::RunnerReach::Socket,
            RunnerReach::Network => bai_agent::kubernetes::RunnerReach::Network,
        },
        runner_image: args.runner_image.clone(),
    })
}

/// Why `--network-policies node` cannot be used with these flags: the agent loads each
/// pod's rules from the kernels' own node, so it must share that node (`--runner-reach
/// socket`; an `--each-node` agent needs `network`).
pub fn check_enforcement(args: &BackendArgs) -> Result<(), String> {
    if args.network_policies == NetworkPolicies::Node && args.runner_reach != RunnerReach::Socket {
        return Err(
            "--network-policies node needs --runner-reach socket: the agent loads each \
             kernel pod's rules on the pod's own node, so it runs there"
                .into(),
        );
    }
    Ok(())
}

/// The Kubernetes backend's error as the one line it is printed as.
pub fn one_line(e: &bai_agent::KubeError) -> String {
    e.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Prints why the Kubernetes backend cannot start and exits 2.
pub fn cannot_start(why: &str) -> ! {
    eprintln!("Error: the Kubernetes backend cannot start: {why}");
    std::process::exit(2);
}

/// The Kubernetes agent, or one line on stderr and exit 2 when the cluster cannot be used
/// (a kubeconfig that does not work, no node to offer, no namespace).
pub async fn kubernetes_agent(config: KubernetesAgentConfig) -> Result<KubernetesAgent> {
    match KubernetesAgent::connect(config).await {
        Ok(a) => Ok(a),
        Err(e) => cannot_start(&one_line(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_selectors_are_key_value_pairs() {
        assert_eq!(
            parse_label("gpu = a100"),
            Ok(("gpu".to_string(), "a100".to_string()))
        );
        assert_eq!(parse_label("a="), Ok(("a".to_string(), String::new())));
        assert!(parse_label("novalue").is_err());
        assert!(parse_label("=x").is_err());
    }

    #[derive(clap::Parser)]
    struct Flags {
        #[command(flatten)]
        backend: BackendArgs,
    }

    fn flags(args: &[&str]) -> BackendArgs {
        let mut argv = vec!["baid"];
        argv.extend_from_slice(args);
        <Flags as clap::Parser>::try_parse_from(argv)
            .expect("parse")
            .backend
    }

    #[test]
    fn node_enforcement_needs_the_agent_on_the_kernels_node() {
        let on_node = flags(&["--backend", "kubernetes", "--network-policies", "node"]);
        assert_eq!(on_node.network_policies, NetworkPolicies::Node);
        assert_eq!(check_enforcement(&on_node), Ok(()));
        let elsewhere = flags(&[
            "--backend",
            "kubernetes",
            "--network-policies",
            "node",
            "--runner-reach",
            "network",
        ]);
        let why = check_enforcement(&elsewhere).expect_err("refused");
        assert!(
            why.starts_with("--network-policies node needs --runner-reach socket"),
            "{why}"
        );
        assert!(!why.contains('\n'), "{why}");
        let plugin = flags(&[
            "--network-policies",
            "enforced",
            "--runner-reach",
            "network",
        ]);
        assert_eq!(check_enforcement(&plugin), Ok(()));
    }
}

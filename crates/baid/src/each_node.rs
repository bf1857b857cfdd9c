//! `baid agent --backend kubernetes --each-node --runner-reach network`: one process offers
//! every usable node the selector matches, each node joining the manager as an agent of its
//! own, so bai's scheduler places kernels node by node as it does on Docker agents (one
//! node's free room is one agent's offer, and "why is my session waiting" names the node).
//!
//! Each node's agent is a [`KubernetesAgent`] that offers only that node, named `NAME-NODE`
//! (`NODE` without `--name`), with its own credential (a file, or with `--credentials
//! secret` a Secret: what a Deployment's pod needs); all use the one join token.
//! Detached pods (`--runner-reach network`) need nothing of this process's machine, so the
//! process may run anywhere that reaches the API server and the pod network. The nodes are
//! listed again every [`RELIST`]: a node that comes (or becomes usable) joins; a node that
//! goes stays joined with nothing offered (its kernels are handled as a lost node's, as for
//! one agent per node), and offers again when it is back.

use crate::backend::{BackendArgs, cannot_start, kubernetes_config, one_line};
use crate::node::NodeArgs;
use anyhow::Result;
use bai_agent::KubernetesAgent;
use bai_agent::kubernetes::NodeLister;
use bai_core::agent::AgentRpc;
use bai_link::join::{JoinConfig, JoinError};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How often the nodes are listed again.
pub const RELIST: Duration = Duration::from_secs(30);

/// What every node's agent shares.
pub struct Shared {
    /// `--name`, the prefix of every node's agent id.
    pub name: Option<String>,
    pub group: String,
    pub data_dir: PathBuf,
    pub storage_hosts: BTreeMap<String, PathBuf>,
    pub manager_host: Option<String>,
    /// Where each node's agent keeps its credential.
    pub credentials: crate::credentials::Place,
    /// The join, its agent id and credential store set per node.
    pub join: JoinConfig,
}

/// The agent id of `node`'s agent.
pub fn agent_id(name: Option<&str>, node: &str) -> String {
    match name {
        Some(n) => format!("{n}-{node}"),
        None => node.to_string(),
    }
}

/// Why `--each-node` cannot be used with these flags.
pub fn check(args: &BackendArgs) -> Result<(), String> {
    if args.runner_reach != crate::backend::RunnerReach::Network {
        return Err(
            "--each-node needs --runner-reach network: an agent that offers several \
                    nodes reaches their kernels over the pod network, in pods that need \
                    nothing of its own node"
                .into(),
        );
    }
    Ok(())
}

/// One node's agent and its join.
struct Joined {
    agent: KubernetesAgent,
    join: tokio::task::JoinHandle<()>,
}

/// Runs until the shutdown signal: every usable node joined as its own agent.
pub async fn run(backend: &BackendArgs, node: &NodeArgs, shared: Shared) -> Result<()> {
    if let Err(why) = check(backend) {
        cannot_start(&why);
    }
    let selector: BTreeMap<String, String> = backend.node_selector.iter().cloned().collect();
    let nodes_now = NodeLister::connect(backend.kubeconfig.as_deref(), selector);
    let lister = match nodes_now.await {
        Ok(l) => l,
        Err(e) => cannot_start(&one_line(&e)),
    };
    let first = match lister.usable().await {
        Ok(n) => n,
        Err(e) => cannot_start(&one_line(&e)),
    };
    let mut joined: HashMap<String, Joined> = HashMap::new();
    let mut nodes = first;
    let mut first_round = true;
    loop {
        let new: Vec<String> = nodes
            .iter()
            .filter(|n| !joined.contains_key(*n))
            .cloned()
            .collect();
        for n in &new {
            match join_node(backend, node, &shared, n).await {
                Ok(j) => {
                    joined.insert(n.clone(), j);
                }
                // The first round's failure is the command's: one line, exit 2.
                Err(why) if first_round => cannot_start(&why),
                Err(why) => tracing::warn!(node = %n, %why, "a node's agent cannot start"),
            }
        }
        first_round = false;
        tokio::select! {
            _ = tokio::time::sleep(RELIST) => {}
            _ = crate::shutdown_signal() => break,
        }
        match lister.usable().await {
            Ok(n) => nodes = n,
            Err(e) => tracing::warn!(error = %one_line(&e), "cannot list the nodes again"),
        }
    }
    for (_, j) in joined {
        j.join.abort();
        j.agent.stop().await;
    }
    Ok(())
}

/// Starts `n`'s agent and its join.
async fn join_node(
    backend: &BackendArgs,
    node: &NodeArgs,
    shared: &Shared,
    n: &str,
) -> Result<Joined, String> {
    let id = agent_id(shared.name.as_deref(), n);
    let config = kubernetes_config(
        backend,
        node,
        &id,
        &shared.group,
        &shared.data_dir,
        shared.storage_hosts.clone(),
        shared.manager_host.clone(),
        Some(n.to_string()),
    )
    .map_err(|e| e.to_string())?;
    let agent = KubernetesAgent::connect(config)
        .await
        .map_err(|e| format!("node {n}: {}", one_line(&e)))?;
    println!(
        "bai agent {id}: Kubernetes node {n} (namespace {})",
        agent.namespace()
    );
    let join = JoinConfig {
        agent_id: id.clone(),
        credentials: crate::credentials::store(
            shared.credentials,
            shared.data_dir.join(format!("agent-credential-{id}")),
            Some(&agent),
        ),
        ..shared.join.clone()
    };
    let rpc: Arc<dyn AgentRpc> = Arc::new(agent.clone());
    let task = tokio::spawn(async move {
        match bai_link::join::run(join, rpc).await {
            Ok(()) => {}
            Err(JoinError::Refused(reason)) => {
                tracing::error!(agent = %id, %reason, "the manager refused this node's agent");
                eprintln!("Error: the manager refused agent {id}: {reason}");
            }
            Err(e) => tracing::error!(agent = %id, error = %e, "a node's agent stopped"),
        }
    });
    Ok(Joined { agent, join: task })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_node_joins_under_its_own_name() {
        assert_eq!(agent_id(Some("k8s"), "gpu-3"), "k8s-gpu-3");
        assert_eq!(agent_id(None, "gpu-3"), "gpu-3");
    }
}

//! [`KubernetesAgent`]: the agent RPC interface on a Kubernetes cluster. A peer of
//! `docker/`: the same runner protocol ([`crate::krunner_proto`]) and the same kernel
//! layout, with Kubernetes running the containers.
//!
//! - A kernel is one Pod (`bai-k-<kernel id>`, [`pod::kernel_pod`]) in the agent's
//!   namespace, pinned to the node bai chose by a required node affinity.
//! - By default (`--runner-reach socket`) the agent runs on that node: the pod's runner
//!   binary, its socket directory and its scratch home are hostPath volumes under the
//!   agent's data directory, the agent talks to krunner over the socket ([`crate::runner`],
//!   the Docker backend's client), and uploads, dotfiles and `/etc` files go into those
//!   directories ([`crate::kernel_files`]).
//! - Detached (`--runner-reach network`, [`reach`]): the pod needs nothing of the node's
//!   disk. An init container copies the runner in, the home and the run directory are
//!   emptyDirs, the token, dotfiles and `/etc` files travel in the kernel's Secret
//!   ([`secret`]), the agent reaches krunner at the pod's IP with the token, and uploads and
//!   host tables go through it ([`handover`]).
//! - Downloads, listings and counters come from krunner either way.
//! - One watch over the agent's pods ([`watch`]) reports kernels that end on their own.
//! - A cluster session's kernels find each other by hostname through the session's host
//!   table at `/etc/hosts` ([`hosts`]) and `ssh sub1` with the session's keys, as on Docker.
//! - Egress: a kernel under a policy other than `open` gets a NetworkPolicy of its own,
//!   made before its pod and owned by it ([`egress`]), when the admin says the cluster's
//!   network plugin enforces them (`--network-policies enforced`).
//! - Capacity: the node's allocatable less what the pods that are not this agent's kernels
//!   request ([`capacity::offered`]), kept current by a watch on the node and those pods
//!   ([`offer`]).
//! - Warm pools ([`pool`]): pods started ahead for the shapes the manager asks for, each
//!   a runner waiting for its session; a create of that shape takes one (relabelled as the
//!   kernel's, bound to the session's environment) instead of waiting for a pod to start.

mod accounts;
pub mod capacity;
mod client;
pub mod credential;
mod egress;
mod error;
pub mod gpus;
mod handover;
mod hosts;
mod images;
mod init;
pub mod labels;
mod layout;
mod lifecycle;
pub mod observe;
mod offer;
mod place;
pub mod pod;
mod pool;
pub mod quantity;
mod reach;
mod ready;
mod rpc;
mod secret;
#[cfg(test)]
mod test_spec;
mod watch;

pub use error::KubeError;
pub use reach::{RUNNER_PORT, RunnerReach};

use crate::paths::KernelDirs;
use bai_core::agent::{AgentError, EventFanout};
use k8s_openapi::api::core::v1::{Pod, Secret};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::api::LogParams;
use kube::{Api, Client};
use observe::Observed;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use uuid::Uuid;

/// The default namespace of bai's pods.
pub const DEFAULT_NAMESPACE: &str = "bai";

/// Who enforces the kernels' egress policies and their isolation from other sessions' pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Enforcement {
    /// Nobody (the admin has not said the cluster does): only sessions of `open` groups.
    #[default]
    None,
    /// The cluster's network plugin, from one NetworkPolicy per kernel ([`egress::policy`]).
    NetworkPolicy,
    /// The agent, with nftables in each kernel pod's own network namespace
    /// ([`egress::netns`]): for plugins that do not enforce NetworkPolicy. The agent runs on
    /// the kernels' node as root (`--runner-reach socket`).
    Node,
}

#[derive(Debug, Clone)]
pub struct KubernetesAgentConfig {
    pub agent_id: String,
    pub scaling_group: String,
    /// None: the service account of the pod the agent runs in.
    pub kubeconfig: Option<PathBuf>,
    /// Made when missing.
    pub namespace: String,
    /// Only nodes with all these labels are offered.
    pub node_selector: BTreeMap<String, String>,
    /// The one node to offer (it must be usable and match the selector); `None`: the first
    /// usable one by name. A process that offers every node runs one agent per node, each
    /// naming its own.
    pub node: Option<String>,
    /// Kernel directories go under `data_dir/kernels/<kernel id>/{work,run}` on the node.
    pub data_dir: PathBuf,
    /// The runner binary on the node, mounted read-only into every pod.
    pub krunner_path: PathBuf,
    /// Storage hosts, mounted at the same path on every node (name → path).
    pub storage_hosts: BTreeMap<String, PathBuf>,
    /// The cluster's image registry (`HOST:PORT`), for pulls and pushes through the node's
    /// engine.
    pub registry: Option<String>,
    /// The manager's host as the agent dials it (closed to kernels under `default`).
    pub manager_host: Option<String>,
    /// Who enforces the kernels' egress policies and isolation (nobody: kernels under a
    /// policy other than `open` are refused).
    pub network_policies: Enforcement,
    /// How the agent reaches its kernels' runners ([`reach`]).
    pub runner_reach: RunnerReach,
    /// Detached pods (`RunnerReach::Network`): the image whose `bai-krunner` their init
    /// container copies in (the agent's own image).
    pub runner_image: Option<String>,
}

pub(crate) struct Inner {
    pub config: KubernetesAgentConfig,
    pub client: Client,
    /// Pods in the agent's namespace.
    pub pods: Api<Pod>,
    /// NetworkPolicies in the agent's namespace (the kernels' egress policies).
    pub policies: Api<NetworkPolicy>,
    /// Secrets in the agent's namespace (detached kernels' own, [`secret`]).
    pub secrets: Api<Secret>,
    /// Detached kernels' runner tokens, as made or read back from their Secrets.
    tokens: Mutex<HashMap<Uuid, String>>,
    /// One change of the detached kernels' host tables at a time ([`handover`]).
    pub hosts_sent: tokio::sync::Mutex<()>,
    /// The node this agent offers.
    pub node: String,
    pub events: Arc<EventFanout>,
    /// What each kernel's pod said last (from the watch).
    states: Mutex<HashMap<Uuid, Observed>>,
    /// Woken at every change of `states`.
    changed: tokio::sync::Notify,
    /// Kernels whose end was handled (their late events are ignored).
    finished: Mutex<HashSet<Uuid>>,
    /// Kernels whose creation or end is being handled: one owner each.
    ending: Mutex<HashSet<Uuid>>,
    ended: tokio::sync::Notify,
    /// Whether the watch has listed the pods once.
    listed: tokio::sync::watch::Sender<bool>,
    /// The host tables of cluster sessions (their kernels by hostname).
    pub hosts: hosts::Tables,
    /// The node's container engine for image work, or why there is none.
    pub engine: images::NodeEngine,
    /// The pod of each kernel whose pod is not `bai-k-<kernel id>` (a claimed pool pod).
    names: Mutex<HashMap<Uuid, String>>,
    /// The warm pools: pods started ahead for the shapes the manager asks for.
    pub pools: Mutex<pool::Pools>,
    /// Wakes the pools' filler.
    pub pool_wake: tokio::sync::Notify,
    /// Whether pool pods' homes receive folders mounted on the node at a claim (decided at
    /// the first pool pod: [`pool::make::home_propagates`]).
    pub pool_folders: std::sync::OnceLock<bool>,
    /// How the node's GPUs are time-sliced, as last read ([`offer::read`]): what a pod's
    /// `cuda.shares` become.
    pub gpu_sharing: Mutex<Option<gpus::GpuSharing>>,
    /// Which images' pods need the kernel's user written into their account files
    /// ([`accounts`]), as the watch learns it.
    pub accounts: accounts::Known,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Inner {
    pub fn dirs(&self, kernel: Uuid) -> KernelDirs {
        KernelDirs::new(&self.config.data_dir, kernel)
    }

    /// How the node's GPUs are time-sliced, as last read.
    pub fn gpu_sharing(&self) -> Option<gpus::GpuSharing> {
        lock(&self.gpu_sharing).clone()
    }

    pub fn set_gpu_sharing(&self, sharing: Option<gpus::GpuSharing>) {
        *lock(&self.gpu_sharing) = sharing;
    }

    /// The name of a kernel's pod: `bai-k-<kernel id>`, or the pool pod it was given.
    pub fn pod_of(&self, kernel: Uuid) -> String {
        lock(&self.names)
            .get(&kernel)
            .cloned()
            .unwrap_or_else(|| pod::pod_name(kernel))
    }

    /// The kernel's pod is `name` (a pool pod claimed for it, or one re-adopted).
    pub fn name_pod(&self, kernel: Uuid, name: &str) {
        if name != pod::pod_name(kernel) {
            lock(&self.names).insert(kernel, name.to_string());
        }
    }

    /// The kernel's pod is `bai-k-<kernel id>` again (a claim that failed before its pod was
    /// relabelled).
    pub fn unname_pod(&self, kernel: Uuid) {
        lock(&self.names).remove(&kernel);
    }

    pub fn pools(&self) -> MutexGuard<'_, pool::Pools> {
        lock(&self.pools)
    }

    pub fn state(&self, kernel: Uuid) -> Option<Observed> {
        lock(&self.states).get(&kernel).cloned()
    }

    pub fn set_state(&self, kernel: Uuid, observed: Observed) {
        if lock(&self.finished).contains(&kernel) {
            return;
        }
        lock(&self.states).insert(kernel, observed);
        self.changed.notify_waiters();
    }

    pub fn is_known(&self, kernel: Uuid) -> bool {
        lock(&self.states).contains_key(&kernel)
    }

    pub fn knows(&self, kernel: Uuid) -> bool {
        self.is_known(kernel) || lock(&self.ending).contains(&kernel)
    }

    pub fn known_kernels(&self) -> Vec<Uuid> {
        lock(&self.states).keys().copied().collect()
    }

    /// Drops what is known of a kernel whose creation failed (it may be made again).
    pub fn forget(&self, kernel: Uuid) {
        lock(&self.states).remove(&kernel);
        lock(&self.tokens).remove(&kernel);
        self.changed.notify_waiters();
    }

    /// A detached kernel's runner token, where known here.
    pub fn token(&self, kernel: Uuid) -> Option<String> {
        lock(&self.tokens).get(&kernel).cloned()
    }

    pub fn set_token(&self, kernel: Uuid, token: String) {
        lock(&self.tokens).insert(kernel, token);
    }

    /// A kernel whose end was handled: later events about it are ignored.
    pub fn finish(&self, kernel: Uuid) {
        lock(&self.finished).insert(kernel);
        lock(&self.names).remove(&kernel);
        self.forget(kernel);
    }

    pub fn claim_end(&self, kernel: Uuid) -> bool {
        lock(&self.ending).insert(kernel)
    }

    pub fn release_end(&self, kernel: Uuid) {
        lock(&self.ending).remove(&kernel);
        self.ended.notify_waiters();
    }

    pub async fn wait_end(&self, kernel: Uuid) {
        loop {
            let woken = self.ended.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            if !lock(&self.ending).contains(&kernel) {
                return;
            }
            woken.await;
        }
    }

    /// Waits for the next change of any kernel's state.
    pub async fn changed(&self) {
        self.changed.notified().await;
    }

    pub fn mark_listed(&self) {
        self.listed.send_replace(true);
    }
}

/// Stops a watch when the last clone of the agent goes.
struct WatchGuard(tokio::task::AbortHandle);

impl Drop for WatchGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The Kubernetes-backed agent. Cheap to clone (all clones share one state).
#[derive(Clone)]
pub struct KubernetesAgent {
    inner: Arc<Inner>,
    _watch: Arc<WatchGuard>,
    _offer: Arc<WatchGuard>,
    _pools: Arc<WatchGuard>,
}

impl KubernetesAgent {
    /// Connects to the API server (the kubeconfig must work), makes the namespace if
    /// missing, picks the node to offer, checks the runner binary and the data directory,
    /// and starts watching this agent's pods (re-adopting the running ones).
    pub async fn connect(mut config: KubernetesAgentConfig) -> Result<KubernetesAgent, KubeError> {
        let client = client::connect(config.kubeconfig.as_deref()).await?;
        let nodes = client::usable_nodes(&client, &config.node_selector).await?;
        let chosen = match &config.node {
            Some(want) => nodes
                .iter()
                .find(|n| n.metadata.name.as_deref() == Some(want.as_str())),
            None => nodes.first(),
        };
        let Some(node) = chosen.and_then(|n| n.metadata.name.clone()) else {
            return Err(match &config.node {
                Some(want) => KubeError::NoNode(format!(
                    "the node {want} is not Ready and schedulable, or does not match the node \
                     selector {}",
                    client::selector(&config.node_selector)
                )),
                None => no_usable_node(&config.node_selector),
            });
        };
        if config.node.is_none() && nodes.len() > 1 {
            tracing::warn!(offered = %node, usable = nodes.len(),
                "an agent offers one node: run one agent per node (the DaemonSet), or one process \
             for every node with --each-node and --runner-reach network");
        }
        client::ensure_namespace(&client, &config.namespace).await?;
        match config.runner_reach {
            // Detached pods: the runner comes from an image, nothing from this machine.
            RunnerReach::Network => {
                if config
                    .runner_image
                    .as_deref()
                    .is_none_or(|i| i.trim().is_empty())
                {
                    return Err(KubeError::NoNode(
                        "--runner-reach network needs --runner-image: an image with \
                         /usr/local/bin/bai-krunner (the agent's own, images/agent) that every \
                         node can run"
                            .into(),
                    ));
                }
            }
            RunnerReach::Socket => {
                config.krunner_path = crate::krunner_link::runner_file(&config.krunner_path)
                    .ok_or_else(|| {
                        KubeError::NoNode(format!(
                            "the kernel runner {} is missing",
                            config.krunner_path.display()
                        ))
                    })?;
            }
        }
        config.data_dir =
            crate::paths::prepare_data_dir(&config.data_dir).map_err(KubeError::NoNode)?;
        // The `/etc` files mounted from this machine (a detached kernel's are in its Secret).
        if config.runner_reach == RunnerReach::Socket {
            crate::kernel_files::etc::write(&config.data_dir)
                .map_err(|e| KubeError::NoNode(e.to_string()))?;
        }
        let events = Arc::new(EventFanout::default());
        // The engine on this machine is the node's only where the agent runs on the node it
        // offers (socket mode); a detached agent may run anywhere.
        let engine = match config.runner_reach {
            RunnerReach::Socket => {
                images::connect(
                    &node,
                    chosen,
                    &config.data_dir,
                    config.registry.clone(),
                    events.clone(),
                )
                .await
            }
            RunnerReach::Network => Err(format!(
                "an agent with --runner-reach network need not run on node {node}, so it does \
                 not use the node's container engine: commit and image work are done by an \
                 agent on the node (--runner-reach socket)"
            )),
        };
        match &engine {
            Ok(_) => tracing::info!(%node, "commit and images through the node's Docker engine"),
            Err(why) => tracing::info!(%node, %why, "no commit or image work on this node"),
        }
        tracing::info!(agent = %config.agent_id, namespace = %config.namespace, %node,
            "the Kubernetes backend is ready");
        let pods = Api::namespaced(client.clone(), &config.namespace);
        let policies = Api::namespaced(client.clone(), &config.namespace);
        let secrets = Api::namespaced(client.clone(), &config.namespace);
        let inner = Arc::new(Inner {
            config,
            client,
            pods,
            policies,
            secrets,
            tokens: Mutex::new(HashMap::new()),
            hosts_sent: tokio::sync::Mutex::new(()),
            node,
            events,
            states: Mutex::new(HashMap::new()),
            changed: tokio::sync::Notify::new(),
            finished: Mutex::new(HashSet::new()),
            ending: Mutex::new(HashSet::new()),
            ended: tokio::sync::Notify::new(),
            listed: tokio::sync::watch::channel(false).0,
            hosts: hosts::Tables::default(),
            engine,
            names: Mutex::new(HashMap::new()),
            pools: Mutex::new(pool::Pools::default()),
            pool_wake: tokio::sync::Notify::new(),
            pool_folders: std::sync::OnceLock::new(),
            gpu_sharing: Mutex::new(None),
            accounts: accounts::Known::default(),
        });
        let watch = Arc::new(WatchGuard(watch::spawn(&inner)));
        // Re-adoption: the first list of this agent's pods is in before anyone asks.
        let mut listed = inner.listed.subscribe();
        let _ =
            tokio::time::timeout(std::time::Duration::from_secs(10), listed.wait_for(|l| *l)).await;
        egress::sweep(&inner).await;
        secret::sweep(&inner).await;
        pool::sweep(&inner).await;
        // The offer from now on: what the manager reads when the agent joins is read anew
        // then, so a change between here and there is reported or read, never lost.
        let first = offer::read(&inner).await?;
        let offer = Arc::new(WatchGuard(offer::spawn(&inner, first)));
        let pools = Arc::new(WatchGuard(pool::fill::spawn(&inner)));
        Ok(KubernetesAgent {
            inner,
            _watch: watch,
            _offer: offer,
            _pools: pools,
        })
    }

    /// The agent is stopping: its pool pods (nobody's) go; its kernels' pods stay, to be
    /// re-adopted by the next run.
    pub async fn stop(&self) {
        pool::stop(&self.inner).await;
    }

    /// The node this agent offers.
    pub fn node(&self) -> &str {
        &self.inner.node
    }

    /// The namespace of its pods.
    pub fn namespace(&self) -> &str {
        &self.inner.config.namespace
    }

    /// The agents' credentials kept in Secrets of this agent's namespace
    /// (`baid agent --credentials secret`).
    pub fn credential_secrets(&self) -> credential::CredentialSecrets {
        credential::CredentialSecrets::new(self.inner.client.clone(), &self.inner.config.namespace)
    }

    /// Where a kernel of this agent's runner answers.
    async fn runner(&self, kernel: Uuid) -> Result<crate::runner::RunnerAt, AgentError> {
        if !self.inner.knows(kernel) {
            return Err(AgentError::KernelNotFound(kernel));
        }
        ready::runner_of(&self.inner, kernel).await
    }
}

/// The nodes a process offering every node (`baid agent --each-node`) may offer, listed
/// again as often as it asks, over one connection.
pub struct NodeLister {
    client: Client,
    node_selector: BTreeMap<String, String>,
}

impl NodeLister {
    /// Connects with `kubeconfig` (one that does not work is an error).
    pub async fn connect(
        kubeconfig: Option<&std::path::Path>,
        node_selector: BTreeMap<String, String>,
    ) -> Result<NodeLister, KubeError> {
        Ok(NodeLister {
            client: client::connect(kubeconfig).await?,
            node_selector,
        })
    }

    /// The usable nodes (Ready, schedulable, matching) by name; none is an error that says
    /// so, as an agent offering one node says it.
    pub async fn usable(&self) -> Result<Vec<String>, KubeError> {
        let names: Vec<String> = client::usable_nodes(&self.client, &self.node_selector)
            .await?
            .into_iter()
            .filter_map(|n| n.metadata.name)
            .collect();
        if names.is_empty() {
            return Err(no_usable_node(&self.node_selector));
        }
        Ok(names)
    }
}

/// No node of the cluster (or none that `node_selector` matches) is Ready and schedulable.
fn no_usable_node(node_selector: &BTreeMap<String, String>) -> KubeError {
    let sel = client::selector(node_selector);
    KubeError::NoNode(if sel.is_empty() {
        "no node of the cluster is Ready and schedulable".into()
    } else {
        format!("no Ready, schedulable node matches the node selector {sel}")
    })
}

/// Kubernetes names architectures as Go does (`amd64`, `arm64`); bai as the kernel does.
fn normalize_arch(go: &str) -> String {
    match go {
        "amd64" => "x86_64".into(),
        "arm64" => "aarch64".into(),
        other => other.into(),
    }
}

/// Log tail for the logs call.
pub(crate) fn log_params() -> LogParams {
    LogParams {
        container: Some(pod::CONTAINER.into()),
        limit_bytes: i64::try_from(crate::LOG_TAIL_BYTES).ok(),
        ..Default::default()
    }
}

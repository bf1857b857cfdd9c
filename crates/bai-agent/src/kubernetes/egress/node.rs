//! `--network-policies node`: the agent loads each kernel pod's rules ([`super::netns`])
//! into the pod's own network namespace before the kernel starts.
//!
//! Order, so a kernel never runs a moment without its rules: the pod's runner, its first
//! process, waits at the gate ([`GATE_VAR`](crate::krunner_proto::GATE_VAR) names
//! [`GATE_FILE`] in the kernel's run directory) and starts nothing before it opens; once
//! the kernel's container runs, the agent finds its process on the node (by the container
//! id Kubernetes reports, which names its cgroup under every runtime), loads the table into
//! its network namespace, the pod's (`nsenter --net … nft -f -`), and only then writes the
//! file. Rules that cannot be loaded fail the kernel (its pod is removed); the gate never
//! opens without them.
//!
//! A pool pod (made before anyone knows its session) gets the same gate and a table that
//! lets nothing out and only its node in ([`netns::pool_script`]); the claim replaces it with
//! the session's in one transaction, before the runner is bound to the session, so the
//! session's code runs under its own rules only.
//!
//! A cluster session's pods let each other in (and, under `closed`, out): each pod's `peers`
//! sets get every address of the session as its pods run, in the same step as the host
//! tables ([`super::super::handover`]). The agent runs on the kernels' node, in its PID and
//! network namespaces, as root (the tests run it so; in a pod: `hostPID`, `NET_ADMIN` and
//! `SYS_ADMIN` to enter namespaces).

use super::super::observe::named;
use super::super::pod::{CONTAINER, GATE_FILE};
use super::super::{Enforcement, Inner};
use super::netns::{self, PodRules};
use bai_core::agent::{AgentError, KernelSpec};
use bai_core::egress::EgressMode;
use std::collections::BTreeSet;
use std::net::IpAddr;
use std::path::Path;
use std::time::Duration;
use uuid::Uuid;

/// How often the agent looks for the gated kernel's process.
const LOOK_EVERY: Duration = Duration::from_millis(200);

/// A process of container `id` on this node, by its cgroup.
fn container_process(id: &str) -> Option<u32> {
    let dir = std::fs::read_dir("/proc").ok()?;
    dir.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
        netns::in_container(&cgroup, id).then_some(pid)
    })
}

/// A process of pod `pod`'s kernel container (so in the pod's network namespace), once
/// Kubernetes reports that container running.
async fn find_in(inner: &Inner, pod: &str) -> Option<u32> {
    let pod = inner.pods.get_opt(pod).await.ok()??;
    let status = pod.status?;
    let id = named(&status.container_statuses, CONTAINER)
        .filter(|c| c.state.as_ref().is_some_and(|s| s.running.is_some()))?
        .container_id
        .clone()?;
    let id = netns::container_id(&id)?.to_string();
    tokio::task::spawn_blocking(move || container_process(&id))
        .await
        .ok()
        .flatten()
}

/// A process in the network namespace of `kernel`'s pod.
async fn find(inner: &Inner, kernel: Uuid) -> Option<u32> {
    find_in(inner, &inner.pod_of(kernel)).await
}

/// A process of pod `pod`'s kernel container once it runs (its runner, waiting at the
/// gate), looking until `give_up` says why not.
async fn gated_process(
    inner: &Inner,
    pod: &str,
    give_up: impl Fn() -> Result<(), AgentError>,
) -> Result<u32, AgentError> {
    loop {
        if let Some(pid) = find_in(inner, pod).await {
            return Ok(pid);
        }
        give_up()?;
        tokio::time::sleep(LOOK_EVERY).await;
    }
}

/// Loads `script` into the network namespace of process `pid`.
async fn load(pid: u32, script: &str) -> Result<(), String> {
    let net = format!("--net=/proc/{pid}/ns/net");
    crate::nft::load(
        "nsenter",
        &[&net, "nft", "-f", "-"],
        script,
        "install util-linux and nftables",
    )
    .await
}

/// Every address of this machine (the kernels' node).
async fn host_addresses() -> Result<BTreeSet<IpAddr>, AgentError> {
    let out = tokio::process::Command::new("ip")
        .args(["-j", "addr", "show"])
        .output()
        .await
        .map_err(|e| AgentError::Runtime(format!("cannot run ip ({e}); install iproute2")))?;
    if !out.status.success() {
        return Err(AgentError::Runtime(format!(
            "cannot list the node's addresses: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(netns::host_addresses(&String::from_utf8_lossy(&out.stdout)))
}

/// Whether `kernel`'s rules are in: its gate is opened only after they are (a claimed pool
/// pod's: the pool's until the claim loads the session's, under the same lock).
fn loaded(inner: &Inner, kernel: Uuid) -> bool {
    inner.dirs(kernel).run.join(GATE_FILE).exists()
}

/// The node as seen from the pod of process `pid`: its addresses as Kubernetes reports
/// them, every address of its own (the agent runs in its network namespace) and the pod's
/// gateway.
async fn node_addresses(inner: &Inner, pid: u32) -> Result<BTreeSet<IpAddr>, AgentError> {
    let mut node: BTreeSet<IpAddr> = super::own_node(inner).await?.into_iter().collect();
    node.extend(host_addresses().await?);
    if let Some(g) = std::fs::read_to_string(format!("/proc/{pid}/net/route"))
        .ok()
        .and_then(|r| netns::gateway(&r))
    {
        node.insert(IpAddr::V4(g));
    }
    Ok(node)
}

/// Loads `spec`'s session rules into the network namespace of process `pid` (its pod's).
/// Returns the session tables' lock, held: the session's addresses and this pod's rules
/// change together (a sibling that comes up meanwhile is never missed), and the caller
/// opens the gate under it.
async fn load_session<'a>(
    inner: &'a Inner,
    spec: &KernelSpec,
    pid: u32,
) -> Result<tokio::sync::MutexGuard<'a, ()>, AgentError> {
    let kernel = spec.kernel_id;
    let node = node_addresses(inner, pid).await?;
    let nodes = if spec.egress.policy.mode == EgressMode::Default {
        super::closed_nodes(inner, spec, &[]).await
    } else {
        BTreeSet::new()
    };
    let one = inner.hosts_sent.lock().await;
    let (_, peers) = inner.hosts.peers(spec.session_id);
    let script = netns::script(&PodRules {
        policy: &spec.egress.policy,
        node: &node,
        nodes: &nodes,
        peers: &peers,
    });
    load(pid, &script).await.map_err(|e| {
        AgentError::Runtime(format!(
            "cannot load the egress rules of kernel {kernel} into its pod's network \
             namespace: {e}"
        ))
    })?;
    tracing::info!(kernel = %kernel, policy = %spec.egress.policy.summary(), pid,
        "egress rules loaded into the pod's network namespace");
    Ok(one)
}

/// Opens the gate of the pod whose run directory is `run`: its kernel starts.
fn open_gate(run: &Path) -> Result<(), AgentError> {
    std::fs::write(run.join(GATE_FILE), b"").map_err(|e| {
        let run = run.display();
        AgentError::Runtime(format!("cannot open the gate in {run}: {e}"))
    })
}

/// Loads the rules of the kernel whose pod was just made, then opens its gate; fails when
/// the kernel's container does not run `within` (the kernel's ready limit). Returns at once
/// where the agent does not enforce policies itself.
pub async fn apply(inner: &Inner, spec: &KernelSpec, within: Duration) -> Result<(), AgentError> {
    if inner.config.network_policies != Enforcement::Node {
        return Ok(());
    }
    let kernel = spec.kernel_id;
    let deadline = tokio::time::Instant::now() + within;
    let pid = gated_process(inner, &inner.pod_of(kernel), || {
        if tokio::time::Instant::now() < deadline {
            return Ok(());
        }
        Err(AgentError::NotReady(format!(
            "the container of kernel {kernel} did not run on node {} within {}s, so its \
             egress rules cannot be loaded",
            inner.node,
            within.as_secs()
        )))
    })
    .await?;
    let _one = load_session(inner, spec, pid).await?;
    open_gate(&inner.dirs(kernel).run)
}

/// A pool pod's rules (nobody's session yet: [`netns::pool_script`]), loaded once its
/// container runs (Kubernetes reports it so: the claim finds the pod's namespace the same
/// way), then its gate opened (its runner starts in its pool mode). `give_up` says why to
/// stop waiting (the pod was given up for room, or took too long). Returns at once where
/// the agent does not enforce policies itself.
pub async fn pool(
    inner: &Inner,
    pod: &str,
    run: &Path,
    give_up: impl Fn() -> Result<(), AgentError>,
) -> Result<(), AgentError> {
    if inner.config.network_policies != Enforcement::Node {
        return Ok(());
    }
    let pid = gated_process(inner, pod, give_up).await?;
    let script = netns::pool_script(&node_addresses(inner, pid).await?);
    load(pid, &script).await.map_err(|e| {
        AgentError::Runtime(format!(
            "cannot load pool pod {pod}'s rules into its network namespace: {e}"
        ))
    })?;
    open_gate(run)
}

/// At the claim of a pool pod for `spec` (the pod named for the kernel, before its runner
/// is bound): the session's rules replace the pool's, in one transaction, so the session's
/// code never runs under the pool's and never without rules. Returns at once where the
/// agent does not enforce policies itself.
pub async fn claimed(inner: &Inner, spec: &KernelSpec) -> Result<(), AgentError> {
    if inner.config.network_policies != Enforcement::Node {
        return Ok(());
    }
    let kernel = spec.kernel_id;
    let pid = find(inner, kernel).await.ok_or_else(|| {
        AgentError::Runtime(format!(
            "the pool pod {} given to kernel {kernel} is not running",
            inner.pod_of(kernel)
        ))
    })?;
    let _one = load_session(inner, spec, pid).await?;
    Ok(())
}

/// Every address of `session` known now goes into the `peers` sets of its pods on this
/// agent whose rules are loaded (the caller holds the session tables' lock, as [`apply`]
/// does from loading a pod's rules to opening its gate).
pub async fn peers(inner: &Inner, session: Uuid) -> Result<(), AgentError> {
    if inner.config.network_policies != Enforcement::Node {
        return Ok(());
    }
    let (kernels, addrs) = inner.hosts.peers(session);
    let script = netns::add_peers(&addrs);
    if script.is_empty() {
        return Ok(());
    }
    for kernel in kernels {
        if !loaded(inner, kernel) {
            continue; // its rules are made with the peers known then
        }
        let Some(pid) = find(inner, kernel).await else {
            // Its gate is open but its container not reported running yet: its own address
            // comes up later, and that change gives it every address known then.
            continue;
        };
        load(pid, &script).await.map_err(|e| {
            AgentError::Runtime(format!(
                "cannot let kernel {kernel}'s session in through its rules: {e}"
            ))
        })?;
    }
    Ok(())
}

//! A kernel's life as a pod: made and waited for until its runner answers (or Kubernetes
//! says it cannot start), listed by label, and removed (pod deleted, its grace period 0,
//! its NetworkPolicy and its directories on the node after it).

use super::error::{KubeError, is_not_found};
use super::observe::{Ended, Observed, Problem, why_pending};
use super::pod::{Placement, kernel_pod, pod_name};
use super::{Inner, egress, labels, log_params, pool};
use crate::kernel_files::{home, make_work_dir};
use crate::paths::KernelDirs;
use crate::runner;
use bai_core::agent::{AgentError, KernelCreated, KernelExit, KernelSpec};
use kube::api::{DeleteParams, ListParams, PostParams};
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// How long a kernel may take to become ready (bootstrap script included).
pub const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a deleted pod may take to go (its containers with it).
const GONE_TIMEOUT: Duration = Duration::from_secs(30);
const PING_EVERY: Duration = Duration::from_millis(20);
const POLL_GONE: Duration = Duration::from_millis(200);

pub async fn create(inner: &Arc<Inner>, spec: KernelSpec) -> Result<KernelCreated, AgentError> {
    let kernel = spec.kernel_id;
    if inner.is_known(kernel) || !inner.claim_end(kernel) {
        return Err(AgentError::BadRequest(format!(
            "kernel {kernel} exists on this agent already"
        )));
    }
    match create_claimed(inner, &spec).await {
        Ok(created) => {
            inner.release_end(kernel);
            // An end seen while the creation owned it is reported now.
            if let Some(Observed::Ended(e)) = inner.state(kernel) {
                report_end(inner, kernel, e);
            }
            Ok(created)
        }
        Err(e) => {
            tracing::info!(kernel = %kernel, error = %e, "the kernel could not start; removing its pod");
            remove(inner, kernel, None).await;
            inner.forget(kernel);
            inner.release_end(kernel);
            Err(e)
        }
    }
}

async fn create_claimed(
    inner: &Arc<Inner>,
    spec: &KernelSpec,
) -> Result<KernelCreated, AgentError> {
    let kernel = spec.kernel_id;
    if let Some(claimed) = pool::claim::claim(inner, spec).await {
        return claimed;
    }
    let dirs = inner.dirs(kernel);
    dirs.check_socket_path().map_err(AgentError::Runtime)?;
    make_work_dir(&dirs.work)?;
    make_work_dir(&dirs.run)?;
    home::fill(&dirs.work, &spec.dotfiles)?;
    let _ = std::fs::remove_file(&dirs.socket);
    let mut files: Vec<(String, String)> = Vec::new();
    let cluster = spec.cluster_info();
    if cluster.size > 1 {
        for (host, inside) in crate::kernel_files::cluster::ssh_files(&dirs.run, &cluster)? {
            files.push((host.display().to_string(), inside.to_string()));
        }
        let table =
            inner
                .hosts
                .join(spec.session_id, kernel, &cluster.place.hostname, &dirs.run)?;
        files.push((table.display().to_string(), "/etc/hosts".into()));
    }
    let placement = placement(inner, &dirs, files);
    let pod = kernel_pod(spec, &placement).map_err(KubeError::from)?;
    let started = Instant::now();
    // Its egress policy before the pod: the kernel never runs without it.
    let policy = egress::before_pod(inner, spec).await?;
    let made = inner
        .pods
        .create(&PostParams::default(), &pod)
        .await
        .map_err(KubeError::api(format_args!(
            "cannot create the pod of kernel {kernel}"
        )))?;
    if policy {
        let uid = made.metadata.uid.as_deref().unwrap_or_default();
        egress::own(inner, kernel, uid).await?;
    }
    wait_ready(inner, kernel).await?;
    let mut address = None;
    if cluster.size > 1 {
        match inner.state(kernel) {
            Some(Observed::Running(Some(addr))) => {
                inner.hosts.up(spec.session_id, kernel, addr)?;
                address = Some(addr);
            }
            _ => {
                return Err(AgentError::NotReady(format!(
                    "the pod of kernel {kernel} runs without an address, so its session's \
                     other kernels cannot reach it"
                )));
            }
        }
    }
    tracing::info!(kernel = %kernel, node = %inner.node, ms = started.elapsed().as_millis() as u64,
        "kernel ready");
    Ok(KernelCreated {
        kernel_id: kernel,
        container_id: made.metadata.uid.unwrap_or_else(|| pod_name(kernel)),
        cpuset: None,
        devices: Default::default(),
        // A multi-node session's kernels on other agents learn it through the manager.
        address,
    })
}

/// Where a kernel's pod goes and what it mounts: this agent's node and namespace, the
/// runner, the kernel's directories `dirs`, every kernel's `/etc` files and `more` (host →
/// inside).
pub(crate) fn placement(
    inner: &Inner,
    dirs: &KernelDirs,
    more: Vec<(String, String)>,
) -> Placement {
    let mut files: Vec<(String, String)> = crate::kernel_files::etc::files(&inner.config.data_dir)
        .into_iter()
        .map(|(host, inside)| (host.display().to_string(), inside.to_string()))
        .collect();
    files.extend(more);
    Placement {
        namespace: inner.config.namespace.clone(),
        agent_id: inner.config.agent_id.clone(),
        node: inner.node.clone(),
        krunner: inner.config.krunner_path.display().to_string(),
        run_dir: dirs.run.display().to_string(),
        work_dir: dirs.work.display().to_string(),
        files,
    }
}

/// Pings the runner until it answers; fails at once when Kubernetes says the pod cannot
/// start (no room, no image, no container) or ended.
pub(crate) async fn wait_ready(inner: &Inner, kernel: Uuid) -> Result<(), AgentError> {
    let socket = inner.dirs(kernel).socket;
    let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
    let mut evicted = false;
    loop {
        match inner.state(kernel) {
            // Pool pods may hold the room bai's scheduler counted as free: they give it
            // up, and Kubernetes places the pod once they are gone (until the deadline).
            Some(Observed::Waiting(Some(Problem::Unschedulable(_)))) if evicted => {}
            Some(Observed::Waiting(Some(Problem::Unschedulable(_))))
                if pool::evict_for(inner, kernel).await =>
            {
                evicted = true;
            }
            Some(Observed::Waiting(Some(Problem::Unschedulable(why)))) => {
                return Err(AgentError::InsufficientResources(format!(
                    "Kubernetes cannot place the kernel on node {}: {why}",
                    inner.node
                )));
            }
            Some(Observed::Waiting(Some(Problem::Image(why) | Problem::Create(why)))) => {
                return Err(AgentError::NotReady(why));
            }
            Some(Observed::Ended(e)) if e.oom_killed => {
                return Err(AgentError::NotReady(format!(
                    "the kernel ran out of memory before its runner was ready (OOMKilled, exit \
                     code {}); ask for more memory",
                    e.exit_code.map_or("none".into(), |c| c.to_string())
                )));
            }
            Some(Observed::Ended(e)) => {
                return Err(AgentError::NotReady(format!(
                    "the kernel's pod ended before its runner was ready: {} (exit code {})",
                    e.reason,
                    e.exit_code.map_or("none".into(), |c| c.to_string())
                )));
            }
            Some(Observed::Running(_)) if runner::ping(&socket).await.is_ok() => return Ok(()),
            _ => {}
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(not_ready_in_time(inner, kernel).await);
        }
        // The next state change, or the next ping.
        let _ = tokio::time::timeout(PING_EVERY, inner.changed()).await;
    }
}

/// Why a kernel was not ready within [`READY_TIMEOUT`]: a pod still Pending says so in
/// Kubernetes' words (placed on no node: no room, as the scheduler's Unschedulable is; bound
/// but never started by its kubelet: the container's waiting reason); a running pod's runner
/// did not answer.
async fn not_ready_in_time(inner: &Inner, kernel: Uuid) -> AgentError {
    let secs = READY_TIMEOUT.as_secs();
    match inner.state(kernel) {
        Some(Observed::Running(_)) => {
            AgentError::NotReady(format!("the runner did not answer within {secs}s"))
        }
        _ => match inner.pods.get_opt(&inner.pod_of(kernel)).await {
            Ok(Some(pod)) => match why_pending(&pod) {
                (true, why) => AgentError::InsufficientResources(format!(
                    "Kubernetes did not place the kernel on node {} within {secs}s: {why}",
                    inner.node
                )),
                (false, why) => AgentError::NotReady(format!("not started within {secs}s: {why}")),
            },
            Ok(None) => AgentError::NotReady(format!(
                "the kernel's pod went before it started (within {secs}s)"
            )),
            Err(e) => AgentError::NotReady(format!(
                "the kernel's pod did not start within {secs}s (and cannot be read: {e})"
            )),
        },
    }
}

/// Deletes a kernel's pod (no grace period), waits until it is gone, removes its
/// directories; answers how it ended (`ended`, else what the watch saw, else killed by us)
/// with the tail of its logs. Failures are logged: the reconciliation removes what is left.
pub async fn remove(inner: &Inner, kernel: Uuid, ended: Option<Ended>) -> KernelExit {
    let name = inner.pod_of(kernel);
    let logs = inner
        .pods
        .logs(&name, &log_params())
        .await
        .unwrap_or_default();
    let ended = ended
        .or_else(|| match inner.state(kernel) {
            Some(Observed::Ended(e)) => Some(e),
            _ => None,
        })
        .unwrap_or_default();
    // The pod's own grace period (0): the object goes at once (measured: under 0.1 s on
    // the test cluster), the kubelet stops the containers within a second or two and removes
    // the stopped ones at its next garbage collection (within a minute).
    match inner.pods.delete(&name, &DeleteParams::default()).await {
        Ok(_) => wait_gone(inner, &name).await,
        Err(e) if is_not_found(&e) => {}
        Err(e) => tracing::warn!(kernel = %kernel, error = %e, "cannot delete a kernel's pod"),
    }
    egress::remove(inner, kernel).await;
    inner.hosts.leave(kernel);
    let root = inner.dirs(kernel).root;
    if let Err(e) = tokio::fs::remove_dir_all(&root).await
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(kernel = %kernel, error = %e, dir = %root.display(), "cannot remove a kernel's directory");
    }
    KernelExit {
        kernel_id: kernel,
        exit_code: ended.exit_code,
        oom_killed: ended.oom_killed,
        logs,
    }
}

async fn wait_gone(inner: &Inner, name: &str) {
    let until = Instant::now() + GONE_TIMEOUT;
    while Instant::now() < until {
        match inner.pods.get_opt(name).await {
            Ok(None) => return,
            Ok(Some(_)) => {}
            Err(e) => tracing::debug!(pod = name, error = %e, "cannot read a deleted pod"),
        }
        tokio::time::sleep(POLL_GONE).await;
    }
    tracing::warn!(
        pod = name,
        "a deleted pod is still there after {}s",
        GONE_TIMEOUT.as_secs()
    );
}

/// Destroys a kernel; idempotent (a kernel with no pod answers an empty exit). When its end
/// is being handled already, waits for that and answers an empty exit (the logs come with
/// the `KernelExited` event).
pub async fn destroy(inner: &Arc<Inner>, kernel: Uuid) -> Result<KernelExit, AgentError> {
    let empty = KernelExit {
        kernel_id: kernel,
        exit_code: None,
        oom_killed: false,
        logs: String::new(),
    };
    if !inner.claim_end(kernel) {
        inner.wait_end(kernel).await;
        return Ok(empty);
    }
    let exit = remove(inner, kernel, None).await;
    inner.finish(kernel);
    inner.release_end(kernel);
    tracing::info!(kernel = %kernel, "kernel destroyed");
    Ok(exit)
}

/// The kernels whose pods this agent has (by label).
pub async fn list(inner: &Inner) -> Result<Vec<Uuid>, KubeError> {
    let lp = ListParams::default().labels(&labels::agent_selector(&inner.config.agent_id));
    let pods = inner
        .pods
        .list(&lp)
        .await
        .map_err(KubeError::api("cannot list the kernels' pods"))?;
    Ok(pods
        .items
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| labels::kernel_of(p.metadata.labels.as_ref()))
        .collect())
}

/// The tail of a kernel's logs.
pub async fn logs(inner: &Inner, kernel: Uuid) -> Result<String, KubeError> {
    inner
        .pods
        .logs(&inner.pod_of(kernel), &log_params())
        .await
        .map_err(KubeError::api(format_args!(
            "cannot read the logs of kernel {kernel}"
        )))
}

/// Reports the end once and cleans up, unless a create or destroy owns this kernel's end.
pub fn report_end(inner: &Arc<Inner>, kernel: Uuid, ended: Ended) {
    if !inner.claim_end(kernel) {
        return;
    }
    let inner = inner.clone();
    tokio::spawn(async move {
        tracing::info!(kernel = %kernel, exit_code = ?ended.exit_code, oom = ended.oom_killed,
            reason = %ended.reason, "kernel ended");
        let exit = remove(&inner, kernel, Some(ended)).await;
        inner.finish(kernel);
        inner.release_end(kernel);
        inner
            .events
            .send(bai_core::agent::AgentEvent::KernelExited(exit));
    });
}

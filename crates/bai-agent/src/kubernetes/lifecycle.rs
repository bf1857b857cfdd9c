//! A kernel's life as a pod: made and waited for until its runner answers (or Kubernetes
//! says it cannot start), listed by label, and removed (pod deleted, its grace period 0,
//! its NetworkPolicy and its directories on the node after it).

use super::error::{KubeError, is_not_found};
use super::observe::{Ended, Observed};
use super::place::{self, placement};
use super::pod::{kernel_pod, pod_name};
use super::reach::{self, RunnerReach};
use super::ready::{READY_TIMEOUT, REPORT_WAIT, wait_address, wait_ready, wait_reported};
use super::{Inner, egress, handover, labels, log_params, pool, secret};
use crate::kernel_files::{home, make_work_dir};
use bai_core::agent::{AgentError, KernelCreated, KernelExit, KernelSpec};
use kube::api::{DeleteParams, ListParams, PostParams};
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// How long a deleted pod may take to go (its containers with it).
const GONE_TIMEOUT: Duration = Duration::from_secs(30);
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
    let cluster = spec.cluster_info();
    let detached = match &inner.config.runner_image {
        Some(image) if inner.config.runner_reach == RunnerReach::Network => {
            let token = reach::new_token();
            let made = secret::kernel_secret(
                spec,
                &inner.config.namespace,
                &inner.config.agent_id,
                &token,
            )?;
            inner.set_token(kernel, token);
            if cluster.size > 1 {
                inner
                    .hosts
                    .join(spec.session_id, kernel, &cluster.place.hostname, None)?;
            }
            Some((
                place::detached(inner, &spec.image, image, &made, cluster.size > 1),
                made,
            ))
        }
        _ => None,
    };
    let placement = match &detached {
        Some((placement, _)) => placement.clone(),
        None => on_node(inner, spec, &cluster)?,
    };
    let pod = kernel_pod(spec, &placement).map_err(KubeError::from)?;
    let started = Instant::now();
    // Its egress policy before the pod: the kernel never runs without it.
    let policy = egress::before_pod(inner, spec).await?;
    // A detached kernel's Secret too: its pod waits for it.
    if let Some((_, made)) = &detached {
        secret::before_pod(inner, &made.secret).await?;
    }
    let made = inner
        .pods
        .create(&PostParams::default(), &pod)
        .await
        .map_err(KubeError::api(format_args!(
            "cannot create the pod of kernel {kernel}"
        )))?;
    let uid = made.metadata.uid.as_deref().unwrap_or_default();
    if policy {
        egress::own(inner, kernel, uid).await?;
    }
    if detached.is_some() {
        secret::own(inner, &inner.pod_of(kernel), uid).await?;
    }
    // Under `--network-policies node` the kernel waits at its gate for its rules.
    tokio::try_join!(
        egress::node::apply(inner, spec, READY_TIMEOUT),
        wait_ready(inner, kernel, cluster.size > 1),
    )?;
    let mut address = None;
    if cluster.size > 1 {
        match wait_address(inner, kernel, REPORT_WAIT).await {
            Some(addr) => {
                handover::host_up(inner, spec.session_id, kernel, addr).await?;
                address = Some(addr);
            }
            None => {
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

/// A kernel's directories on this node, filled as on Docker (the owner's dotfiles, a
/// cluster session's keys and host table), and the placement that mounts them.
fn on_node(
    inner: &Inner,
    spec: &KernelSpec,
    cluster: &bai_core::cluster::ClusterInfo,
) -> Result<super::pod::Placement, AgentError> {
    let kernel = spec.kernel_id;
    let dirs = inner.dirs(kernel);
    dirs.check_socket_path().map_err(AgentError::Runtime)?;
    make_work_dir(&dirs.work)?;
    make_work_dir(&dirs.run)?;
    home::fill(&dirs.work, &spec.dotfiles)?;
    let _ = std::fs::remove_file(&dirs.socket);
    let mut files: Vec<(String, String)> = Vec::new();
    if cluster.size > 1 {
        for (host, inside) in crate::kernel_files::cluster::ssh_files(&dirs.run, cluster)? {
            files.push((host.display().to_string(), inside.to_string()));
        }
        let table = inner.hosts.join(
            spec.session_id,
            kernel,
            &cluster.place.hostname,
            Some(&dirs.run),
        )?;
        if let Some(table) = table {
            files.push((table.display().to_string(), "/etc/hosts".into()));
        }
    }
    Ok(placement(inner, &spec.image, &dirs, files))
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
    secret::remove(inner, kernel).await;
    inner.hosts.leave(kernel);
    // A detached kernel has nothing on this machine.
    if inner.config.runner_reach == RunnerReach::Socket {
        remove_dirs(inner, kernel).await;
    }
    KernelExit {
        kernel_id: kernel,
        exit_code: ended.exit_code,
        oom_killed: ended.oom_killed,
        logs,
    }
}

/// Removes a kernel's directories on this node. A kernel claimed from a pool has its folders
/// mounted under its home: they go first, and the directory stays if one cannot (a removal
/// must never reach a folder).
async fn remove_dirs(inner: &Inner, kernel: Uuid) {
    let root = inner.dirs(kernel).root;
    if let Err(e) = crate::pool_folders::release(&root) {
        tracing::error!(kernel = %kernel, error = %e, "a kernel's directory is kept");
        return;
    }
    if let Err(e) = tokio::fs::remove_dir_all(&root).await
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(kernel = %kernel, error = %e, dir = %root.display(), "cannot remove a kernel's directory");
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

/// The tail of a kernel's logs (the API server has them once the kubelet reported the
/// container).
pub async fn logs(inner: &Inner, kernel: Uuid) -> Result<String, KubeError> {
    wait_reported(inner, kernel, REPORT_WAIT).await;
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

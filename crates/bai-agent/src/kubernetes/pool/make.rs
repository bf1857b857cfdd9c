//! Making and removing one pool pod: the pod a kernel of the shape would get (the same
//! builder, [`kernel_pod`]), with nobody's ids, its own name and label, and the runner in
//! its pool mode (`BAI_POOL=1`); ready once the runner answers on its socket. A detached
//! pool pod (`--runner-reach network`) is made as a detached kernel's, with a Secret of its
//! own name (its runner's token, every kernel's `/etc` files) that it owns; it is ready once
//! its runner answers at its pod IP with that token, and nothing of it is on this machine.

use super::{LABEL_POOL, Ready};
use crate::kernel_files::make_work_dir;
use crate::kubernetes::error::is_not_found;
use crate::kubernetes::labels::{LABEL_MANAGED_BY, MANAGED_BY, label_value};
use crate::kubernetes::place::{self, placement};
use crate::kubernetes::pod::{Disk, Placement, kernel_pod};
use crate::kubernetes::reach::{self, RunnerReach};
use crate::kubernetes::{Inner, KubeError, egress, secret};
use crate::paths::KernelDirs;
use crate::{LABEL_AGENT, pool_folders, runner};
use bai_core::agent::AgentError;
use bai_core::pool::PoolShape;
use k8s_openapi::api::core::v1::{EnvVar, Pod};
use kube::api::{DeleteParams, PostParams};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use uuid::Uuid;

/// The variable that starts krunner in its pool mode.
const POOL_VAR: &str = "BAI_POOL";
const PING_EVERY: Duration = Duration::from_millis(50);
/// How often a detached pool pod is read for its IP until it has one.
const IP_EVERY: Duration = Duration::from_millis(200);
/// How long a pool pod may take to become ready (as a kernel's: `ready::READY_TIMEOUT`).
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// Where pool pods' directories are: `data_dir/kernels/.pool` (beside the kernels', so the
/// claim's rename stays on one file system).
pub fn pool_dir(inner: &Inner) -> PathBuf {
    inner.config.data_dir.join("kernels").join(".pool")
}

pub fn dirs(inner: &Inner, id: Uuid) -> KernelDirs {
    KernelDirs::under(&pool_dir(inner), id)
}

pub fn pod_name(id: Uuid) -> String {
    format!("bai-pool-{id}")
}

/// The labels of pool pod `id` of agent `agent`, and of its Secret: nobody's kernel.
fn pool_labels(agent: &str, id: Uuid) -> BTreeMap<String, String> {
    BTreeMap::from([
        (LABEL_MANAGED_BY.to_string(), MANAGED_BY.to_string()),
        (LABEL_AGENT.to_string(), label_value(agent)),
        (LABEL_POOL.to_string(), id.to_string()),
    ])
}

/// The pool pod of `shape` (pure): the kernel pod of [`crate::pool_kernel::spec`], renamed and relabelled.
pub fn pool_pod(shape: &PoolShape, id: Uuid, at: &Placement) -> Result<Pod, KubeError> {
    let mut pod = kernel_pod(&crate::pool_kernel::spec(shape, id), at)?;
    pod.metadata.name = Some(pod_name(id));
    pod.metadata.annotations = None;
    pod.metadata.labels = Some(pool_labels(&at.agent_id, id));
    if let Some(c) = pod.spec.as_mut().and_then(|s| s.containers.first_mut()) {
        c.env.get_or_insert_with(Vec::new).push(EnvVar {
            name: POOL_VAR.into(),
            value: Some("1".into()),
            value_from: None,
        });
    }
    Ok(pod)
}

/// Makes pool pod `id` of `shape` (listed in the pools' `making`) and waits until its runner
/// answers; gives up when it is no longer listed (evicted meanwhile).
pub async fn make(inner: &Inner, id: Uuid, shape: &PoolShape) -> Result<Ready, AgentError> {
    let made = match &inner.config.runner_image {
        Some(image) if inner.config.runner_reach == RunnerReach::Network => {
            detached(inner, id, shape, image).await
        }
        _ => on_node(inner, id, shape).await,
    };
    if made.is_err() {
        remove(inner, id).await;
    }
    made
}

/// A pool pod whose directories are on this node, its runner on its socket there.
async fn on_node(inner: &Inner, id: Uuid, shape: &PoolShape) -> Result<Ready, AgentError> {
    let dirs = dirs(inner, id);
    dirs.check_socket_path().map_err(AgentError::Runtime)?;
    std::fs::create_dir_all(pool_dir(inner)).map_err(|e| {
        AgentError::Runtime(format!("cannot create {}: {e}", pool_dir(inner).display()))
    })?;
    make_work_dir(&dirs.root)?;
    make_work_dir(&dirs.work)?;
    make_work_dir(&dirs.run)?;
    let mut at = placement(inner, &shape.image, &dirs, Vec::new());
    if let Disk::OnNode(n) = &mut at.disk {
        n.home_propagates = home_propagates(inner);
    }
    let pod = pool_pod(shape, id, &at)?;
    let uid = create(inner, id, &pod).await?;
    let until = tokio::time::Instant::now() + READY_TIMEOUT;
    // Where the agent enforces policies itself, the pod's gate waits for the pool's rules.
    egress::node::pool(inner, &pod_name(id), &dirs.run, || {
        still_wanted(inner, id, until)
    })
    .await?;
    while runner::ping(&dirs.socket).await.is_err() {
        still_wanted(inner, id, until)?;
        tokio::time::sleep(PING_EVERY).await;
    }
    Ok(Ready {
        id,
        shape: shape.clone(),
        uid,
        net: None,
    })
}

/// A detached pool pod: its Secret, the pod, and its runner at the pod's IP.
async fn detached(
    inner: &Inner,
    id: Uuid,
    shape: &PoolShape,
    image: &str,
) -> Result<Ready, AgentError> {
    let token = reach::new_token();
    let spec = crate::pool_kernel::spec(shape, id);
    let mut made = secret::kernel_secret(
        &spec,
        &inner.config.namespace,
        &inner.config.agent_id,
        &token,
    )?;
    made.secret.metadata.name = Some(pod_name(id));
    made.secret.metadata.labels = Some(pool_labels(&inner.config.agent_id, id));
    let at = place::detached(inner, &shape.image, image, &made, false);
    let pod = pool_pod(shape, id, &at)?;
    secret::before_pod(inner, &made.secret).await?;
    let uid = create(inner, id, &pod).await?;
    secret::own(inner, &pod_name(id), &uid).await?;
    let until = tokio::time::Instant::now() + READY_TIMEOUT;
    loop {
        still_wanted(inner, id, until)?;
        let ip = match inner.pods.get_opt(&pod_name(id)).await {
            Ok(Some(p)) => p
                .status
                .and_then(|s| s.pod_ip)
                .and_then(|ip| ip.parse::<std::net::IpAddr>().ok()),
            _ => None,
        };
        if let Some(ip) = ip {
            let at = reach::at(ip, token.clone());
            if runner::ping(at.clone()).await.is_ok() {
                return Ok(Ready {
                    id,
                    shape: shape.clone(),
                    uid,
                    net: Some(at),
                });
            }
            tokio::time::sleep(PING_EVERY).await;
        } else {
            tokio::time::sleep(IP_EVERY).await;
        }
    }
}

/// Creates the pool pod; its uid.
async fn create(inner: &Inner, id: Uuid, pod: &Pod) -> Result<String, AgentError> {
    let made = inner
        .pods
        .create(&PostParams::default(), pod)
        .await
        .map_err(KubeError::api(format_args!("cannot create pool pod {id}")))?;
    Ok(made.metadata.uid.unwrap_or_default())
}

/// Whether to keep waiting for pool pod `id`: an error once it was given up for room (no
/// longer listed as being made) or `until` passed.
fn still_wanted(inner: &Inner, id: Uuid, until: tokio::time::Instant) -> Result<(), AgentError> {
    if !inner.pools().making.iter().any(|(m, _)| *m == id) {
        return Err(AgentError::Runtime(format!(
            "pool pod {id} was given up for room before it was ready"
        )));
    }
    if tokio::time::Instant::now() >= until {
        return Err(AgentError::NotReady(format!(
            "pool pod {id}'s runner did not answer within {}s",
            READY_TIMEOUT.as_secs()
        )));
    }
    Ok(())
}

/// Whether pool pods' homes receive data folders at a claim, decided at the first pool pod:
/// the kernels' directory must be a shared mount on the node ([`pool_folders::ensure_shared`];
/// the agent needs `CAP_SYS_ADMIN` in the node's mount namespace: run on the node as root,
/// not the shipped DaemonSet's pod). Where it cannot be, sessions with data folders start
/// cold, as before.
pub fn home_propagates(inner: &Inner) -> bool {
    *inner.pool_folders.get_or_init(|| {
        let kernels = inner.config.data_dir.join("kernels");
        match pool_folders::ensure_shared(&kernels) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(error = %e, dir = %kernels.display(),
                    "pool pods cannot be given data folders here; sessions with folders start cold");
                false
            }
        }
    })
}

/// Deletes a pool pod (grace 0) and its directory or Secret, whichever is left.
pub async fn remove(inner: &Inner, id: Uuid) {
    match inner
        .pods
        .delete(&pod_name(id), &DeleteParams::default())
        .await
    {
        Ok(_) => {}
        Err(e) if is_not_found(&e) => {}
        Err(e) => tracing::warn!(pool_pod = %id, error = %e, "cannot delete a pool pod"),
    }
    if inner.config.runner_reach == RunnerReach::Network {
        // Its pod owns it, but one made before a failed pod is nobody's.
        secret::delete(inner, &pod_name(id)).await;
        return; // nothing of it on this machine
    }
    let root = dirs(inner, id).root;
    if let Err(e) = pool_folders::release(&root) {
        tracing::error!(pool_pod = %id, error = %e, "a pool pod's directory is kept");
        return;
    }
    if let Err(e) = tokio::fs::remove_dir_all(&root).await
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(pool_pod = %id, error = %e, "cannot remove a pool pod's directory");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_pod_is_a_kernel_pod_of_nobody_with_the_runner_in_pool_mode() {
        let shape = PoolShape {
            image: "bai/python:3.11-bookworm".into(),
            cpu_milli: 500,
            mem: 256 << 20,
            shmem: 64 << 20,
        };
        let id = Uuid::from_u128(5);
        let at = Placement {
            namespace: "bai".into(),
            agent_id: "k 1".into(),
            node: "n1".into(),
            gpu_sharing: None,
            runner_listen: None,
            accounts: false,
            disk: Disk::OnNode(crate::kubernetes::pod::OnNode {
                krunner: "/var/lib/bai/krunner".into(),
                run_dir: "/var/lib/bai/kernels/.pool/x/run".into(),
                work_dir: "/var/lib/bai/kernels/.pool/x/work".into(),
                home_propagates: true,
                egress_gate: false,
                files: Vec::new(),
            }),
        };
        let pod = pool_pod(&shape, id, &at).unwrap();
        assert_eq!(pod.metadata.name.as_deref(), Some(pod_name(id).as_str()));
        let labels = pod.metadata.labels.clone().unwrap();
        assert_eq!(labels[LABEL_POOL], id.to_string());
        assert_eq!(labels[LABEL_AGENT], "k-1");
        assert!(!labels.contains_key(crate::LABEL_KERNEL));
        assert!(!labels.contains_key(crate::LABEL_SESSION));
        let spec = pod.spec.unwrap();
        let c = &spec.containers[0];
        let env = c.env.clone().unwrap();
        assert!(
            env.iter()
                .any(|e| e.name == POOL_VAR && e.value.as_deref() == Some("1"))
        );
        let q = c.resources.as_ref().unwrap().limits.clone().unwrap();
        assert_eq!(q["cpu"].0, "500m");
        assert_eq!(q["memory"].0, (256u64 << 20).to_string());
        // Its home receives the folders mounted under it on the node at the claim; nothing
        // else of the pod does.
        let propagation = |name: &str| {
            let m = c.volume_mounts.as_ref().unwrap();
            let m = m.iter().find(|m| m.name == name).unwrap();
            m.mount_propagation.clone()
        };
        assert_eq!(propagation("work").as_deref(), Some("HostToContainer"));
        assert_eq!(propagation("run"), None);
        assert_eq!(propagation("krunner"), None);
        assert!(spec.init_containers.is_none());
        // Where the agent enforces policies itself, a pool pod's runner waits at the gate
        // as a kernel's does (for the pool's rules).
        let mut gated = at.clone();
        if let Disk::OnNode(n) = &mut gated.disk {
            n.egress_gate = true;
        }
        let pod = pool_pod(&shape, id, &gated).unwrap();
        let env = pod.spec.unwrap().containers[0].env.clone().unwrap();
        assert!(
            env.iter()
                .any(|e| e.name == crate::krunner_proto::GATE_VAR && e.value.is_some())
        );
    }

    #[test]
    fn a_detached_pool_pod_mounts_only_its_own_secret_and_listens_on_the_pod_network() {
        let shape = PoolShape {
            image: "bai/python:3.11-bookworm".into(),
            cpu_milli: 200,
            mem: 256 << 20,
            shmem: 64 << 20,
        };
        let id = Uuid::from_u128(6);
        let at = Placement {
            namespace: "bai".into(),
            agent_id: "k1".into(),
            node: "n1".into(),
            gpu_sharing: None,
            runner_listen: Some("0.0.0.0:2001".into()),
            accounts: false,
            disk: Disk::Detached(crate::kubernetes::pod::Detached {
                runner_image: "bai/agent:1".into(),
                secret: pod_name(id),
                mounts: Vec::new(),
                hosts: false,
            }),
        };
        let pod = pool_pod(&shape, id, &at).unwrap();
        let spec = pod.spec.unwrap();
        let volumes = spec.volumes.unwrap();
        assert!(volumes.iter().all(|v| v.host_path.is_none()), "{volumes:?}");
        let secrets: Vec<_> = volumes
            .iter()
            .filter_map(|v| v.secret.as_ref()?.secret_name.clone())
            .collect();
        assert_eq!(secrets, vec![pod_name(id)]);
        assert_eq!(
            spec.init_containers.unwrap()[0].image.as_deref(),
            Some("bai/agent:1")
        );
        let env = spec.containers[0].env.clone().unwrap();
        let var = |n: &str| {
            env.iter()
                .find(|e| e.name == n)
                .and_then(|e| e.value.clone())
        };
        assert_eq!(var(POOL_VAR).as_deref(), Some("1"));
        assert_eq!(var("BAI_KRUNNER_LISTEN").as_deref(), Some("0.0.0.0:2001"));
        assert_eq!(pool_labels("k1", id), pod.metadata.labels.unwrap());
    }
}

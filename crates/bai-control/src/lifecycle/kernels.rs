//! The kernels of a session: what each one gets (its place in the cluster, its spec), making
//! all of them at once (all or none: a failure destroys those made), and destroying all of
//! them. A session of one kernel is the case of a cluster of one.

use super::Lifecycle;
use super::cluster_keys;
use bai_core::Reason;
use bai_core::agent::{AgentError, KernelCreated, KernelExit, KernelSpec, Mount};
use bai_core::cluster::{ClusterInfo, KernelPlace, Overlay, layout, network_name};
use bai_ground::agents::AgentHandle;
use bai_store::{SessionRow, SubKernel};
use futures::future::join_all;
use std::sync::Arc;
use std::time::Duration;

/// Where each kernel of `row` stands, main1 first.
pub fn places(row: &SessionRow, subs: &[SubKernel]) -> Vec<KernelPlace> {
    let ids: Vec<_> = subs.iter().map(|k| k.id).collect();
    layout(row.main_kernel_id, &ids)
}

/// The spec of every kernel of `row`, main1 first. Sub kernels run no startup command (a
/// batch session's command runs in main1 and its end ends the session). A multi-node
/// session gives `overlays`, one per kernel. Every kernel gets the owner's `dotfiles`.
pub fn specs(
    row: &SessionRow,
    subs: &[SubKernel],
    mounts: Vec<Mount>,
    overlays: Vec<Overlay>,
    egress: &bai_core::egress::EgressSpec,
    dotfiles: &[bai_core::dotfile::Dotfile],
) -> Result<Vec<KernelSpec>, String> {
    let places = places(row, subs);
    let size = places.len() as u32;
    let keys = if size > 1 {
        Some(cluster_keys::generate()?)
    } else {
        None
    };
    let network = (size > 1).then(|| network_name(row.id));
    let mut overlays = overlays.into_iter();
    let hosts: Vec<String> = places.iter().map(|p| p.hostname.clone()).collect();
    let slots = row.spec.kernel_slots();
    Ok(places
        .into_iter()
        .map(|place| {
            let main = place.idx == 1 && place.local_rank == 0;
            KernelSpec {
                kernel_id: place.kernel_id,
                session_id: row.id,
                session_name: row.name.clone(),
                session_type: row.spec.session_type,
                image: row.spec.image.clone(),
                slots: slots.clone(),
                shmem: row.spec.shmem,
                environ: row.spec.environ.clone(),
                startup_command: if main {
                    row.spec.startup_command.clone()
                } else {
                    None
                },
                bootstrap_script: row.spec.bootstrap_script.clone(),
                owner_access_key: row.spec.access_key.clone(),
                mounts: mounts.clone(),
                cluster: (size > 1).then(|| ClusterInfo {
                    mode: row.spec.cluster_mode,
                    size,
                    place,
                    hosts: hosts.clone(),
                    network: network.clone(),
                    keys: keys.clone(),
                    overlay: overlays.next(),
                }),
                egress: egress.clone(),
                dotfiles: dotfiles.to_vec(),
            }
        })
        .collect())
}

/// Records an event of one sub kernel of a cluster session (main1's are the session's own
/// events) and publishes it.
pub fn sub_kernel_event(
    lifecycle: &Lifecycle,
    row: &SessionRow,
    kind: bai_core::event::EventKind,
    kernel_id: uuid::Uuid,
    reason: &str,
    exit_code: Option<i32>,
) {
    match lifecycle
        .store
        .add_kernel_event(row, kind, kernel_id, reason, exit_code)
    {
        Ok(ev) => lifecycle.bus.publish(vec![ev]),
        Err(e) => tracing::warn!(kernel = %kernel_id, error = %e, "cannot record a kernel event"),
    }
}

/// Why making one kernel failed, naming it in a cluster.
fn failure(spec: &KernelSpec, why: Reason) -> Reason {
    let Some(c) = &spec.cluster else {
        return why;
    };
    let host = &c.place.hostname;
    match why {
        Reason::CreationFailed(e) => Reason::CreationFailed(format!("kernel {host}: {e}")),
        Reason::CreationTimeout { secs } => {
            Reason::CreationFailed(format!("kernel {host} was not ready within {secs}s"))
        }
        other => other,
    }
}

/// Makes every kernel at once, each on its agent. When one fails, the others are destroyed
/// and the reason names the kernel that failed.
/// `on_up` hears of each kernel as soon as it is up (with its agent's id).
pub async fn create_all(
    jobs: Vec<(Arc<AgentHandle>, KernelSpec)>,
    limit: Duration,
    on_up: &(dyn Fn(&KernelSpec, &str) + Sync),
) -> Result<Vec<KernelCreated>, Reason> {
    let specs: Vec<&KernelSpec> = jobs.iter().map(|(_, s)| s).collect();
    let made = join_all(jobs.iter().cloned().map(|(agent, spec)| async move {
        match tokio::time::timeout(limit, agent.rpc.create_kernel(spec.clone())).await {
            Ok(Ok(c)) => {
                on_up(&spec, &agent.id);
                Ok(c)
            }
            Ok(Err(e)) => Err(Reason::CreationFailed(e.to_string())),
            Err(_) => Err(Reason::CreationTimeout {
                secs: limit.as_secs(),
            }),
        }
    }))
    .await;
    let mut out = Vec::new();
    let mut first_failure = None;
    for (spec, r) in specs.iter().zip(made) {
        match r {
            Ok(c) => out.push(c),
            Err(why) if first_failure.is_none() => first_failure = Some(failure(spec, why)),
            Err(_) => {}
        }
    }
    match first_failure {
        None => Ok(out),
        Some(why) => {
            // A cluster is all or nothing: what was made goes (a kernel whose creation timed
            // out too, if the agent finished it meanwhile).
            if jobs.len() > 1 {
                join_all(
                    jobs.iter()
                        .map(|(agent, s)| super::destroy_or_log(agent, s.kernel_id)),
                )
                .await;
            }
            Err(why)
        }
    }
}

/// Destroys every kernel of a session (each on its agent), keeping what each one left.
/// Returns main1's exit when it was destroyed here.
pub async fn destroy_all(lifecycle: &Arc<Lifecycle>, row: &SessionRow) -> Option<KernelExit> {
    let subs = if row.spec.cluster_size > 1 {
        lifecycle.store.sub_kernels(row.id).unwrap_or_else(|e| {
            tracing::error!(session = %row.id, error = %e, "cannot read the sub kernels");
            Vec::new()
        })
    } else {
        Vec::new()
    };
    let mut jobs = vec![(row.main_kernel_id, row.state.agent_id.clone(), true)];
    jobs.extend(subs.iter().map(|k| (k.id, k.agent_id.clone(), false)));
    let results = join_all(jobs.into_iter().map(|(id, agent, main)| async move {
        let agent = agent.as_deref().and_then(|a| lifecycle.agents.get(a))?;
        destroy_with_retries(&agent, id)
            .await
            .map(|exit| (exit, main))
    }))
    .await;
    let mut main_exit = None;
    for (exit, main) in results.into_iter().flatten() {
        if main {
            if !exit.logs.is_empty() {
                let _ = lifecycle.store.set_logs(row.id, &exit.logs);
            }
            main_exit = Some(exit);
        } else {
            if let Err(e) =
                lifecycle
                    .store
                    .set_sub_kernel_exit(exit.kernel_id, exit.exit_code, &exit.logs)
            {
                tracing::warn!(kernel = %exit.kernel_id, error = %e, "cannot keep a kernel's logs");
            }
            let host = subs
                .iter()
                .find(|k| k.id == exit.kernel_id)
                .map(|k| k.hostname())
                .unwrap_or_default();
            sub_kernel_event(
                lifecycle,
                row,
                bai_core::event::EventKind::KernelTerminated,
                exit.kernel_id,
                &format!("kernel {host} ended"),
                exit.exit_code,
            );
        }
    }
    main_exit
}

async fn destroy_with_retries(agent: &AgentHandle, id: uuid::Uuid) -> Option<KernelExit> {
    let mut last_err = None;
    for attempt in 0..3u64 {
        match agent.rpc.destroy_kernel(id).await {
            Ok(exit) => return Some(exit),
            Err(AgentError::KernelNotFound(_)) => return None,
            Err(e) => {
                last_err = Some(e);
                tokio::time::sleep(Duration::from_millis(200 * (attempt + 1))).await;
            }
        }
    }
    if let Some(e) = last_err {
        tracing::error!(kernel = %id, agent = %agent.id, error = %e, "could not destroy kernel; reconciliation will remove it");
    }
    None
}

/// Every kernel id of a session, main1 first.
pub fn kernel_ids(lifecycle: &Lifecycle, row: &SessionRow) -> Vec<uuid::Uuid> {
    kernels_at(lifecycle, row)
        .into_iter()
        .map(|k| k.id)
        .collect()
}

/// One kernel of a session as reconciliation sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelAt {
    pub id: uuid::Uuid,
    /// `main1`, `sub1`, …
    pub host: String,
    /// Its agent (a sub kernel not yet placed: the session's).
    pub agent: Option<String>,
}

/// Every kernel of a session with its hostname and agent, main1 first.
pub fn kernels_at(lifecycle: &Lifecycle, row: &SessionRow) -> Vec<KernelAt> {
    let mut out = vec![KernelAt {
        id: row.main_kernel_id,
        host: "main1".into(),
        agent: row.state.agent_id.clone(),
    }];
    if row.spec.cluster_size > 1 {
        match lifecycle.store.sub_kernels(row.id) {
            Ok(subs) => out.extend(subs.iter().map(|k| KernelAt {
                id: k.id,
                host: k.hostname(),
                agent: k.agent_id.clone().or_else(|| row.state.agent_id.clone()),
            })),
            Err(e) => tracing::error!(session = %row.id, error = %e, "cannot read the sub kernels"),
        }
    }
    out
}

/// The kernels of a session that are on `agent`, main1 first.
pub fn kernels_on(lifecycle: &Lifecycle, row: &SessionRow, agent: &str) -> Vec<KernelAt> {
    kernels_at(lifecycle, row)
        .into_iter()
        .filter(|k| k.agent.as_deref() == Some(agent))
        .collect()
}

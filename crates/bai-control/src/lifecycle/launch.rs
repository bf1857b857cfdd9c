//! Launching a SCHEDULED session: PREPARING → PREPARED → CREATING → RUNNING on its agent.
//! If the user terminates it half-way, the launch notices at its next step and finishes the
//! termination itself, destroying whatever it had created.

use super::Lifecycle;
use super::terminate::finish_termination;
use super::timeouts::arm_batch_timeout;
use super::transition::{Change, transition, transition_or_log};
use super::watch::handle_kernel_exit;
use super::{kernels, overlay};
use bai_core::Reason;
use bai_core::cluster::ClusterMode;
use bai_core::event::EventKind as E;
use bai_core::status::SessionStatus as S;
use bai_ground::agents::AgentHandle;
use bai_store::{SessionRow, SubKernel};
use futures::future::join_all;
use std::sync::Arc;
use std::time::Duration;

/// Spawns the launch of a session that was just SCHEDULED.
pub fn spawn(lifecycle: Arc<Lifecycle>, row: SessionRow) {
    if let Ok(mut set) = lifecycle.launching.lock() {
        set.insert(row.id);
    }
    tokio::spawn(async move {
        let id = row.id;
        launch(&lifecycle, row).await;
        if let Ok(mut set) = lifecycle.launching.lock() {
            set.remove(&id);
        }
    });
}

/// After a step could not move the session, decide: someone asked to terminate it (finish
/// that), or it was cancelled (nothing to do).
async fn lost_race(lifecycle: &Arc<Lifecycle>, row: &SessionRow, kernel_created: bool) {
    match lifecycle.store.session(row.id) {
        Ok(Some(now)) if now.state.status == S::Terminating => {
            finish_termination(lifecycle, &now, kernel_created).await;
        }
        Ok(Some(now)) => {
            tracing::info!(session = %row.id, status = %now.state.status, "launch stopped: session moved elsewhere");
        }
        _ => {}
    }
}

macro_rules! step {
    ($lifecycle:expr, $row:expr, $change:expr, $created:expr) => {
        match transition($lifecycle, $row.id, $change) {
            Ok(Some(r)) => r,
            Ok(None) => {
                lost_race($lifecycle, &$row, $created).await;
                return;
            }
            Err(e) => {
                tracing::error!(session = %$row.id, error = %e, "launch transition failed");
                return;
            }
        }
    };
}

async fn launch(lifecycle: &Arc<Lifecycle>, row: SessionRow) {
    let Some(agent) = row
        .state
        .agent_id
        .as_deref()
        .and_then(|a| lifecycle.agents.get(a))
    else {
        if transition_or_log(
            lifecycle,
            row.id,
            Change::new(
                S::Scheduled,
                S::Error,
                Reason::AgentLost("the assigned agent is gone".into()),
                "launch",
            ),
        )
        .is_none()
        {
            lost_race(lifecycle, &row, false).await;
        }
        return;
    };
    // The group's egress policy now is the one its kernels start under, recorded with the
    // first step.
    let policy = super::egress::policy_of(lifecycle, &row);
    let policy_json = serde_json::to_string(&policy).unwrap_or_default();
    let row = step!(
        lifecycle,
        row,
        Change::new(S::Scheduled, S::Preparing, Reason::Preparing, "launch")
            .events(&[E::SessionPreparing, E::KernelPreparing])
            .egress(&policy_json),
        false
    );
    let subs = if row.spec.cluster_size > 1 {
        match lifecycle.store.sub_kernels(row.id) {
            Ok(subs) => subs,
            Err(e) => {
                fail_preparation(lifecycle, &row, Reason::CreationFailed(e.to_string())).await;
                return;
            }
        }
    } else {
        Vec::new()
    };
    // Each kernel's agent: a multi-node session's as the scheduler placed them, every other
    // session's all on its agent.
    let kernel_agents = match kernel_agents(lifecycle, &row, &agent, &subs) {
        Ok(a) => a,
        Err(reason) => {
            fail_preparation(lifecycle, &row, reason).await;
            return;
        }
    };
    // Folders are bound now, not when the session was queued: a folder deleted, moved to
    // another host or made read-only while the session waited is seen as it is at launch.
    let mounts = match super::mounts::bind_at_launch(lifecycle, &row) {
        Ok(mounts) => mounts,
        Err(reason) => {
            fail_preparation(lifecycle, &row, reason).await;
            return;
        }
    };
    // Agents that lack the image pull it from the cluster's registry (PULLING).
    let mut lacking: Vec<Arc<AgentHandle>> = Vec::new();
    for a in &kernel_agents {
        let info = a.info();
        if info.images.iter().any(|i| i.name == row.spec.image)
            || lacking.iter().any(|l| l.id == a.id)
        {
            continue;
        }
        if info.registry.is_none() || !lifecycle.registry.holds(&row.spec.image) {
            let reason = Reason::ImageNotFound {
                image: row.spec.image.clone(),
                agent: a.id.clone(),
            };
            fail_preparation(lifecycle, &row, reason).await;
            return;
        }
        lacking.push(a.clone());
    }
    let (row, from) = if lacking.is_empty() {
        (row, S::Preparing)
    } else {
        let row = step!(
            lifecycle,
            row,
            Change::new(
                S::Preparing,
                S::Pulling,
                Reason::Pulling(row.spec.image.clone()),
                "launch"
            )
            .events(&[E::KernelPulling]),
            false
        );
        if let Err(reason) = super::pull::pull_all(lifecycle, &row, &lacking).await {
            let c =
                Change::new(S::Pulling, S::Error, reason, "launch").events(&[E::SessionFailure]);
            if transition_or_log(lifecycle, row.id, c).is_none() {
                lost_race(lifecycle, &row, false).await;
            }
            return;
        }
        (row, S::Pulling)
    };
    let row = step!(
        lifecycle,
        row,
        Change::new(from, S::Prepared, Reason::ImageReady, "launch"),
        false
    );
    let row = step!(
        lifecycle,
        row,
        Change::new(S::Prepared, S::Creating, Reason::Creating, "launch")
            .events(&[E::KernelCreating]),
        false
    );
    if !subs.is_empty()
        && !multi_node(&row)
        && let Err(e) = lifecycle.store.set_sub_kernels_agent(row.id, &agent.id)
    {
        fail_creation(lifecycle, &row, Reason::CreationFailed(e.to_string())).await;
        return;
    }
    let overlays = match overlays(lifecycle, &row, &subs, &kernel_agents) {
        Ok(o) => o,
        Err(reason) => {
            fail_creation(lifecycle, &row, reason).await;
            return;
        }
    };
    let egress = super::egress::spec(lifecycle, policy);
    // The owner's dotfiles as they are at the launch (a later change applies to later sessions).
    let dotfiles = match lifecycle.store.dotfiles(&row.spec.user_id) {
        Ok(d) => d,
        Err(e) => {
            fail_creation(lifecycle, &row, Reason::CreationFailed(e.to_string())).await;
            return;
        }
    };
    let mut specs = match kernels::specs(&row, &subs, mounts, overlays, &egress, &dotfiles) {
        Ok(specs) => specs,
        Err(e) => {
            fail_creation(lifecycle, &row, Reason::CreationFailed(e)).await;
            return;
        }
    };
    // What the runner reads of the image for the apps it has recipes for (its labels, as
    // the agents list them).
    let image_vars = kernel_agents
        .iter()
        .find_map(|a| a.with_image(&row.spec.image, |i| bai_ground::apps::image_vars(&i.labels)));
    for spec in &mut specs {
        spec.environ.extend(image_vars.iter().flatten().cloned());
    }
    // Which kernel is being made where, and which is up (main1's are the session's events).
    let sub_event = |spec: &bai_core::agent::KernelSpec, kind: E, what: &str, agent: &str| {
        if let Some(c) = spec
            .cluster
            .as_ref()
            .filter(|c| c.place.role == bai_core::cluster::ClusterRole::Sub)
        {
            let why = format!("kernel {} {what} on agent {agent}", c.place.hostname);
            kernels::sub_kernel_event(lifecycle, &row, kind, spec.kernel_id, &why, None);
        }
    };
    for (spec, a) in specs.iter().zip(&kernel_agents) {
        sub_event(spec, E::KernelCreating, "is being made", &a.id);
    }
    let limit = Duration::from_secs(lifecycle.config.create_timeout_secs);
    let hostnames: Vec<String> = specs
        .iter()
        .map(|s| s.cluster_info().place.hostname)
        .collect();
    let jobs: Vec<_> = kernel_agents.iter().cloned().zip(specs).collect();
    let up = |spec: &bai_core::agent::KernelSpec, agent: &str| {
        sub_event(spec, E::KernelStarted, "is up", agent)
    };
    let created = match kernels::create_all(jobs, limit, &up).await {
        Ok(c) => c,
        Err(reason) => {
            fail_creation(lifecycle, &row, reason).await;
            return;
        }
    };
    if multi_node(&row)
        && let Err(reason) = tell_addresses(&row, &hostnames, &created, &kernel_agents, limit).await
    {
        join_all(
            created
                .iter()
                .zip(&kernel_agents)
                .map(|(c, a)| super::destroy_or_log(a, c.kernel_id)),
        )
        .await;
        fail_creation(lifecycle, &row, reason).await;
        return;
    }
    for (c, a) in created.iter().zip(&kernel_agents).skip(1) {
        if let Err(e) = lifecycle
            .store
            .set_sub_kernel_started(c.kernel_id, &a.id, &c.container_id)
        {
            tracing::warn!(kernel = %c.kernel_id, error = %e, "cannot record a sub kernel's container");
        }
    }
    let main_container = created
        .first()
        .map(|c| c.container_id.clone())
        .unwrap_or_default();
    let row = step!(
        lifecycle,
        row,
        Change::new(S::Creating, S::Running, Reason::Running, "launch")
            .events(&[E::KernelStarted, E::SessionStarted])
            .container(&main_container),
        true
    );
    if let Some(secs) = row.spec.batch_timeout {
        arm_batch_timeout(
            lifecycle.clone(),
            row.id,
            Duration::from_secs(secs.max(0) as u64),
        );
    }
    // A batch command can finish (or a kernel die) before we got here: handle it now.
    let early: Vec<_> = lifecycle
        .early_exits
        .lock()
        .map(|mut e| {
            created
                .iter()
                .filter_map(|c| e.remove(&c.kernel_id))
                .collect()
        })
        .unwrap_or_default();
    for exit in early {
        handle_kernel_exit(lifecycle, exit).await;
    }
}

/// A multi-node session of pods: every agent learns where the session's kernels on the
/// others run ([`super::addresses`]).
async fn tell_addresses(
    row: &SessionRow,
    hostnames: &[String],
    created: &[bai_core::agent::KernelCreated],
    agents: &[Arc<AgentHandle>],
    limit: Duration,
) -> Result<(), Reason> {
    let ids: Vec<&str> = agents.iter().map(|a| a.id.as_str()).collect();
    match super::addresses::table(hostnames, created, &ids)? {
        Some(hosts) => super::addresses::tell(row.id, &hosts, agents, limit).await,
        None => Ok(()),
    }
}

fn multi_node(row: &SessionRow) -> bool {
    row.spec.cluster_mode == ClusterMode::MultiNode && row.spec.cluster_size > 1
}

/// The agent of every kernel, main1 first.
fn kernel_agents(
    lifecycle: &Lifecycle,
    row: &SessionRow,
    main: &Arc<AgentHandle>,
    subs: &[SubKernel],
) -> Result<Vec<Arc<AgentHandle>>, Reason> {
    let mut out = vec![main.clone()];
    for k in subs {
        if !multi_node(row) {
            out.push(main.clone());
            continue;
        }
        let a = k.agent_id.as_deref().and_then(|a| lifecycle.agents.get(a));
        match a {
            Some(a) => out.push(a),
            None => {
                return Err(Reason::AgentLost(format!(
                    "the agent assigned to kernel sub{} is gone",
                    k.idx
                )));
            }
        }
    }
    Ok(out)
}

/// A multi-node session's overlay, one per kernel (none for other sessions).
fn overlays(
    lifecycle: &Lifecycle,
    row: &SessionRow,
    subs: &[SubKernel],
    agents: &[Arc<AgentHandle>],
) -> Result<Vec<bai_core::cluster::Overlay>, Reason> {
    if !multi_node(row) {
        return Ok(Vec::new());
    }
    let slot = match lifecycle.store.claim_overlay_slot(row.id, overlay::SLOTS) {
        Ok(Some(slot)) => slot,
        Ok(None) => {
            return Err(Reason::CreationFailed(format!(
                "all {} overlay networks are in use by other multi-node sessions",
                overlay::SLOTS
            )));
        }
        Err(e) => return Err(Reason::CreationFailed(e.to_string())),
    };
    let hosts: Vec<String> = kernels::places(row, subs)
        .into_iter()
        .map(|p| p.hostname)
        .collect();
    let kernels: Vec<(String, String)> = agents
        .iter()
        .map(|a| (a.id.clone(), overlay::underlay_of(a)))
        .collect();
    Ok(overlay::plan(slot, &hosts, &kernels))
}

/// PREPARING → ERROR before any kernel exists.
async fn fail_preparation(lifecycle: &Arc<Lifecycle>, row: &SessionRow, reason: Reason) {
    tracing::warn!(session = %row.id, %reason, "session cannot be prepared");
    let c = Change::new(S::Preparing, S::Error, reason, "launch").events(&[E::SessionFailure]);
    if transition_or_log(lifecycle, row.id, c).is_none() {
        lost_race(lifecycle, row, false).await;
    }
}

async fn fail_creation(lifecycle: &Arc<Lifecycle>, row: &SessionRow, reason: Reason) {
    tracing::warn!(session = %row.id, %reason, "kernel creation failed");
    if let Some(agent) = row
        .state
        .agent_id
        .as_deref()
        .and_then(|a| lifecycle.agents.get(a))
    {
        super::destroy_or_log(&agent, row.main_kernel_id).await;
    }
    // Out of time (the creation timeout) is EXPIRED in the history, as Backend.AI records a
    // handler's timeout; other failures are its default (FAILURE).
    let expired = matches!(reason, Reason::CreationTimeout { .. });
    let mut c = Change::new(S::Creating, S::Error, reason, "launch").events(&[E::SessionFailure]);
    if expired {
        c = c.outcome(
            bai_core::history::HistoryResult::Expired,
            "creation-timeout",
        );
    }
    if transition_or_log(lifecycle, row.id, c).is_none() {
        lost_race(lifecycle, row, false).await;
    }
}

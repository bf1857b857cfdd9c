//! Creating a session: validate everything up front, then store it PENDING.
//! Nothing is half-created: a bad request is answered with a problem and writes nothing.

use super::Lifecycle;
use bai_core::Problem;
use bai_core::agent::Mount;
use bai_core::cluster::ClusterMode;
use bai_core::name::SessionName;
use bai_core::resources::{format_bytes, format_cpu};
use bai_ground::identity::Caller;
use bai_store::{NewSession, ResolvedSpec, SessionRow};

use super::admit::{
    check_cluster_policy, check_pending_limit, check_project, check_session_type, designated_agent,
    resolve_dependencies, resolve_group,
};
use super::mounts::resolve_mounts;
use bai_core::SessionSpec;

/// A validated create request.
#[derive(Debug, Clone)]
pub struct CreatePlan {
    pub session: NewSession,
    pub enqueue_only: bool,
    pub max_wait_secs: u64,
    pub reuse_if_exists: bool,
    /// How many sessions to create from this request ("Sessions: N").
    pub count: u32,
    /// The request's `Idempotency-Key` (set by the API after planning).
    pub idempotency: Option<super::idempotent::IdemKey>,
}

/// Checks a session request against what the server has (the owner, the image, the
/// resource group and its agents, the folders, the dependencies, the queue) and plans it.
/// What needs no server state was checked when the spec was made (at the HTTP edge, from a
/// `POST /session` request; or by the platform's own code for its sessions).
pub fn plan_spec(
    lifecycle: &Lifecycle,
    caller: &Caller,
    spec: &SessionSpec,
) -> Result<CreatePlan, Problem> {
    // Owner: an admin may create a session for another keypair.
    let (access_key, user_id) = caller.owner(
        &lifecycle.store,
        spec.owner_access_key.as_deref(),
        "create sessions",
    )?;

    // Name.
    let name = match &spec.name {
        Some(n) => n.clone(),
        None => loop {
            let n = SessionName::random();
            if lifecycle
                .store
                .live_session_named(&access_key, n.as_str())?
                .is_none()
            {
                break n;
            }
        },
    };

    // Image.
    let image_req = spec.image.as_str();
    let images = crate::images::Sources {
        store: &lifecycle.store,
        agents: &lifecycle.agents,
        registry: &lifecycle.registry,
    };
    let image =
        crate::images::resolve(&images, image_req, &user_id, caller.is_admin).ok_or_else(|| {
            Problem::image_not_found(
                image_req,
                &crate::images::known(&images, &user_id, caller.is_admin),
            )
        })?;
    let session_type = spec.session_type;

    // Resource group: it must exist and be open to the owner; its agents bound the request.
    let project = spec.project.clone();
    check_project(lifecycle, &access_key, &project)?;
    let scaling_group = resolve_group(
        lifecycle,
        &access_key,
        &project,
        spec.scaling_group.as_deref(),
    )?;
    check_session_type(lifecycle, &scaling_group, session_type)?;

    // Resources are per kernel; a single-node session needs all of its kernels' on one node,
    // a multi-node session one kernel's on each node it uses.
    let req = &spec.resources;
    let (cluster_mode, cluster_size) = (spec.cluster_mode, spec.cluster_size);
    check_cluster_policy(lifecycle, &access_key, cluster_size)?;
    let multi_node = cluster_mode == ClusterMode::MultiNode && cluster_size > 1;
    let total = req.slots.times(u64::from(cluster_size));
    let need = if multi_node {
        req.slots.clone()
    } else {
        total.clone()
    };
    let each = if multi_node {
        format!(" (each of its {cluster_size} kernels)")
    } else if cluster_size > 1 {
        format!(" ({cluster_size} kernels together)")
    } else {
        String::new()
    };
    let agents: Vec<_> = lifecycle
        .agents
        .all()
        .into_iter()
        .filter(|a| a.info().scaling_group == scaling_group)
        .collect();
    if agents.is_empty() {
        return Err(Problem::new(
            503,
            "no-agents",
            "No agents.",
            format!(
                "no agent node is registered in resource group {scaling_group:?}; start one with `baid up` or pick another group"
            ),
        ));
    }
    if !agents.iter().any(|a| need.fits_in(&a.info().size())) {
        // An accelerator no node of the group has enough of, named first.
        for (slot, want) in need.accel.iter().filter(|(_, v)| **v > 0) {
            let most = agents
                .iter()
                .map(|a| a.info().size().accel.get(slot).copied().unwrap_or(0))
                .max()
                .unwrap_or(0);
            if *want > most {
                let unit = bai_core::accel::display_unit(slot);
                let has = if most == 0 {
                    format!("no node of resource group {scaling_group:?} has any")
                } else {
                    format!(
                        "the most one node of resource group {scaling_group:?} has is {} {unit}",
                        format_cpu(most)
                    )
                };
                return Err(super::admit::too_large(format!(
                    "the session asks for {slot}={} ({unit}){each}, but {has}; ask for less",
                    format_cpu(*want)
                )));
            }
        }
        let largest = agents
            .iter()
            .map(|a| a.info().size())
            .max_by_key(|c| (c.mem, c.cpu_milli))
            .unwrap_or_default();
        return Err(super::admit::too_large(format!(
            "the session asks for {} cores and {} of memory{each}, but the largest node of resource group {scaling_group:?} has {} cores and {}; ask for less",
            format_cpu(need.cpu_milli),
            format_bytes(need.mem),
            format_cpu(largest.cpu_milli),
            format_bytes(largest.mem)
        )));
    }
    super::admit::kernel_fits_some(&agents, &scaling_group, &need, &req.slots)?;
    if multi_node {
        super::admit::fits_group(&agents, &scaling_group, &total, cluster_size)?;
    }
    // The selected agent holds what one placement on it needs: the whole of a single-node
    // session, main1 of a multi-node one.
    let designated_agent = designated_agent(
        spec.agent.as_deref(),
        &agents,
        &scaling_group,
        &need,
        &req.slots,
    )?;

    // Data folders.
    let mounts = resolve_mounts(lifecycle, &user_id, &spec.mounts)?;
    check_dotfiles(lifecycle, &user_id, &mounts)?;

    let dependencies = resolve_dependencies(lifecycle, &access_key, &spec.dependencies)?;
    check_pending_limit(lifecycle, &access_key)?;
    Ok(CreatePlan {
        session: NewSession::new(
            name.to_string(),
            ResolvedSpec {
                access_key,
                user_id,
                domain_name: spec.domain.clone(),
                group_name: project,
                scaling_group,
                session_type,
                image,
                tag: spec.tag.clone(),
                priority: spec.priority,
                starts_at: spec
                    .starts_at
                    .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Micros, false)),
                batch_timeout: spec.batch_timeout_secs,
                startup_command: spec.startup_command.clone(),
                bootstrap_script: spec.bootstrap_script.clone(),
                environ: spec.environ.clone(),
                requested_slots: total,
                shmem: req.shmem,
                designated_agent,
                dependencies,
                mounts,
                preopen_ports: spec.preopen_ports.clone(),
                cluster_mode,
                cluster_size,
                requeue: spec.requeue,
            },
        ),
        enqueue_only: spec.enqueue_only,
        max_wait_secs: spec.max_wait_secs,
        reuse_if_exists: spec.reuse_if_exists,
        count: spec.count,
        idempotency: None,
    })
}

/// A dotfile of the owner where a folder is mounted would be hidden by the folder: refused
/// at the create, as Backend.AI does, naming both.
fn check_dotfiles(lifecycle: &Lifecycle, user_id: &str, mounts: &[Mount]) -> Result<(), Problem> {
    if mounts.is_empty() {
        return Ok(());
    }
    let dotfiles = lifecycle
        .store
        .dotfiles(user_id)
        .map_err(bai_core::Problem::from)?;
    for mt in mounts {
        let rel = mt
            .kernel_path
            .strip_prefix(bai_core::dotfile::HOME)
            .unwrap_or(&mt.kernel_path)
            .trim_start_matches('/');
        if let Some(d) = bai_core::dotfile::under_mount(&dotfiles, rel) {
            return Err(Problem::invalid(format!(
                "your dotfile {:?} lies where folder {:?} is mounted ({}): mount the folder elsewhere or move the dotfile",
                d.path, mt.name, mt.kernel_path
            )));
        }
    }
    Ok(())
}

/// Outcome of [`create`].
pub enum Created {
    New(SessionRow),
    /// A live session with that name exists and the client asked to reuse it.
    Reused(SessionRow),
    /// The request's idempotency key already made this session (a retry).
    Retried(SessionRow),
}

/// "Sessions: N": the planned session N times, named `NAME-1` … `NAME-N`, all PENDING in
/// one go; those that do not fit wait in the queue. Nothing is stored when a name is taken.
pub fn create_many(lifecycle: &Lifecycle, plan: &CreatePlan) -> Result<Vec<SessionRow>, Problem> {
    // A retry of a request that already made its sessions answers them again.
    if let Some(key) = &plan.idempotency
        && super::idempotent::existing(lifecycle, &plan.session.spec.access_key, &key.nth(1))?
            .is_some()
    {
        let mut rows = Vec::new();
        for i in 1..=plan.count {
            if let Some(row) =
                super::idempotent::existing(lifecycle, &plan.session.spec.access_key, &key.nth(i))?
            {
                rows.push(row);
            }
        }
        return Ok(rows);
    }
    let mut plans = Vec::new();
    for i in 1..=plan.count {
        let mut p = plan.clone();
        let name = format!("{}-{i}", plan.session.name);
        SessionName::parse(&name).map_err(|e| {
            Problem::invalid(format!(
                "with {} sessions the names get a suffix: {e}",
                plan.count
            ))
        })?;
        p.session = plan.session.renamed(name);
        p.reuse_if_exists = false;
        p.idempotency = plan.idempotency.as_ref().map(|k| k.nth(i));
        if lifecycle
            .store
            .live_session_named(&p.session.spec.access_key, &p.session.name)?
            .is_some()
        {
            return Err(Problem::conflict(
                "session-already-exists",
                "The session already exists.",
                format!("you already have a live session named {:?}", p.session.name),
            ));
        }
        plans.push(p);
    }
    let mut rows = Vec::new();
    for p in &plans {
        let (Created::New(row) | Created::Reused(row) | Created::Retried(row)) =
            create(lifecycle, p)?;
        rows.push(row);
    }
    Ok(rows)
}

/// Stores a planned session PENDING (or finds the one to reuse) and wakes the scheduler.
pub fn create(lifecycle: &Lifecycle, plan: &CreatePlan) -> Result<Created, Problem> {
    let s = &plan.session;
    if let Some(key) = &plan.idempotency
        && let Some(row) = super::idempotent::existing(lifecycle, &s.spec.access_key, key)?
    {
        return Ok(Created::Retried(row));
    }
    if let Some(existing) = lifecycle
        .store
        .live_session_named(&s.spec.access_key, &s.name)?
    {
        if plan.reuse_if_exists && existing.spec.image == s.spec.image {
            return Ok(Created::Reused(existing));
        }
        return Err(Problem::conflict(
            "session-already-exists",
            "The session already exists.",
            format!(
                "you already have a live session named {:?}; pick another name or remove it first",
                s.name
            ),
        )
        .with_data_of(&bai_core::problem::ExistingSession {
            existing_session_id: existing.id.to_string(),
        }));
    }
    let key = plan
        .idempotency
        .as_ref()
        .map(|k| (k.key.as_str(), k.digest.as_str()));
    let ev = match lifecycle.store.insert_session_keyed(s, key) {
        Ok(ev) => ev,
        Err(e) => {
            // Two retries raced: the one that lost finds the winner's session.
            if let Some(k) = &plan.idempotency
                && let Some(row) = super::idempotent::existing(lifecycle, &s.spec.access_key, k)?
            {
                return Ok(Created::Retried(row));
            }
            return Err(bai_core::Problem::from(e));
        }
    };
    lifecycle.bus.publish(vec![ev]);
    lifecycle.bus.wake_scheduler();
    let row = lifecycle
        .store
        .session(s.id)?
        .ok_or_else(|| Problem::internal("session vanished right after insert"))?;
    Ok(Created::New(row))
}

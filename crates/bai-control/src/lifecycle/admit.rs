//! The parts of a session request that are checked against what the server has: the
//! resource group and project, "Select Agent", dependencies, the owner's queue limit and
//! the owner's policy on the cluster's size.

use super::Lifecycle;
use bai_core::Problem;
use bai_core::resources::{format_bytes, format_cpu};
use uuid::Uuid;

/// The resource group to create in: the one asked for, else `default` when the owner may
/// use it, else the owner's only group.
pub(super) fn resolve_group(
    lifecycle: &Lifecycle,
    access_key: &str,
    project: &str,
    asked: Option<&str>,
) -> Result<String, Problem> {
    let allowed = lifecycle
        .store
        .groups_for_project(access_key, Some(project))?;
    let names: Vec<&str> = allowed.iter().map(|g| g.name.as_str()).collect();
    match asked {
        Some(g) if names.contains(&g) => Ok(g.to_string()),
        Some(g) => Err(Problem::invalid(format!(
            "resource group {g:?} does not exist or is not open to you; use one of: {}",
            names.join(", ")
        ))),
        None if names.contains(&"default") => Ok("default".into()),
        None if names.len() == 1 => Ok(names[0].to_string()),
        None => Err(Problem::invalid(format!(
            "choose a resource group (scalingGroup): one of {}",
            names.join(", ")
        ))),
    }
}

/// The resource group must take sessions of this type (its `allowed_session_types`).
pub(super) fn check_session_type(
    lifecycle: &Lifecycle,
    group: &str,
    session_type: bai_core::status::SessionType,
) -> Result<(), Problem> {
    let Some(g) = lifecycle.store.resource_group(group)? else {
        return Ok(());
    };
    if g.allowed_session_types
        .iter()
        .any(|t| t == session_type.as_str())
    {
        return Ok(());
    }
    Err(Problem::invalid(format!(
        "resource group {group:?} does not take {} sessions (it takes: {})",
        session_type.as_str(),
        g.allowed_session_types.join(", ")
    )))
}

/// The session's project (`group`) must exist and have the owner as a member.
pub(super) fn check_project(
    lifecycle: &Lifecycle,
    access_key: &str,
    project: &str,
) -> Result<(), Problem> {
    if !lifecycle.store.project_exists(project)? {
        return Err(Problem::invalid(format!(
            "project {project:?} does not exist"
        )));
    }
    if !lifecycle.store.is_member(access_key, project)? {
        return Err(Problem::forbidden(format!(
            "you are not a member of project {project:?}; ask an administrator to add you"
        )));
    }
    Ok(())
}

/// The refusal of a request no node (or no set of nodes) of the group could ever hold.
pub(super) fn too_large(msg: String) -> Problem {
    Problem::new(
        400,
        "resource-request-too-large",
        "Too large resource request.",
        msg,
    )
    .with_code("session_create_unavailable")
}

/// A multi-node session's kernels together must fit the group's nodes together.
pub(super) fn fits_group(
    agents: &[std::sync::Arc<bai_ground::agents::AgentHandle>],
    group: &str,
    total: &bai_core::ResourceSlots,
    kernels: u32,
) -> Result<(), Problem> {
    let all = agents
        .iter()
        .fold(bai_core::ResourceSlots::default(), |t, a| {
            t.add(&a.info().size())
        });
    if total.fits_in(&all) {
        return Ok(());
    }
    Err(too_large(format!(
        "the session's {kernels} kernels ask for {} cores and {} of memory in all, but the nodes of resource group {group:?} have {} cores and {} together; ask for fewer or smaller kernels",
        bai_core::resources::format_cpu(total.cpu_milli),
        bai_core::resources::format_bytes(total.mem),
        bai_core::resources::format_cpu(all.cpu_milli),
        bai_core::resources::format_bytes(all.mem)
    )))
}

/// Some node of the group that is large enough for `need` (what one placement takes) must
/// also give one kernel all of `kernel` (one kernel's request): a node whose GPUs are shared
/// with MPS gives a kernel one slice at most ([`bai_core::agent::AgentInfo::kernel_most`]).
/// `agents` are the group's, at least one of them large enough.
pub(super) fn kernel_fits_some(
    agents: &[std::sync::Arc<bai_ground::agents::AgentHandle>],
    group: &str,
    need: &bai_core::ResourceSlots,
    kernel: &bai_core::ResourceSlots,
) -> Result<(), Problem> {
    let mut first = None;
    let mut most = 0;
    for a in agents {
        let info = a.info.read().unwrap_or_else(|p| p.into_inner());
        if !need.fits_in(&info.size()) {
            continue;
        }
        let Some(over) = info.over_kernel_most(kernel) else {
            return Ok(());
        };
        most = most.max(over.most.amount);
        first.get_or_insert_with(|| (over.slot.to_string(), over.asked, over.on(&a.id)));
    }
    let Some((slot, asked, on)) = first else {
        return Ok(());
    };
    Err(too_large(format!(
        "the session asks for {slot}={} for each kernel, but no node of resource group {group:?} gives one kernel that much: {on}; ask for {slot}={} or less",
        format_cpu(asked),
        format_cpu(most)
    )))
}

/// "Select Agent" (`config.agentList`): the agent must be in the group, able to hold the
/// request (`want`) and to give one kernel all of `kernel`.
pub(super) fn designated_agent(
    asked: Option<&str>,
    agents: &[std::sync::Arc<bai_ground::agents::AgentHandle>],
    group: &str,
    want: &bai_core::ResourceSlots,
    kernel: &bai_core::ResourceSlots,
) -> Result<Option<String>, Problem> {
    match asked {
        None => Ok(None),
        Some(one) => {
            let Some(a) = agents.iter().find(|a| a.id == one) else {
                return Err(Problem::invalid(format!(
                    "agent {one:?} is not in resource group {group:?}; agents there: {}",
                    agents
                        .iter()
                        .map(|a| a.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            };
            let info = a.info.read().unwrap_or_else(|p| p.into_inner());
            let size = info.size();
            if !want.fits_in(&size) {
                return Err(Problem::invalid(format!(
                    "agent {one:?} is too small for this request ({} cores, {} in all)",
                    format_cpu(size.cpu_milli),
                    format_bytes(size.mem)
                )));
            }
            if let Some(over) = info.over_kernel_most(kernel) {
                return Err(Problem::invalid(format!(
                    "agent {one:?} cannot take this session: {}",
                    over.on(one)
                )));
            }
            Ok(Some(one.to_string()))
        }
    }
}

/// `dependencies`: the owner's sessions (ids or names) that must finish successfully first.
pub(super) fn resolve_dependencies(
    lifecycle: &Lifecycle,
    access_key: &str,
    list: &[String],
) -> Result<Vec<Uuid>, Problem> {
    let mut out = Vec::new();
    for r in list {
        let found = lifecycle.store.find_session(r, Some(access_key))?;
        match found.first() {
            Some(s) => out.push(s.id),
            None => {
                return Err(Problem::not_found(
                    "session",
                    format!("dependency {r:?} is not one of your sessions"),
                ));
            }
        }
    }
    out.dedup();
    Ok(out)
}

/// The keypair policy's `max_pending_sessions`: refuse at once when the queue is full.
pub(super) fn check_pending_limit(lifecycle: &Lifecycle, access_key: &str) -> Result<(), Problem> {
    let policy = lifecycle.store.policy_of(access_key)?;
    let Some(max) = policy.max_pending_sessions else {
        return Ok(());
    };
    let pending = lifecycle.store.pending_count(access_key)?;
    if pending >= max {
        return Err(Problem::new(
            429,
            "pending-session-limit",
            "Too many pending sessions.",
            format!(
                "you already have {pending} PENDING sessions, the most resource policy {:?} allows; wait for them to start or remove some",
                policy.name
            ),
        ));
    }
    Ok(())
}

/// The owner's policy's `max_containers_per_session` (bai's own bound on `clusterSize` was
/// checked when the spec was made).
pub(super) fn check_cluster_policy(
    lifecycle: &Lifecycle,
    access_key: &str,
    size: u32,
) -> Result<(), Problem> {
    let policy = lifecycle.store.policy_of(access_key)?;
    if let Some(max) = policy.max_containers_per_session
        && i64::from(size) > max
    {
        return Err(Problem::new(
            400,
            "too-many-containers",
            "Too many containers.",
            format!(
                "the session asks for {size} containers, but resource policy {:?} allows at most {max} per session",
                policy.name
            ),
        )
        .with_code("session_create_unavailable"));
    }
    Ok(())
}

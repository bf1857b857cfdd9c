//! The parts of a create request that are checked against what the server has: the
//! resource group and project, presets, "Select Agent", dependencies, the owner's queue
//! limit, preopen ports and the count.

use super::Lifecycle;
use bai_api::sessions::{ClusterMode as WireClusterMode, ListOrText, NumberOrText};
use bai_core::Problem;
use bai_core::cluster::{ClusterMode, MAX_CLUSTER_SIZE};
use bai_core::resources::{format_bytes, format_cpu};
use serde_json::{Map, Value};
use uuid::Uuid;

/// "Sessions: N" of the launcher (`count`, 1 to 100).
pub(super) fn parse_count(count: Option<u32>) -> Result<u32, Problem> {
    match count {
        None => Ok(1),
        Some(n @ 1..=100) => Ok(n),
        Some(n) => Err(Problem::invalid(format!(
            "count {n} is out of range: create 1 to 100 sessions at once"
        ))),
    }
}

/// The resource group to create in: the one asked for, else `default` when the owner may
/// use it, else the owner's only group.
pub(super) fn resolve_group(
    m: &Lifecycle,
    access_key: &str,
    project: &str,
    asked: Option<&str>,
) -> Result<String, Problem> {
    let allowed = m.store.groups_for_project(access_key, Some(project))?;
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
    m: &Lifecycle,
    group: &str,
    session_type: bai_core::status::SessionType,
) -> Result<(), Problem> {
    let Some(g) = m.store.resource_group(group)? else {
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

/// `config.preopen_ports`: a list of ports (numbers or numeric strings), or one string with
/// ports separated by commas or spaces; each 1024–65535, no duplicates, at most 16.
pub fn parse_preopen_ports(v: Option<&ListOrText<NumberOrText>>) -> Result<Vec<u16>, Problem> {
    let items: Vec<String> = match v {
        None => return Ok(Vec::new()),
        Some(ListOrText::Text(s)) => s
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect(),
        Some(ListOrText::List(a)) => a.iter().map(|p| p.to_string().trim().to_string()).collect(),
    };
    let mut ports: Vec<u16> = Vec::new();
    for item in items {
        let port = match item.parse::<u32>() {
            Ok(p @ 1024..=65535) => p as u16,
            _ => {
                return Err(Problem::invalid(format!(
                    "preopen port {item:?} is invalid: use numbers from 1024 to 65535"
                )));
            }
        };
        if ports.contains(&port) {
            return Err(Problem::invalid(format!(
                "preopen port {port} is given twice"
            )));
        }
        if crate::apps::INTRINSIC.iter().any(|a| a.port == port) {
            return Err(Problem::invalid(format!(
                "preopen port {port} is taken by a built-in app; choose another"
            )));
        }
        ports.push(port);
    }
    if ports.len() > 16 {
        return Err(Problem::invalid("at most 16 preopen ports may be given"));
    }
    Ok(ports)
}

/// The session's project (`group`) must exist and have the owner as a member.
pub(super) fn check_project(m: &Lifecycle, access_key: &str, project: &str) -> Result<(), Problem> {
    if !m.store.project_exists(project)? {
        return Err(Problem::invalid(format!(
            "project {project:?} does not exist"
        )));
    }
    if !m.store.is_member(access_key, project)? {
        return Err(Problem::forbidden(format!(
            "you are not a member of project {project:?}; ask an administrator to add you"
        )));
    }
    Ok(())
}

/// Fills `resources` / `resource_opts` from a preset where the request leaves them out.
pub(super) fn apply_preset(
    m: &Lifecycle,
    name: &str,
    resources: &mut Map<String, Value>,
    resource_opts: &mut Map<String, Value>,
) -> Result<(), Problem> {
    let presets = m.store.presets()?;
    let Some(p) = presets.iter().find(|p| p.name == name) else {
        let names: Vec<&str> = presets.iter().map(|p| p.name.as_str()).collect();
        return Err(Problem::not_found(
            "resource-preset",
            format!(
                "no resource preset named {name:?}; presets: {}",
                if names.is_empty() {
                    "none defined".to_string()
                } else {
                    names.join(", ")
                }
            ),
        ));
    };
    let wire = p.slots.to_wire();
    if let Some(w) = wire.as_object() {
        for (k, v) in w {
            resources.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    if let Some(shmem) = p.shmem {
        resource_opts
            .entry("shmem".to_string())
            .or_insert_with(|| Value::String(shmem.to_string()));
    }
    Ok(())
}

/// "Select Agent" (`config.agentList`): one agent of the group that can hold the request.
/// A multi-node session's kernels together must fit the group's nodes together.
pub(super) fn fits_group(
    agents: &[std::sync::Arc<crate::agents::AgentHandle>],
    group: &str,
    total: &bai_core::ResourceSlots,
    kernels: u32,
) -> Result<(), Problem> {
    let all = agents
        .iter()
        .fold(bai_core::ResourceSlots::default(), |t, a| {
            t.add(&a.info().capacity)
        });
    if total.fits_in(&all) {
        return Ok(());
    }
    Err(Problem::new(
        400,
        "resource-request-too-large",
        "Too large resource request.",
        format!(
            "the session's {kernels} kernels ask for {} cores and {} of memory in all, but the nodes of resource group {group:?} have {} cores and {} together; ask for fewer or smaller kernels",
            bai_core::resources::format_cpu(total.cpu_milli),
            bai_core::resources::format_bytes(total.mem),
            bai_core::resources::format_cpu(all.cpu_milli),
            bai_core::resources::format_bytes(all.mem)
        ),
    )
    .with_code("session_create_unavailable"))
}

pub(super) fn designated_agent(
    asked: Option<&ListOrText<String>>,
    agents: &[std::sync::Arc<crate::agents::AgentHandle>],
    group: &str,
    want: &bai_core::ResourceSlots,
) -> Result<Option<String>, Problem> {
    let list: Vec<&str> = match asked {
        None => return Ok(None),
        Some(ListOrText::List(a)) => a.iter().map(String::as_str).collect(),
        Some(ListOrText::Text(s)) => s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect(),
    };
    match list.as_slice() {
        [] => Ok(None),
        [one] => {
            let Some(a) = agents.iter().find(|a| a.id == *one) else {
                return Err(Problem::invalid(format!(
                    "agent {one:?} is not in resource group {group:?}; agents there: {}",
                    agents
                        .iter()
                        .map(|a| a.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            };
            if !want.fits_in(&a.info().capacity) {
                return Err(Problem::invalid(format!(
                    "agent {one:?} is too small for this request ({} cores, {} in all)",
                    format_cpu(a.info().capacity.cpu_milli),
                    format_bytes(a.info().capacity.mem)
                )));
            }
            Ok(Some(one.to_string()))
        }
        _ => Err(Problem::invalid(
            "give one agent in agentList: it holds a single-node session, or main1 of a multi-node one",
        )),
    }
}

/// `dependencies`: the owner's sessions (ids or names) that must finish successfully first.
pub(super) fn resolve_dependencies(
    m: &Lifecycle,
    access_key: &str,
    list: &[String],
) -> Result<Vec<Uuid>, Problem> {
    let mut out = Vec::new();
    for r in list {
        let found = m.store.find_session(r, Some(access_key))?;
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
pub(super) fn check_pending_limit(m: &Lifecycle, access_key: &str) -> Result<(), Problem> {
    let policy = m.store.policy_of(access_key)?;
    let Some(max) = policy.max_pending_sessions else {
        return Ok(());
    };
    let pending = m.store.pending_count(access_key)?;
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

/// `clusterSize` and `clusterMode` (top level, or in `config` as older clients send them):
/// at least 1, at most bai's own bound and the owner's policy's `max_containers_per_session`.
pub(super) fn cluster_shape(
    m: &Lifecycle,
    access_key: &str,
    size: Option<u32>,
    mode: Option<WireClusterMode>,
) -> Result<(ClusterMode, u32), Problem> {
    let size = match size.unwrap_or(1) {
        0 => {
            return Err(Problem::invalid(format!(
                "clusterSize 0 is invalid: use a whole number from 1 to {MAX_CLUSTER_SIZE}"
            )));
        }
        n if n <= MAX_CLUSTER_SIZE => n,
        // A size over bai's bound is "unavailable", as an over-limit size is in Backend.AI.
        n => {
            return Err(Problem::new(
                400,
                "too-many-containers",
                "Too many containers.",
                format!(
                    "the session asks for {n} containers, but a session has at most {MAX_CLUSTER_SIZE}"
                ),
            )
            .with_code("session_create_unavailable"));
        }
    };
    let mode = mode.map_or(ClusterMode::SingleNode, ClusterMode::from);
    let policy = m.store.policy_of(access_key)?;
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
    Ok((mode, size))
}

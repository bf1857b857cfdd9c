//! Resource groups: the listing open to users and the administrators' management.

use super::{agent_usage, check_name, existing_group, existing_project, require_admin, typed_body};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use bai_api::resources::{
    GroupAccess, GroupAccessChange, NewResourceGroup, ResourceGroup, ResourceGroupList,
    ResourceGroupSettings, ResourceSlots as WireSlots, Scheduler, Selector,
};
use bai_core::Problem;
use bai_core::resources::ResourceSlots;
use bai_core::status::SessionStatus as S;
use bai_sched::{Sequencer, Strategy};
use bai_store::ResourceGroupRow;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Arc;

fn group_view(
    m: &Manager,
    g: &ResourceGroupRow,
    used: &HashMap<String, ResourceSlots>,
) -> ResourceGroup {
    let mut cap = ResourceSlots::default();
    let mut free = ResourceSlots::default();
    let mut agents = Vec::new();
    for a in m.agents.all() {
        let info = a.info();
        if info.scaling_group != g.name {
            continue;
        }
        let u = used.get(&a.id).cloned().unwrap_or_default();
        cap = cap.add(&info.capacity);
        // What a lost, drained or withheld agent has free takes no session.
        if a.schedulable() {
            free = free.add(&info.capacity.checked_sub(&u));
        }
        agents.push(a.id.clone());
    }
    let fs = bai_sched::fairshare::Policy::from_json(&g.fairshare);
    ResourceGroup {
        name: g.name.clone(),
        description: g.description.clone(),
        is_public: g.is_public,
        scheduler: match Sequencer::parse(&g.scheduler).unwrap_or_default() {
            Sequencer::Fifo => Scheduler::Fifo,
            Sequencer::Lifo => Scheduler::Lifo,
            Sequencer::Drf => Scheduler::Drf,
            Sequencer::FairShare => Scheduler::Fairshare,
        },
        selector: match Strategy::parse(&g.selector).unwrap_or(Strategy::Dispersed) {
            Strategy::Dispersed => Selector::Dispersed,
            Strategy::Concentrated => Selector::Concentrated,
            Strategy::RoundRobin => Selector::RoundRobin,
        },
        starvation_secs: u64::try_from(g.starvation_secs).unwrap_or(0),
        pending_timeout_secs: u64::try_from(g.pending_timeout_secs).unwrap_or(0),
        agents,
        capacity: WireSlots::from(&cap),
        free: WireSlots::from(&free),
        egress: g.egress.clone(),
        warm_pool: bai_core::pool::format_targets(&g.warm_pool.targets),
        warm_pool_auto: g.warm_pool.auto,
        fairshare_half_life_secs: fs.half_life_secs,
        fairshare_weights: fs.weights.to_string(),
        fairshare_priority: fs.priority.to_string(),
        preemption: g.preemption.clone(),
    }
}

#[derive(Debug, Deserialize, Default)]
pub struct AllQuery {
    #[serde(default)]
    all: bool,
}

/// `GET /resource-groups`: the groups open to the caller (`?all=true`: every group, admins).
pub async fn list_groups(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Query(q): Query<AllQuery>,
) -> ApiResult<Json<ResourceGroupList>> {
    let groups = if q.all {
        require_admin(&caller)?;
        m.store.resource_groups()?
    } else {
        m.store.groups_for(&caller.access_key)?
    };
    let used = agent_usage(&m)?;
    let resource_groups = groups.iter().map(|g| group_view(&m, g, &used)).collect();
    Ok(Json(ResourceGroupList { resource_groups }))
}

/// Applies the settings given to `g`; those left out keep their value.
fn apply_settings(g: &mut ResourceGroupRow, s: ResourceGroupSettings) -> Result<(), Problem> {
    if let Some(d) = s.description {
        g.description = d;
    }
    if let Some(p) = s.is_public {
        g.is_public = p;
    }
    if let Some(s) = s.scheduler {
        g.scheduler = match s {
            Scheduler::Fifo => Sequencer::Fifo,
            Scheduler::Lifo => Sequencer::Lifo,
            Scheduler::Drf => Sequencer::Drf,
            Scheduler::Fairshare => Sequencer::FairShare,
        }
        .as_str()
        .to_string();
    }
    if let Some(s) = s.selector {
        g.selector = match s {
            Selector::Dispersed => Strategy::Dispersed,
            Selector::Concentrated => Strategy::Concentrated,
            Selector::RoundRobin => Strategy::RoundRobin,
        }
        .as_str()
        .to_string();
    }
    for (key, given, slot) in [
        ("starvation_secs", s.starvation_secs, &mut g.starvation_secs),
        (
            "pending_timeout_secs",
            s.pending_timeout_secs,
            &mut g.pending_timeout_secs,
        ),
    ] {
        if let Some(n) = given {
            *slot = i64::try_from(n)
                .map_err(|_| Problem::invalid(format!("{key} is too large: {n}")))?;
        }
    }
    if let Some(e) = s.egress {
        g.egress = e
            .normalized()
            .map_err(|e| Problem::invalid(format!("egress: {e}")))?;
    }
    if let Some(text) = s.warm_pool {
        g.warm_pool.targets = bai_core::pool::parse_targets(&text)
            .map_err(|e| Problem::invalid(format!("warm_pool: {e}")))?;
    }
    if let Some(n) = s.warm_pool_auto {
        if n > bai_core::pool::MAX_AUTO {
            return Err(Problem::invalid(format!(
                "warm_pool_auto: at most {} kernels per shape, not {n}",
                bai_core::pool::MAX_AUTO
            )));
        }
        g.warm_pool.auto = n;
    }
    if s.fairshare_half_life_secs.is_some()
        || s.fairshare_weights.is_some()
        || s.fairshare_priority.is_some()
    {
        let mut fs = bai_sched::fairshare::Policy::from_json(&g.fairshare);
        if let Some(h) = s.fairshare_half_life_secs {
            fs.half_life_secs = h;
        }
        if let Some(w) = s.fairshare_weights {
            fs.weights
                .parse_into(&w)
                .map_err(|e| Problem::invalid(format!("fairshare_weights: {e}")))?;
        }
        if let Some(w) = s.fairshare_priority {
            fs.priority
                .parse_into(&w)
                .map_err(|e| Problem::invalid(format!("fairshare_priority: {e}")))?;
        }
        g.fairshare = fs.to_json();
    }
    if let Some(m) = s.preemption {
        g.preemption.mode = m;
    }
    if let Some(secs) = s.preemption_grace_secs {
        // SIGTERM with no time at all is SIGKILL: a grace of at least a second.
        if secs == 0 {
            return Err(Problem::invalid(
                "preemption_grace_secs: at least 1 (the time between SIGTERM and the end)",
            ));
        }
        g.preemption.grace_secs = secs;
    }
    if let Some(secs) = s.preemption_min_runtime_secs {
        g.preemption.min_runtime_secs = secs;
    }
    if let Some(b) = s.preempt_interactive {
        g.preemption.interactive = b;
    }
    Ok(())
}

/// Resolves each warm pool shape's image (an alias becomes the reference a create of it
/// would run) and refuses a shape that none of the group's agents can hold, saying why.
fn check_pool(m: &Manager, g: &mut ResourceGroupRow) -> Result<(), Problem> {
    if g.warm_pool.targets.is_empty() {
        return Ok(());
    }
    let sources = bai_control::images::Sources {
        store: &m.store,
        agents: &m.agents,
        registry: &m.images.registry,
    };
    let agents: Vec<_> = m
        .agents
        .all()
        .into_iter()
        .map(|a| a.info())
        .filter(|i| i.scaling_group == g.name)
        .collect();
    for t in &mut g.warm_pool.targets {
        let given = t.shape.image.clone();
        t.shape.image = bai_control::images::resolve(&sources, &given, "", true)
            .ok_or_else(|| Problem::invalid(format!("warm_pool: no image {given:?}")))?;
        let holds = |i: &bai_core::agent::AgentInfo| {
            i.capacity.cpu_milli >= t.shape.cpu_milli && i.capacity.mem >= t.shape.mem
        };
        if !agents.iter().any(holds) {
            let why = if agents.is_empty() {
                format!("resource group {:?} has no agents", g.name)
            } else {
                let big =
                    agents
                        .iter()
                        .map(|i| &i.capacity)
                        .fold(ResourceSlots::default(), |a, c| ResourceSlots {
                            cpu_milli: a.cpu_milli.max(c.cpu_milli),
                            mem: a.mem.max(c.mem),
                            accel: Default::default(),
                        });
                format!(
                    "the largest agent of {:?} has cpu {} and mem {} MiB",
                    g.name,
                    bai_core::resources::format_cpu(big.cpu_milli),
                    big.mem >> 20
                )
            };
            return Err(Problem::invalid(format!(
                "warm_pool: no agent can hold {}: {why}",
                t.shape
            )));
        }
    }
    Ok(())
}

/// `POST /admin/resource-groups`: creates a group.
pub async fn create_group(
    State(m): State<Arc<Manager>>,
    body: axum::body::Bytes,
) -> ApiResult<(StatusCode, Json<ResourceGroup>)> {
    // The settings first, on their own: read inside the flattened `NewResourceGroup`, a
    // wrong one would not be named.
    let _: ResourceGroupSettings = typed_body(&body)?;
    let NewResourceGroup { name, settings } = typed_body(&body)?;
    check_name("resource group", &name)?;
    if m.store.resource_group(&name)?.is_some() {
        return Err(Problem::conflict(
            "resource-group-exists",
            "The resource group exists.",
            format!("resource group {name:?} already exists; change it with update"),
        )
        .into());
    }
    let mut g = ResourceGroupRow::new(&name);
    apply_settings(&mut g, settings)?;
    check_pool(&m, &mut g)?;
    m.store.put_resource_group(&g)?;
    m.bus.wake_scheduler();
    let used = agent_usage(&m)?;
    Ok((StatusCode::CREATED, Json(group_view(&m, &g, &used))))
}

/// `PATCH /admin/resource-groups/{name}`: changes the fields given.
pub async fn update_group(
    State(m): State<Arc<Manager>>,
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<Json<ResourceGroup>> {
    let settings: ResourceGroupSettings = typed_body(&body)?;
    let mut g = existing_group(&m, &name)?;
    let pool_given = settings.warm_pool.is_some();
    apply_settings(&mut g, settings)?;
    if pool_given {
        check_pool(&m, &mut g)?;
    }
    m.store.put_resource_group(&g)?;
    m.bus.wake_scheduler();
    let used = agent_usage(&m)?;
    Ok(Json(group_view(&m, &g, &used)))
}

/// `DELETE /admin/resource-groups/{name}`: only a group without agents and live sessions.
pub async fn delete_group(
    State(m): State<Arc<Manager>>,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
    existing_group(&m, &name)?;
    if let Some(why) = in_use(&m, &name)? {
        return Err(Problem::conflict(
            "resource-group-in-use",
            "The resource group is in use.",
            why,
        )
        .into());
    }
    m.store.delete_resource_group(&name)?;
    Ok(StatusCode::NO_CONTENT)
}

/// Why a resource group cannot be deleted now (agents or live sessions in it), if so.
pub fn in_use(m: &Manager, name: &str) -> Result<Option<String>, bai_store::StoreError> {
    if m.agents
        .all()
        .iter()
        .any(|a| a.info().scaling_group == name)
    {
        return Ok(Some(format!(
            "resource group {name:?} still has agents; move them first"
        )));
    }
    let live: Vec<S> = S::ALL.into_iter().filter(|s| !s.is_terminal()).collect();
    if m.store
        .sessions_in(&live)?
        .iter()
        .any(|r| r.spec.scaling_group == name)
    {
        return Ok(Some(format!(
            "resource group {name:?} still has live sessions"
        )));
    }
    Ok(None)
}

/// `POST /admin/resource-groups/{name}/access`: `{"access_key": AK, "allow": bool}` or
/// `{"project": NAME, "allow": bool}` (every member of the project).
pub async fn group_access(
    State(m): State<Arc<Manager>>,
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<Json<GroupAccess>> {
    let req: GroupAccessChange = typed_body(&body)?;
    existing_group(&m, &name)?;
    let allowed = req.allow.unwrap_or(true);
    if let Some(project) = req.project {
        existing_project(&m, &project)?;
        m.store.set_group_project_access(&name, &project, allowed)?;
        return Ok(Json(GroupAccess {
            resource_group: name,
            access_key: None,
            project: Some(project),
            allowed,
        }));
    }
    let ak = req
        .access_key
        .ok_or_else(|| Problem::invalid("give the access_key or the project to allow or deny"))?;
    if m.store.keypair(&ak)?.is_none() {
        return Err(Problem::not_found("keypair", format!("no keypair {ak:?}")).into());
    }
    m.store.set_group_access(&name, &ak, allowed)?;
    Ok(Json(GroupAccess {
        resource_group: name,
        access_key: Some(ak),
        project: None,
        allowed,
    }))
}

//! Resource groups, presets, keypair resource policies and agents: what users may list and
//! administrators manage.

use super::json_body;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::scheduler::snapshot::Occupancy;
use crate::state::Manager;
use axum::Extension;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use bai_core::Problem;
use bai_core::resources::{ResourceSlots, parse_cpu, parse_mem};
use bai_core::status::SessionStatus as S;
use bai_sched::{Sequencer, Strategy};
use bai_store::{PolicyRow, PresetRow, ResourceGroupRow};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;

/// An administrator's request body with a valid `name` of a `what`.
fn admin_named_body(caller: &Caller, body: &[u8], what: &str) -> Result<(Value, String), Problem> {
    require_admin(caller)?;
    let body = json_body(body)?;
    let name = body
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::invalid(format!("give the {what} a name")))?
        .to_string();
    check_name(what, &name)?;
    Ok((body, name))
}

fn existing_group(m: &Manager, name: &str) -> ApiResult<ResourceGroupRow> {
    Ok(m.store.resource_group(name)?.ok_or_else(|| {
        Problem::not_found("resource-group", format!("no resource group {name:?}"))
    })?)
}

fn existing_project(m: &Manager, name: &str) -> ApiResult<()> {
    if m.store.project_exists(name)? {
        Ok(())
    } else {
        Err(Problem::not_found("project", format!("no project {name:?}")).into())
    }
}

fn require_admin(c: &Caller) -> Result<(), Problem> {
    if c.is_admin {
        Ok(())
    } else {
        Err(Problem::forbidden("this needs an administrator's keypair"))
    }
}

/// Names of groups, presets and policies: 1–64 letters, digits, `-`, `_`, `.`.
fn check_name(what: &str, n: &str) -> Result<(), Problem> {
    let ok = (1..=64).contains(&n.len())
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(Problem::invalid(format!(
            "{what} name {n:?} is invalid: use 1 to 64 letters, digits, '-', '_' or '.'"
        )))
    }
}

/// `{"cpu": "2", "mem": "4g", "mock.shares": "0.5"}` → slots; missing keys are zero.
pub fn parse_slot_map(m: &Map<String, Value>) -> Result<ResourceSlots, Problem> {
    let mut s = ResourceSlots::default();
    for (k, v) in m {
        match k.as_str() {
            "cpu" => s.cpu_milli = parse_cpu(k, v).map_err(|e| Problem::invalid(e.to_string()))?,
            "mem" => s.mem = parse_mem(k, v).map_err(|e| Problem::invalid(e.to_string()))?,
            other if other.contains('.') => {
                s.accel.insert(
                    other.to_string(),
                    parse_cpu(k, v).map_err(|e| Problem::invalid(e.to_string()))?,
                );
            }
            other => {
                return Err(Problem::invalid(format!(
                    "unknown resource slot {other:?}: use cpu, mem or an accelerator slot like mock.shares"
                )));
            }
        }
    }
    Ok(s)
}

/// Slots held on each agent.
fn agent_usage(m: &Manager) -> ApiResult<HashMap<String, ResourceSlots>> {
    Ok(Occupancy::read(m)?.by_agent)
}

fn group_json(m: &Manager, g: &ResourceGroupRow, used: &HashMap<String, ResourceSlots>) -> Value {
    let mut cap = ResourceSlots::default();
    let mut free = ResourceSlots::default();
    let mut agents = Vec::new();
    for a in m.agents() {
        let info = a.info();
        if info.scaling_group != g.name {
            continue;
        }
        let u = used.get(&a.id).cloned().unwrap_or_default();
        cap = cap.add(&info.capacity);
        free = free.add(&info.capacity.checked_sub(&u));
        agents.push(a.id.clone());
    }
    json!({
        "name": g.name,
        "description": g.description,
        "is_public": g.is_public,
        "scheduler": g.scheduler,
        "selector": g.selector,
        "starvation_secs": g.starvation_secs,
        "pending_timeout_secs": g.pending_timeout_secs,
        "agents": agents,
        "capacity": cap.to_wire(),
        "free": free.to_wire(),
    })
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
) -> ApiResult<Json<Value>> {
    let groups = if q.all {
        require_admin(&caller)?;
        m.store.resource_groups()?
    } else {
        m.store.groups_for(&caller.access_key)?
    };
    let used = agent_usage(&m)?;
    let items: Vec<Value> = groups.iter().map(|g| group_json(&m, g, &used)).collect();
    Ok(Json(json!({ "resource_groups": items })))
}

/// Applies the fields given in `body` to `g`, validating each.
fn apply_group_fields(g: &mut ResourceGroupRow, body: &Value) -> Result<(), Problem> {
    if let Some(d) = body.get("description").and_then(Value::as_str) {
        g.description = d.to_string();
    }
    if let Some(p) = body.get("is_public") {
        g.is_public = p
            .as_bool()
            .ok_or_else(|| Problem::invalid("is_public must be true or false"))?;
    }
    if let Some(s) = body.get("scheduler") {
        let s = s.as_str().unwrap_or_default();
        Sequencer::parse(s).ok_or_else(|| {
            Problem::invalid(format!("scheduler {s:?} is unknown: use fifo, lifo or drf"))
        })?;
        g.scheduler = s.to_string();
    }
    if let Some(s) = body.get("selector") {
        let s = s.as_str().unwrap_or_default();
        let st = Strategy::parse(s).ok_or_else(|| {
            Problem::invalid(format!(
                "selector {s:?} is unknown: use dispersed, concentrated or round-robin"
            ))
        })?;
        g.selector = st.as_str().to_string();
    }
    for (key, slot) in [
        ("starvation_secs", &mut g.starvation_secs),
        ("pending_timeout_secs", &mut g.pending_timeout_secs),
    ] {
        if let Some(v) = body.get(key) {
            *slot = v
                .as_i64()
                .filter(|n| *n >= 0)
                .ok_or_else(|| Problem::invalid(format!("{key} must be a whole number ≥ 0")))?;
        }
    }
    Ok(())
}

/// `POST /admin/resource-groups`: creates a group.
pub async fn create_group(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: axum::body::Bytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let (body, name) = admin_named_body(&caller, &body, "resource group")?;
    let name = name.as_str();
    if m.store.resource_group(name)?.is_some() {
        return Err(Problem::conflict(
            "resource-group-exists",
            "The resource group exists.",
            format!("resource group {name:?} already exists; change it with update"),
        )
        .into());
    }
    let mut g = ResourceGroupRow::new(name);
    apply_group_fields(&mut g, &body)?;
    m.store.put_resource_group(&g)?;
    m.wake_scheduler.notify_one();
    let used = agent_usage(&m)?;
    Ok((StatusCode::CREATED, Json(group_json(&m, &g, &used))))
}

/// `PATCH /admin/resource-groups/{name}`: changes the fields given.
pub async fn update_group(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<Json<Value>> {
    require_admin(&caller)?;
    let body = json_body(&body)?;
    let mut g = existing_group(&m, &name)?;
    apply_group_fields(&mut g, &body)?;
    m.store.put_resource_group(&g)?;
    m.wake_scheduler.notify_one();
    let used = agent_usage(&m)?;
    Ok(Json(group_json(&m, &g, &used)))
}

/// `DELETE /admin/resource-groups/{name}`: only a group without agents and live sessions.
pub async fn delete_group(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
    require_admin(&caller)?;
    existing_group(&m, &name)?;
    if m.agents().iter().any(|a| a.info().scaling_group == name) {
        return Err(Problem::conflict(
            "resource-group-in-use",
            "The resource group has agents.",
            format!("resource group {name:?} still has agents; move them first"),
        )
        .into());
    }
    let live: Vec<S> = S::ALL.into_iter().filter(|s| !s.is_terminal()).collect();
    if m.store
        .sessions_in(&live)?
        .iter()
        .any(|r| r.scaling_group == name)
    {
        return Err(Problem::conflict(
            "resource-group-in-use",
            "The resource group has sessions.",
            format!("resource group {name:?} still has live sessions"),
        )
        .into());
    }
    m.store.delete_resource_group(&name)?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /admin/resource-groups/{name}/access`: `{"access_key": AK, "allow": bool}` or
/// `{"project": NAME, "allow": bool}` (every member of the project).
pub async fn group_access(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<Json<Value>> {
    require_admin(&caller)?;
    let body = json_body(&body)?;
    existing_group(&m, &name)?;
    let allow = body.get("allow").and_then(Value::as_bool).unwrap_or(true);
    if let Some(project) = body.get("project").and_then(Value::as_str) {
        existing_project(&m, project)?;
        m.store.set_group_project_access(&name, project, allow)?;
        return Ok(Json(
            json!({"resource_group": name, "project": project, "allowed": allow}),
        ));
    }
    let ak = body
        .get("access_key")
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::invalid("give the access_key or the project to allow or deny"))?;
    if m.store.keypair(ak)?.is_none() {
        return Err(Problem::not_found("keypair", format!("no keypair {ak:?}")).into());
    }
    m.store.set_group_access(&name, ak, allow)?;
    Ok(Json(
        json!({"resource_group": name, "access_key": ak, "allowed": allow}),
    ))
}

/// `GET /projects`: the caller's projects (administrators: every project).
pub async fn list_projects(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
) -> ApiResult<Json<Value>> {
    let me = m
        .store
        .keypair(&caller.access_key)?
        .map(|k| k.email)
        .unwrap_or_default();
    let items: Vec<Value> = m
        .store
        .projects()?
        .into_iter()
        .filter(|(_, _, members)| caller.is_admin || members.contains(&me))
        .map(|(name, description, members)| {
            json!({"name": name, "description": description, "members": members})
        })
        .collect();
    Ok(Json(json!({ "projects": items })))
}

/// `POST /admin/projects`: `{"name", "description"}`.
pub async fn create_project(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: axum::body::Bytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let (body, name) = admin_named_body(&caller, &body, "project")?;
    let description = body
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !m.store.create_project(&name, description)? {
        return Err(Problem::conflict(
            "project-exists",
            "The project exists.",
            format!("project {name:?} already exists"),
        )
        .into());
    }
    Ok((
        StatusCode::CREATED,
        Json(json!({"name": name, "description": description})),
    ))
}

pub async fn delete_project(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
    require_admin(&caller)?;
    if name == "default" {
        return Err(Problem::invalid("the default project cannot be deleted").into());
    }
    let folders = m.store.project_vfolder_count(&name)?;
    if folders > 0 {
        return Err(Problem::conflict(
            "project-has-folders",
            "The project owns data folders.",
            format!("project {name:?} owns {folders} data folder(s); delete them first"),
        )
        .into());
    }
    if !m.store.delete_project(&name)? {
        return Err(Problem::not_found("project", format!("no project {name:?}")).into());
    }
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /admin/projects/{name}/members`: `{"email": E, "member": bool}`.
pub async fn project_member(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<Json<Value>> {
    require_admin(&caller)?;
    let body = json_body(&body)?;
    existing_project(&m, &name)?;
    let email = body
        .get("email")
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::invalid("give the member's email"))?;
    let kp = m
        .store
        .keypair_by_email(email)?
        .ok_or_else(|| Problem::not_found("user", format!("no user with email {email:?}")))?;
    let member = body.get("member").and_then(Value::as_bool).unwrap_or(true);
    m.store.set_project_member(&name, &kp.user_id, member)?;
    Ok(Json(
        json!({"project": name, "email": email, "member": member}),
    ))
}

fn preset_json(p: &PresetRow) -> Value {
    json!({
        "name": p.name,
        "resource_slots": p.slots.to_wire(),
        "shared_memory": p.shmem.map(|s| s.to_string()),
    })
}

/// `GET /resource/presets`.
pub async fn list_presets(State(m): State<Arc<Manager>>) -> ApiResult<Json<Value>> {
    let items: Vec<Value> = m.store.presets()?.iter().map(preset_json).collect();
    Ok(Json(json!({ "presets": items })))
}

/// `POST /admin/resource-presets`: creates or replaces a preset.
pub async fn put_preset(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: axum::body::Bytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let (body, name) = admin_named_body(&caller, &body, "preset")?;
    let name = name.as_str();
    let slots = parse_slot_map(
        body.get("resource_slots")
            .and_then(Value::as_object)
            .ok_or_else(|| {
                Problem::invalid("give resource_slots, e.g. {\"cpu\": \"2\", \"mem\": \"4g\"}")
            })?,
    )?;
    if slots.cpu_milli == 0 || slots.mem == 0 {
        return Err(Problem::invalid("a preset needs both cpu and mem").into());
    }
    let shmem = match body.get("shared_memory") {
        None | Some(Value::Null) => None,
        Some(v) => {
            Some(parse_mem("shared_memory", v).map_err(|e| Problem::invalid(e.to_string()))?)
        }
    };
    if shmem.is_some_and(|s| s > slots.mem) {
        return Err(Problem::invalid("shared_memory cannot be larger than mem").into());
    }
    let p = PresetRow {
        name: name.to_string(),
        slots,
        shmem,
    };
    m.store.put_preset(&p)?;
    Ok((StatusCode::CREATED, Json(preset_json(&p))))
}

pub async fn delete_preset(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
    require_admin(&caller)?;
    if !m.store.delete_preset(&name)? {
        return Err(Problem::not_found("resource-preset", format!("no preset {name:?}")).into());
    }
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /resource/check-presets`: which presets fit right now for the caller, in a group.
pub async fn check_presets(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: axum::body::Bytes,
) -> ApiResult<Json<Value>> {
    let body = json_body(&body)?;
    let groups = m.store.groups_for(&caller.access_key)?;
    let group = match body.get("scaling_group").and_then(Value::as_str) {
        Some(g) => groups
            .iter()
            .find(|x| x.name == g)
            .ok_or_else(|| Problem::invalid(format!("resource group {g:?} is not open to you")))?,
        None => groups
            .iter()
            .find(|x| x.name == "default")
            .or(groups.first())
            .ok_or_else(|| Problem::invalid("no resource group is open to you"))?,
    };
    let occupancy = Occupancy::read(&m)?;
    let used = &occupancy.by_agent;
    let frees: Vec<ResourceSlots> = m
        .agents()
        .iter()
        .filter(|a| a.info().scaling_group == group.name && a.is_alive())
        .map(|a| {
            a.info()
                .capacity
                .checked_sub(&used.get(&a.id).cloned().unwrap_or_default())
        })
        .collect();
    let group_remaining = frees.iter().fold(ResourceSlots::default(), |t, f| t.add(f));
    let policy = m.store.policy_of(&caller.access_key)?;
    let using = occupancy.of_owner(&caller.access_key);
    let limits = policy.total_slots.clone();
    let remaining = limits.as_ref().map(|l| {
        let mut r = l.checked_sub(&using);
        // A zero in the limit means "not limited".
        if l.cpu_milli == 0 {
            r.cpu_milli = u64::MAX;
        }
        if l.mem == 0 {
            r.mem = u64::MAX;
        }
        r
    });
    let presets: Vec<Value> = m
        .store
        .presets()?
        .iter()
        .map(|p| {
            let fits_agent = frees.iter().any(|f| p.slots.fits_in(f));
            let fits_quota = remaining.as_ref().is_none_or(|r| p.slots.fits_in(r));
            let mut v = preset_json(p);
            v["allocatable"] = json!(fits_agent && fits_quota);
            v
        })
        .collect();
    let wire_or_inf = |s: Option<&ResourceSlots>| match s {
        Some(s) => {
            let mut w = s.to_wire();
            if let Some(o) = w.as_object_mut() {
                for (_, v) in o.iter_mut() {
                    if v.as_str().is_some_and(|x| x.len() > 15) {
                        *v = json!("Infinity");
                    }
                }
            }
            w
        }
        None => json!({"cpu": "Infinity", "mem": "Infinity"}),
    };
    Ok(Json(json!({
        "presets": presets,
        "scaling_group": group.name,
        "keypair_limits": wire_or_inf(limits.as_ref()),
        "keypair_using": using.to_wire(),
        "keypair_remaining": wire_or_inf(remaining.as_ref()),
        "scaling_group_remaining": group_remaining.to_wire(),
    })))
}

fn policy_json(p: &PolicyRow) -> Value {
    json!({
        "name": p.name,
        "max_concurrent_sessions": p.max_concurrent_sessions,
        "max_pending_sessions": p.max_pending_sessions,
        "total_resource_slots": p.total_slots.as_ref().map(ResourceSlots::to_wire),
        "max_session_lifetime": p.max_session_lifetime,
        "idle_timeout": p.idle_timeout,
    })
}

pub async fn list_policies(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
) -> ApiResult<Json<Value>> {
    require_admin(&caller)?;
    let assigned = m.store.keypair_policies()?;
    let items: Vec<Value> = m
        .store
        .policies()?
        .iter()
        .map(|p| {
            let mut v = policy_json(p);
            v["keypairs"] = assigned
                .iter()
                .filter(|(_, n)| *n == p.name)
                .map(|(ak, _)| json!(ak))
                .collect();
            v
        })
        .collect();
    Ok(Json(json!({ "resource_policies": items })))
}

/// `POST /admin/resource-policies`: creates or replaces a policy.
pub async fn put_policy(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: axum::body::Bytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let (body, name) = admin_named_body(&caller, &body, "resource policy")?;
    let name = name.as_str();
    let count = |key: &str| -> Result<Option<i64>, Problem> {
        match body.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_i64()
                .filter(|n| *n >= 0)
                .map(Some)
                .ok_or_else(|| Problem::invalid(format!("{key} must be a whole number ≥ 0"))),
        }
    };
    let total_slots = match body.get("total_resource_slots") {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => Some(parse_slot_map(o)?),
        Some(_) => {
            return Err(Problem::invalid(
                "total_resource_slots must be an object like {\"cpu\": \"8\", \"mem\": \"32g\"}",
            )
            .into());
        }
    };
    let p = PolicyRow {
        name: name.to_string(),
        max_concurrent_sessions: count("max_concurrent_sessions")?,
        max_pending_sessions: count("max_pending_sessions")?,
        total_slots,
        max_session_lifetime: count("max_session_lifetime")?.unwrap_or(0),
        idle_timeout: count("idle_timeout")?.unwrap_or(0),
    };
    m.store.put_policy(&p)?;
    m.wake_scheduler.notify_one();
    Ok((StatusCode::CREATED, Json(policy_json(&p))))
}

pub async fn delete_policy(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
    require_admin(&caller)?;
    if name == "default" {
        return Err(Problem::invalid("the default policy cannot be deleted").into());
    }
    if !m.store.delete_policy(&name)? {
        return Err(Problem::conflict(
            "resource-policy-in-use",
            "The policy cannot be deleted.",
            format!("policy {name:?} does not exist or keypairs still use it"),
        )
        .into());
    }
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /admin/keypairs/{access_key}/resource-policy`: `{"name": POLICY}`.
pub async fn assign_policy(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(ak): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<Json<Value>> {
    require_admin(&caller)?;
    let body = json_body(&body)?;
    let name = body
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::invalid("give the policy name"))?;
    if !m.store.policies()?.iter().any(|p| p.name == name) {
        return Err(
            Problem::not_found("resource-policy", format!("no resource policy {name:?}")).into(),
        );
    }
    if !m.store.set_keypair_policy(&ak, name)? {
        return Err(Problem::not_found("keypair", format!("no keypair {ak:?}")).into());
    }
    m.wake_scheduler.notify_one();
    Ok(Json(json!({"access_key": ak, "resource_policy": name})))
}

/// `GET /agents`: the agents of the groups open to the caller, with their free slots
/// (the launcher's "Select Agent").
pub async fn list_agents(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
) -> ApiResult<Json<Value>> {
    let groups: Vec<String> = m
        .store
        .groups_for(&caller.access_key)?
        .into_iter()
        .map(|g| g.name)
        .collect();
    let used = agent_usage(&m)?;
    let items: Vec<Value> = m
        .agents()
        .iter()
        .filter(|a| caller.is_admin || groups.contains(&a.info().scaling_group))
        .map(|a| {
            let info = a.info();
            let u = used.get(&a.id).cloned().unwrap_or_default();
            json!({
                "id": a.id,
                "scaling_group": info.scaling_group,
                "alive": a.is_alive(),
                "capacity": info.capacity.to_wire(),
                "used": u.to_wire(),
                "free": info.capacity.checked_sub(&u).to_wire(),
            })
        })
        .collect();
    Ok(Json(json!({ "agents": items })))
}

/// `GET /admin/users/{email}` (administrators): the user's access key, for "assign a session
/// owner" in the launcher.
pub async fn user_by_email(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(email): Path<String>,
) -> ApiResult<Json<Value>> {
    require_admin(&caller)?;
    let kp = m
        .store
        .keypair_by_email(&email)?
        .ok_or_else(|| Problem::not_found("user", format!("no user with email {email:?}")))?;
    Ok(Json(
        json!({"email": kp.email, "access_key": kp.access_key, "is_admin": kp.is_admin}),
    ))
}

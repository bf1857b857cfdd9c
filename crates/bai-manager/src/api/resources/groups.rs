//! Resource groups: the listing open to users and the administrators' management.

use super::{agent_usage, existing_group, existing_project, json_body, named_body, require_admin};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use bai_core::Problem;
use bai_core::resources::ResourceSlots;
use bai_core::status::SessionStatus as S;
use bai_sched::{Sequencer, Strategy};
use bai_store::ResourceGroupRow;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;

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
    body: axum::body::Bytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let (body, name) = named_body(&body, "resource group")?;
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
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<Json<Value>> {
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
    if m.agents().iter().any(|a| a.info().scaling_group == name) {
        return Ok(Some(format!(
            "resource group {name:?} still has agents; move them first"
        )));
    }
    let live: Vec<S> = S::ALL.into_iter().filter(|s| !s.is_terminal()).collect();
    if m.store
        .sessions_in(&live)?
        .iter()
        .any(|r| r.scaling_group == name)
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
) -> ApiResult<Json<Value>> {
    let body = json_body(&body)?;
    existing_group(&m, &name)?;
    let allow = super::flag(&body, "allow", true)?;
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

//! Keypair resource policies (administrators): list, create or replace, delete, assign.

use super::{json_body, named_body, parse_slot_map};
use crate::error::ApiResult;
use crate::state::Manager;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use bai_core::Problem;
use bai_core::resources::ResourceSlots;
use bai_store::PolicyRow;
use serde_json::{Value, json};
use std::sync::Arc;

fn policy_json(p: &PolicyRow) -> Value {
    json!({
        "name": p.name,
        "max_concurrent_sessions": p.max_concurrent_sessions,
        "max_pending_sessions": p.max_pending_sessions,
        "total_resource_slots": p.total_slots.as_ref().map(ResourceSlots::to_wire),
        "max_session_lifetime": p.max_session_lifetime,
        "idle_timeout": p.idle_timeout,
        "max_containers_per_session": p.max_containers_per_session,
    })
}

pub async fn list_policies(State(m): State<Arc<Manager>>) -> ApiResult<Json<Value>> {
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
    body: axum::body::Bytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let (body, name) = named_body(&body, "resource policy")?;
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
        Some(Value::Object(o)) => Some(parse_slot_map(o, &m.accel_slots())?),
        Some(_) => {
            return Err(Problem::invalid(
                "total_resource_slots must be an object like {\"cpu\": \"8\", \"mem\": \"32g\"}",
            )
            .into());
        }
    };
    // Backend.AI's extra fields (folder hosts, SFTP, unspecified slots) stay as they were.
    let kept = m
        .store
        .policies()?
        .into_iter()
        .find(|p| p.name == name)
        .unwrap_or_default();
    let p = PolicyRow {
        name: name.to_string(),
        max_concurrent_sessions: count("max_concurrent_sessions")?,
        max_pending_sessions: count("max_pending_sessions")?,
        total_slots,
        max_session_lifetime: count("max_session_lifetime")?.unwrap_or(0),
        idle_timeout: count("idle_timeout")?.unwrap_or(0),
        max_containers_per_session: count("max_containers_per_session")?,
        allowed_vfolder_hosts: kept.allowed_vfolder_hosts,
        max_concurrent_sftp_sessions: kept.max_concurrent_sftp_sessions,
        default_for_unspecified: kept.default_for_unspecified,
        created_at: kept.created_at,
    };
    if p.max_containers_per_session == Some(0) {
        return Err(Problem::invalid(
            "max_containers_per_session must be at least 1 (leave it out for no limit)",
        )
        .into());
    }
    m.store.put_policy(&p)?;
    m.wake_scheduler.notify_one();
    Ok((StatusCode::CREATED, Json(policy_json(&p))))
}

pub async fn delete_policy(
    State(m): State<Arc<Manager>>,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
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
    Path(ak): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<Json<Value>> {
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

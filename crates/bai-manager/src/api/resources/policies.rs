//! Keypair resource policies (administrators): list, create or replace, delete, assign.

use super::{check_name, slots_of, typed_body};
use crate::error::ApiResult;
use crate::state::Manager;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use bai_api::resources::{
    AssignedPolicy, NewResourcePolicy, PolicyAssignment, PolicyChoice, ResourcePolicy,
    ResourcePolicyList, ResourceSlots as WireSlots,
};
use bai_core::Problem;
use bai_store::PolicyRow;
use std::sync::Arc;

/// A count as stored (never negative) as the wire's whole number.
fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// A count from the wire as stored; past what the store holds is refused.
fn stored(key: &str, n: Option<u64>) -> Result<Option<i64>, Problem> {
    n.map(|n| i64::try_from(n).map_err(|_| Problem::invalid(format!("{key} is too large: {n}"))))
        .transpose()
}

fn policy_view(p: &PolicyRow) -> ResourcePolicy {
    ResourcePolicy {
        name: p.name.clone(),
        max_concurrent_sessions: p.max_concurrent_sessions.map(count),
        max_pending_sessions: p.max_pending_sessions.map(count),
        total_resource_slots: p.total_slots.as_ref().map(WireSlots::from),
        max_session_lifetime: count(p.max_session_lifetime),
        idle_timeout: count(p.idle_timeout),
        max_containers_per_session: p.max_containers_per_session.map(count),
    }
}

pub async fn list_policies(State(m): State<Arc<Manager>>) -> ApiResult<Json<ResourcePolicyList>> {
    let assigned = m.store.keypair_policies()?;
    let resource_policies = m
        .store
        .policies()?
        .iter()
        .map(|p| AssignedPolicy {
            policy: policy_view(p),
            keypairs: assigned
                .iter()
                .filter(|(_, n)| *n == p.name)
                .map(|(ak, _)| ak.clone())
                .collect(),
        })
        .collect();
    Ok(Json(ResourcePolicyList { resource_policies }))
}

/// `POST /admin/resource-policies`: creates or replaces a policy.
pub async fn put_policy(
    State(m): State<Arc<Manager>>,
    body: axum::body::Bytes,
) -> ApiResult<(StatusCode, Json<ResourcePolicy>)> {
    let req: NewResourcePolicy = typed_body(&body)?;
    check_name("resource policy", &req.name)?;
    let total_slots = req
        .total_resource_slots
        .as_ref()
        .map(|s| slots_of(s, &m.agents.accel_slots()))
        .transpose()?;
    // Backend.AI's extra fields (folder hosts, SFTP, unspecified slots) stay as they were.
    let kept = m
        .store
        .policies()?
        .into_iter()
        .find(|p| p.name == req.name)
        // A new policy allows one SFTP session, as the column's default and GraphQL's do.
        .unwrap_or_else(|| PolicyRow {
            max_concurrent_sftp_sessions: 1,
            ..PolicyRow::default()
        });
    let p = PolicyRow {
        max_concurrent_sessions: stored("max_concurrent_sessions", req.max_concurrent_sessions)?,
        max_pending_sessions: stored("max_pending_sessions", req.max_pending_sessions)?,
        total_slots,
        max_session_lifetime: stored("max_session_lifetime", req.max_session_lifetime)?
            .unwrap_or(0),
        idle_timeout: stored("idle_timeout", req.idle_timeout)?.unwrap_or(0),
        max_containers_per_session: stored(
            "max_containers_per_session",
            req.max_containers_per_session,
        )?,
        name: req.name,
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
    m.bus.wake_scheduler();
    Ok((StatusCode::CREATED, Json(policy_view(&p))))
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
) -> ApiResult<Json<PolicyAssignment>> {
    let PolicyChoice { name } = typed_body(&body)?;
    let name = name.as_str();
    if !m.store.policies()?.iter().any(|p| p.name == name) {
        return Err(
            Problem::not_found("resource-policy", format!("no resource policy {name:?}")).into(),
        );
    }
    if !m.store.set_keypair_policy(&ak, name)? {
        return Err(Problem::not_found("keypair", format!("no keypair {ak:?}")).into());
    }
    m.bus.wake_scheduler();
    Ok(Json(PolicyAssignment {
        access_key: ak,
        resource_policy: name.to_string(),
    }))
}

//! Resource groups, presets, keypair resource policies, projects and agents: what users may
//! list and administrators manage.
//!
//! Every `/admin/…` route of this module sits behind [`admin_only`], one layer that refuses
//! callers without an administrator's keypair; its handlers do not check the role again.

pub(super) mod agent_admin;
pub(super) mod agents;
pub(super) mod fairshare;
pub(super) mod groups;
pub(super) mod policies;
pub(super) mod presets;
pub(super) mod projects;
pub(super) mod users;

use super::typed_body;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::state::Manager;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bai_control::scheduler::snapshot::Occupancy;
use bai_core::Problem;
use bai_core::resources::{ResourceSlots, amount_text, parse_cpu, parse_mem};
use bai_store::ResourceGroupRow;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The refusal of a caller who is not an administrator.
fn require_admin(c: &Caller) -> Result<(), Problem> {
    if c.is_admin {
        Ok(())
    } else {
        Err(Problem::forbidden("this needs an administrator's keypair"))
    }
}

/// Route layer of the administrators' routes: lets the request through only for a caller
/// (set by `authenticate`, which runs first) with an administrator's keypair.
pub(super) async fn admin_only(req: Request, next: Next) -> Response {
    let verdict = match req.extensions().get::<Caller>() {
        Some(caller) => require_admin(caller),
        None => Err(Problem::unauthorized("the request is not signed")),
    };
    match verdict {
        Ok(()) => next.run(req).await,
        Err(p) => {
            tracing::info!(path = %req.uri().path(), "refused a non-administrator");
            ApiError(p).into_response()
        }
    }
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

/// The slots a client gave, as [`parse_slot_map`] reads them.
pub fn slots_of(
    spec: &bai_api::resources::ResourceSlotsSpec,
    accel: &[bai_core::accel::AccelSlot],
) -> Result<ResourceSlots, Problem> {
    match serde_json::to_value(spec) {
        Ok(Value::Object(map)) => parse_slot_map(&map, accel),
        _ => Err(Problem::invalid(
            "resource slots must be an object like {\"cpu\": \"2\", \"mem\": \"4g\"}",
        )),
    }
}

/// `{"cpu": "2", "mem": "4g", "cuda.shares": "0.5"}` → slots; missing keys are zero. `gpu`
/// and `fgpu` name the cluster's CUDA slot (`accel`), as in a create request.
pub fn parse_slot_map(
    m: &Map<String, Value>,
    accel: &[bai_core::accel::AccelSlot],
) -> Result<ResourceSlots, Problem> {
    let mut s = ResourceSlots::default();
    for (k, v) in m {
        match k.as_str() {
            "cpu" => {
                s.cpu_milli =
                    parse_cpu(k, &amount_text(v)).map_err(|e| Problem::invalid(e.to_string()))?
            }
            "mem" => {
                s.mem =
                    parse_mem(k, &amount_text(v)).map_err(|e| Problem::invalid(e.to_string()))?
            }
            other => {
                // A slot the cluster offers (or an alias of one), or any dotted slot name:
                // a policy may limit a slot no agent offers yet.
                let name = bai_core::accel::resolve(other, accel)
                    .map(|a| a.name.clone())
                    .or_else(|| other.contains('.').then(|| other.to_string()))
                    .ok_or_else(|| Problem::invalid(format!(
                        "unknown resource slot {other:?}: use cpu, mem or an accelerator slot like cuda.shares (gpu and fgpu name the cluster's own)"
                    )))?;
                s.accel.insert(
                    name,
                    parse_cpu(k, &amount_text(v)).map_err(|e| Problem::invalid(e.to_string()))?,
                );
            }
        }
    }
    Ok(s)
}

/// Slots held on each agent.
fn agent_usage(m: &Manager) -> ApiResult<HashMap<String, ResourceSlots>> {
    Ok(Occupancy::read(&m.store)?.by_agent)
}

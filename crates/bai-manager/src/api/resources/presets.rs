//! Resource presets: the listing, which presets fit now, and the administrators' management.

use super::{json_body, named_body, parse_slot_map};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::scheduler::snapshot::Occupancy;
use crate::state::Manager;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use bai_core::Problem;
use bai_core::resources::{ResourceSlots, parse_mem};
use bai_store::PresetRow;
use serde_json::{Value, json};
use std::sync::Arc;

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
    body: axum::body::Bytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let (body, name) = named_body(&body, "preset")?;
    let name = name.as_str();
    let slots = parse_slot_map(
        body.get("resource_slots")
            .and_then(Value::as_object)
            .ok_or_else(|| {
                Problem::invalid("give resource_slots, e.g. {\"cpu\": \"2\", \"mem\": \"4g\"}")
            })?,
        &m.accel_slots(),
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
    if shmem.is_some_and(|s| s >= slots.mem) {
        return Err(Problem::invalid("mem must be larger than the shared_memory it holds").into());
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
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
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

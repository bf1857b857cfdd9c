//! Agents as Backend.AI's admin GraphQL gives them, for administrators: `agent_list` (the
//! official client's `admin agent list`: paged, by `status` and `scaling_group`), `agents`
//! (the older unpaged list) and `agent` (`admin agent info ID`).
//!
//! An agent is what `GET /agents` shows, in Backend.AI's fields: `available_slots` its
//! capacity and `occupied_slots` what its sessions hold (Backend.AI's JSON texts),
//! `region` and `architecture` as it reported them, `schedulable` false while it is drained
//! or offers nothing (its Kubernetes node cordoned, say), `first_contact` and, for an agent
//! not alive, `lost_at` (its last heartbeat). bai reads no node-wide utilization, so
//! `live_stat`, `cpu_cur_pct` and `mem_cur_bytes` are null (a session's readings are in
//! `bai session stats`); `hardware_metadata` lists each accelerator plugin's devices.

use super::{Args, db, err};
use bai_api::resources::Agent;
use bai_gql::{FieldError, OperationKind};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};

pub fn handles(field: &str) -> bool {
    matches!(field, "agent_list" | "agents" | "agent")
}

pub(super) fn resolve(a: &Args<'_>, kind: OperationKind, field: &str) -> Result<Value, FieldError> {
    if kind != OperationKind::Query {
        return Err(err(format!("{field} is a query")));
    }
    a.admin_only("list agents")?;
    let views =
        crate::api::resources::agents::agent_views(a.m, a.caller).map_err(|e| err(e.0.msg))?;
    let first: HashMap<String, String> =
        a.m.store
            .agent_rows()
            .map_err(db)?
            .into_iter()
            .map(|r| (r.id, r.first_seen))
            .collect();
    let reported: HashMap<String, (String, String)> =
        a.m.agents
            .all()
            .iter()
            .map(|h| {
                let i = h.info();
                (h.id.clone(), (i.region.clone(), i.architecture.clone()))
            })
            .collect();
    let node = |v: &Agent| {
        let (region, arch) = reported.get(&v.id).cloned().unwrap_or_default();
        agent_node(v, &region, &arch, first.get(&v.id).map(String::as_str))
    };
    if field == "agent" {
        let id = a.text("agent_id")?;
        return Ok(views
            .iter()
            .find(|v| v.id == id)
            .map(node)
            .unwrap_or(Value::Null));
    }
    refuse_expressions(a)?;
    let status = a.opt_text("status").map(str::to_ascii_uppercase);
    let group = a.opt_text("scaling_group");
    let chosen: Vec<&Agent> = views
        .iter()
        .filter(|v| status.as_deref().is_none_or(|s| v.status == s))
        .filter(|v| group.is_none_or(|g| v.scaling_group == g))
        .collect();
    if field == "agents" {
        return Ok(Value::Array(chosen.into_iter().map(node).collect()));
    }
    let (limit, offset) = a.limit_offset();
    let total = chosen.len();
    let items: Vec<Value> = chosen
        .into_iter()
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(usize::try_from(limit).unwrap_or(0))
        .map(node)
        .collect();
    Ok(json!({"items": items, "total_count": total}))
}

/// Backend.AI's filter and order expressions are not read for agents: refused, naming what
/// is (a list that ignored them would look filtered and not be).
fn refuse_expressions(a: &Args<'_>) -> Result<(), FieldError> {
    for key in ["filter", "order"] {
        if let Some(e) = a.opt_text(key).filter(|e| !e.trim().is_empty()) {
            return Err(err(format!(
                "{key} {e:?} is not supported for agents: list them by status and scaling_group"
            )));
        }
    }
    Ok(())
}

/// One agent in Backend.AI's fields.
fn agent_node(v: &Agent, region: &str, arch: &str, first_contact: Option<&str>) -> Value {
    let mut devices: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    for d in &v.devices {
        devices.entry(d.plugin.as_str()).or_default().push(json!({
            "id": d.id,
            "model": d.model,
            "memory": d.memory,
            "slot": d.slot,
            "capacity": d.capacity,
        }));
    }
    let hardware: Map<String, Value> = devices
        .iter()
        .map(|(plugin, list)| ((*plugin).to_string(), json!({"devices": list})))
        .collect();
    let plugins: Map<String, Value> = devices
        .keys()
        .map(|plugin| ((*plugin).to_string(), json!({})))
        .collect();
    json!({
        "id": v.id,
        "status": v.status,
        "status_changed": Value::Null,
        "region": region,
        "architecture": arch,
        "scaling_group": v.scaling_group,
        "schedulable": !v.drained && v.withheld.is_none(),
        "available_slots": json_text(&v.capacity),
        "occupied_slots": json_text(&v.used),
        "addr": v.address,
        "first_contact": first_contact,
        "lost_at": (!v.alive).then_some(v.last_heartbeat.as_str()),
        "live_stat": Value::Null,
        "version": v.version,
        "compute_plugins": Value::Object(plugins).to_string(),
        "hardware_metadata": Value::Object(hardware).to_string(),
        "local_config": Value::Null,
        "cpu_cur_pct": Value::Null,
        "mem_cur_bytes": Value::Null,
    })
}

/// Slots as the JSON text Backend.AI's `JSONString` fields carry (`{"cpu": "2", …}`).
fn json_text(slots: &bai_api::resources::ResourceSlots) -> String {
    serde_json::to_string(slots).unwrap_or_else(|_| "{}".into())
}

//! Agents open to the caller, with what they hold and have free.

use super::agent_usage;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::extract::State;
use axum::{Extension, Json};
use bai_core::accel::DeviceInfo;
use bai_core::resources::format_cpu;
use serde_json::{Value, json};
use std::sync::Arc;

/// `GET /agents`: the agents of the groups open to the caller, with their free slots
/// (the launcher's "Select Agent") and their accelerator devices.
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
                "status": a.status().as_str(),
                "drained": a.is_drained(),
                "remote": a.remote.is_some(),
                "address": a.remote.as_ref().map(|r| r.address.read().unwrap_or_else(|p| p.into_inner()).clone()).unwrap_or_default(),
                "version": a.remote.as_ref().map(|r| r.version.read().unwrap_or_else(|p| p.into_inner()).clone()).filter(|v| !v.is_empty()).unwrap_or_else(|| info.version.clone()),
                "last_heartbeat": last_heartbeat(a),
                "capacity": info.capacity.to_wire(),
                "used": u.to_wire(),
                "free": info.capacity.checked_sub(&u).to_wire(),
                "devices": info.devices.iter().map(device_wire).collect::<Vec<_>>(),
            })
        })
        .collect();
    Ok(Json(json!({ "agents": items })))
}

/// One device as `GET /agents` prints it: amounts as decimal strings like the slots.
fn device_wire(d: &DeviceInfo) -> Value {
    json!({
        "slot": d.slot,
        "id": d.id,
        "plugin": d.plugin,
        "model": d.model,
        "memory": d.memory,
        "numa_node": d.numa_node,
        "capacity": format_cpu(d.capacity_milli),
        "quantum": format_cpu(d.quantum_milli),
    })
}

/// When the agent was last heard from: a remote agent's last heartbeat; an agent inside the
/// manager's process is heard from now.
fn last_heartbeat(a: &crate::state::AgentHandle) -> String {
    let ms = a
        .remote
        .as_ref()
        .map(|r| r.last_heartbeat_ms())
        .unwrap_or_else(bai_core::stats::now_ms);
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

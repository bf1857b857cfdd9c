//! Agents open to the caller, with what they hold and have free.

use super::agent_usage;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::extract::State;
use axum::{Extension, Json};
use bai_api::resources::{
    Agent, AgentDevice, AgentList, ResourceSlots as WireSlots, agents::AgentWarmPool,
};
use bai_core::accel::DeviceInfo;
use bai_core::resources::format_cpu;
use bai_ground::agents::AgentHandle;
use std::sync::Arc;

/// `GET /agents`: the agents of the groups open to the caller, with their free slots
/// (the launcher's "Select Agent") and their accelerator devices.
pub async fn list_agents(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
) -> ApiResult<Json<AgentList>> {
    Ok(Json(AgentList {
        agents: agent_views(&m, &caller)?,
    }))
}

/// The agents of the groups open to `caller` (administrators: every agent) as `GET /agents`
/// shows them; Backend.AI's GraphQL `agent_list` shows the same (`api/gql/admin/agents.rs`).
pub(crate) fn agent_views(m: &Manager, caller: &Caller) -> ApiResult<Vec<Agent>> {
    let groups: Vec<String> = m
        .store
        .groups_for(&caller.access_key)?
        .into_iter()
        .map(|g| g.name)
        .collect();
    let used = agent_usage(m)?;
    let agents = m
        .agents
        .all()
        .iter()
        .filter(|a| caller.is_admin || groups.contains(&a.info().scaling_group))
        .map(|a| {
            let info = a.info();
            let u = used.get(&a.id).cloned().unwrap_or_default();
            let read =
                |l: &std::sync::RwLock<String>| l.read().unwrap_or_else(|p| p.into_inner()).clone();
            Agent {
                id: a.id.clone(),
                scaling_group: info.scaling_group.clone(),
                alive: a.is_alive(),
                status: a.status().as_str().to_string(),
                drained: a.is_drained(),
                remote: a.remote.is_some(),
                address: a
                    .remote
                    .as_ref()
                    .map(|r| read(&r.address))
                    .unwrap_or_default(),
                version: a
                    .remote
                    .as_ref()
                    .map(|r| read(&r.version))
                    .filter(|v| !v.is_empty())
                    .unwrap_or_else(|| info.version.clone()),
                last_heartbeat: last_heartbeat(a),
                capacity: WireSlots::from(&info.capacity),
                used: WireSlots::from(&u),
                free: WireSlots::from(&info.capacity.checked_sub(&u)),
                devices: info.devices.iter().map(device_view).collect(),
                egress_error: info.egress_error.clone(),
                withheld: info.withheld.clone(),
                kernel_most: info
                    .kernel_most
                    .iter()
                    .map(|(slot, m)| bai_api::resources::AgentKernelMost {
                        slot: slot.clone(),
                        most: bai_core::resources::format_cpu(m.amount),
                        why: m.why.clone(),
                    })
                    .collect(),
                warm_pool: pools_of(m, a),
            }
        })
        .collect();
    Ok(agents)
}

/// An agent's warm pools as the manager last heard of them; the pools themselves only while
/// the agent is alive (a lost agent's last report says nothing of what it keeps now).
fn pools_of(m: &Manager, a: &AgentHandle) -> AgentWarmPool {
    let mut w = AgentWarmPool::from(&m.pools.report(&a.id));
    if !a.is_alive() {
        w.pools.clear();
    }
    w
}

/// One device as `GET /agents` prints it: amounts as decimal strings like the slots.
fn device_view(d: &DeviceInfo) -> AgentDevice {
    AgentDevice {
        slot: d.slot.clone(),
        id: d.id.clone(),
        plugin: d.plugin.clone(),
        model: d.model.clone(),
        memory: d.memory,
        numa_node: d.numa_node,
        capacity: format_cpu(d.capacity_milli),
        quantum: format_cpu(d.quantum_milli),
    }
}

/// When the agent was last heard from: a remote agent's last heartbeat; an agent inside the
/// manager's process is heard from now.
fn last_heartbeat(a: &bai_ground::agents::AgentHandle) -> String {
    let ms = a
        .remote
        .as_ref()
        .map(|r| r.last_heartbeat_ms())
        .unwrap_or_else(bai_core::stats::now_ms);
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

//! Agents open to the caller, with what they hold and have free.

use super::slots::ResourceSlots;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An agent as a user sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Agent {
    /// The agent's id.
    pub id: String,
    /// The resource group it serves.
    pub scaling_group: String,
    /// Whether the manager reaches it now (sessions are placed only on alive agents).
    pub alive: bool,
    /// `ALIVE`, `DISCONNECTED` (link down, nothing new placed there), `LOST` (not heard
    /// from for the bound: its sessions are degraded) or `GONE` (away so long that its
    /// sessions ended with `agent-lost`).
    #[serde(default = "alive_status")]
    pub status: String,
    /// Drained by an administrator: no new sessions, running ones stay.
    #[serde(default)]
    pub drained: bool,
    /// Whether it runs on another machine (`baid agent`) rather than inside the manager.
    #[serde(default)]
    pub remote: bool,
    /// Where it last connected from (remote agents; shown, never trusted).
    #[serde(default)]
    pub address: String,
    /// Its bai version.
    #[serde(default)]
    pub version: String,
    /// When it was last heard from (RFC 3339).
    #[serde(default)]
    pub last_heartbeat: String,
    /// What it has in all.
    pub capacity: ResourceSlots,
    /// What its sessions hold.
    pub used: ResourceSlots,
    /// What it has free.
    pub free: ResourceSlots,
    /// Its accelerator devices (empty for an agent without any; a dummy agent's
    /// `mock.shares` capacity has no devices).
    pub devices: Vec<AgentDevice>,
    /// Why it cannot enforce egress policies (no `nft`, say); such an agent takes only
    /// sessions of groups whose policy is `open`. Absent: it enforces them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress_error: Option<String>,
    /// Why it offers nothing now although it is alive (its Kubernetes node is cordoned,
    /// NotReady or gone); nothing new is placed on it meanwhile. Absent: it offers its
    /// capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withheld: Option<String>,
    /// Slots of which it gives one kernel less than it has (a Kubernetes node whose GPUs are
    /// shared with MPS gives a kernel one slice): a kernel asking for more is never placed
    /// here. Absent: a kernel may have all it has.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel_most: Vec<AgentKernelMost>,
    /// The kernels it keeps started for the shapes people launch, and what they did.
    #[serde(default)]
    pub warm_pool: AgentWarmPool,
}

/// The most one kernel may have of a slot on an agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AgentKernelMost {
    /// The slot, e.g. `cuda.shares`.
    pub slot: String,
    /// The most, as a decimal in the slot's unit (`0.25`).
    pub most: String,
    /// Why, in words.
    pub why: String,
}

/// An agent's warm pools: kernels started ahead, taken by creates of exactly their shape.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AgentWarmPool {
    /// One per shape it keeps; none while the agent is not alive (what a lost agent last
    /// reported says nothing of what it keeps now).
    pub pools: Vec<AgentPool>,
    /// Creates that took a pool kernel, since the agent started.
    pub hits: u64,
    /// Creates of a pooled shape that found none ready (or could not bind one).
    pub misses: u64,
    /// Pool kernels made.
    pub refills: u64,
    /// Pool kernels that failed their binding (their creates went cold).
    pub bind_failures: u64,
    /// Pool kernels given up to make room for a session.
    pub evictions: u64,
}

// One shape's pool is `bai-core`'s (what the agent reports), with its schema (`AgentPool`)
// from its `schema` feature.
pub use bai_core::pool::PoolStatus as AgentPool;

impl From<&bai_core::pool::PoolReport> for AgentWarmPool {
    fn from(r: &bai_core::pool::PoolReport) -> Self {
        AgentWarmPool {
            pools: r.pools.clone(),
            hits: r.counters.hits,
            misses: r.counters.misses,
            refills: r.counters.refills,
            bind_failures: r.counters.bind_failures,
            evictions: r.counters.evictions,
        }
    }
}

fn alive_status() -> String {
    "ALIVE".into()
}

/// One accelerator device of an agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AgentDevice {
    /// The slot it is counted in: `cuda.device` (whole GPUs, shown as `GPU`) or
    /// `cuda.shares` (fractional GPUs, shown as `fGPU`), or another plugin's slot.
    pub slot: String,
    /// The device's id on its agent (`0`, `1`, …).
    pub id: String,
    /// The plugin that drives it (`cuda`, or `mock` for a fake one).
    pub plugin: String,
    /// The device's model name, e.g. `NVIDIA H100 80GB HBM3`.
    pub model: String,
    /// Device memory in bytes.
    pub memory: u64,
    /// The NUMA node it is attached to, where known.
    pub numa_node: Option<u32>,
    /// How much of the slot it gives, as a decimal string like the other slot amounts
    /// (`"1"` for one whole GPU).
    pub capacity: String,
    /// The smallest step in which the slot is handed out, as a decimal string (`"1"` for
    /// whole GPUs, usually `"0.1"` for fGPU).
    pub quantum: String,
}

/// `GET /agents`: the agents of the groups open to the caller (administrators: every
/// agent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentList {
    /// The agents.
    pub agents: Vec<Agent>,
}

/// `POST /admin/agent-tokens`: a join token for remote agents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NewAgentToken {
    /// The resource group its agents join (it must exist); `default` when not given.
    #[serde(default)]
    pub group: Option<String>,
}

/// A join token. The token itself is shown only once, in the answer that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AgentToken {
    /// The token's id (the second part of the token), for listing and revoking.
    pub id: String,
    /// The resource group its agents join.
    pub group: String,
    /// Who made it.
    pub created_by: String,
    pub created_at: String,
    /// When it was revoked (its agents were disconnected and cannot come back).
    pub revoked_at: Option<String>,
    /// The token for `baid agent --token` (only when just made).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Where agents connect, `HOST:PORT` as the manager listens (only when just made).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_listen: Option<String>,
}

/// `GET /admin/agent-tokens`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AgentTokenList {
    pub tokens: Vec<AgentToken>,
}

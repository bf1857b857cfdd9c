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
    /// What it has in all.
    pub capacity: ResourceSlots,
    /// What its sessions hold.
    pub used: ResourceSlots,
    /// What it has free.
    pub free: ResourceSlots,
    /// Its accelerator devices (empty for an agent without any; a dummy agent's
    /// `mock.shares` capacity has no devices).
    pub devices: Vec<AgentDevice>,
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

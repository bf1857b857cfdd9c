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
}

/// `GET /agents`: the agents of the groups open to the caller (administrators: every
/// agent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentList {
    /// The agents.
    pub agents: Vec<Agent>,
}

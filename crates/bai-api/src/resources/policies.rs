//! Keypair resource policies: what a keypair's sessions may hold together.

use super::slots::{ResourceSlots, ResourceSlotsSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A keypair resource policy as the server shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResourcePolicy {
    /// The policy's name.
    pub name: String,
    /// How many sessions a keypair may have running at once; `null`: no limit.
    #[schemars(required, schema_with = "crate::schema::nullable::<u64>")]
    pub max_concurrent_sessions: Option<u64>,
    /// How many sessions a keypair may have queued at once; `null`: no limit.
    #[schemars(required, schema_with = "crate::schema::nullable::<u64>")]
    pub max_pending_sessions: Option<u64>,
    /// Cap on the sum of what a keypair's sessions hold (a zero amount is not limited);
    /// `null`: no cap.
    #[schemars(required, schema_with = "crate::schema::nullable::<ResourceSlots>")]
    pub total_resource_slots: Option<ResourceSlots>,
    /// Seconds a session may live (0 = no limit).
    pub max_session_lifetime: u64,
    /// Seconds without activity before a session is reclaimed (0 = never).
    pub idle_timeout: u64,
    /// Most kernels (containers) one session may have; `null`: no limit but the server's
    /// own (64).
    #[schemars(required, schema_with = "crate::schema::nullable::<u64>")]
    pub max_containers_per_session: Option<u64>,
}

/// A policy in the listing, with the keypairs it is assigned to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AssignedPolicy {
    /// The policy.
    #[serde(flatten)]
    pub policy: ResourcePolicy,
    /// The access keys of the keypairs that use it.
    pub keypairs: Vec<String>,
}

/// `GET /admin/resource-policies`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResourcePolicyList {
    /// Every policy.
    pub resource_policies: Vec<AssignedPolicy>,
}

/// `POST /admin/resource-policies`: creates or replaces a policy. Every limit left out (or
/// `null`) is no limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NewResourcePolicy {
    /// 1 to 64 letters, digits, `-`, `_` or `.`.
    pub name: String,
    /// How many sessions a keypair may have running at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent_sessions: Option<u64>,
    /// How many sessions a keypair may have queued at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pending_sessions: Option<u64>,
    /// Cap on the sum of what a keypair's sessions hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_resource_slots: Option<ResourceSlotsSpec>,
    /// Seconds a session may live (0 = no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_session_lifetime: Option<u64>,
    /// Seconds without activity before a session is reclaimed (0 = never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout: Option<u64>,
    /// Most kernels (containers) one session may have (at least 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_containers_per_session: Option<u64>,
}

/// `POST /admin/keypairs/{access_key}/resource-policy`: the policy the keypair is to use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PolicyChoice {
    /// The policy's name.
    pub name: String,
}

/// The policy a keypair uses now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PolicyAssignment {
    /// The keypair.
    pub access_key: String,
    /// The policy's name.
    pub resource_policy: String,
}

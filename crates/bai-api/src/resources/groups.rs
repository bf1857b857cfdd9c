//! Resource groups (scaling groups): the listing, the administrators' changes, and who may
//! use a group.

use super::slots::ResourceSlots;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// In which order a group's queued sessions are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scheduler {
    /// First come, first served.
    Fifo,
    /// Last come, first served.
    Lifo,
    /// Dominant resource fairness across owners.
    Drf,
    /// Usage-decayed fair share: sessions ranked by a priority made of the owner's
    /// fair-share factor (domain → project → user), age, size and their own priority.
    Fairshare,
}

/// How a group picks the agent a session runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Selector {
    /// Spread load: the agent with the most free slots.
    #[serde(rename = "dispersed")]
    Dispersed,
    /// Pack: the agent with the fewest free slots that still fits.
    #[serde(rename = "concentrated")]
    Concentrated,
    /// Take turns over the fitting agents in id order (`roundrobin` is read as this too).
    #[serde(rename = "round-robin", alias = "roundrobin")]
    RoundRobin,
}

/// A resource group as the server shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceGroup {
    /// The group's name.
    pub name: String,
    /// Free text about the group (may be empty).
    pub description: String,
    /// Public groups are open to every keypair; others only to those allowed.
    pub is_public: bool,
    /// The order queued sessions are tried in.
    pub scheduler: Scheduler,
    /// How an agent is picked.
    pub selector: Selector,
    /// Seconds a session may be passed over by smaller ones before it holds the queue.
    pub starvation_secs: u64,
    /// Seconds a session may stay PENDING before it is cancelled (0 = never).
    pub pending_timeout_secs: u64,
    /// The ids of the group's agents.
    pub agents: Vec<String>,
    /// The sum of the agents' capacities.
    pub capacity: ResourceSlots,
    /// What its alive, undrained agents have free now (a lost or drained agent's room takes
    /// no session).
    pub free: ResourceSlots,
    /// Where its sessions' kernels may open connections.
    pub egress: bai_core::egress::EgressPolicy,
    /// The shapes its agents keep kernels started for, as set by an administrator:
    /// `IMAGE,cpu=N,mem=SIZE,shm=SIZE,count=N` entries separated by `;` (empty: none).
    #[serde(default)]
    pub warm_pool: String,
    /// Kernels kept started for each of its two most launched shapes of the last hour
    /// (the automatic mode; 0: off).
    #[serde(default)]
    pub warm_pool_auto: u32,
    /// Fair share: recorded usage counts half after this many seconds (0: never decays).
    #[serde(default)]
    pub fairshare_half_life_secs: u64,
    /// Fair share: what each slot unit weighs per second (`cpu=1,mem=0.1,SLOT=W,...,accel=W`;
    /// `accel`: accelerator slots not named).
    #[serde(default)]
    pub fairshare_weights: String,
    /// Fair share: how the factors weigh in a pending session's priority, and the age at
    /// which the age factor is full and the burst window
    /// (`fairshare=N,age=N,size=N,priority=N,max-age=7d,burst-window=1h`).
    #[serde(default)]
    pub fairshare_priority: String,
    /// Whether its pending sessions may end running ones (`mode` `off`, `priority` or
    /// `fairshare`), with the grace between SIGTERM and the end, the minimum run time before
    /// a session may be preempted, and whether interactive sessions may be (batch sessions
    /// may, a model service's replicas never).
    #[serde(default)]
    pub preemption: bai_core::preemption::PreemptionPolicy,
}

/// `GET /resource-groups`: the groups open to the caller (`?all=true`: every group, for
/// administrators).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceGroupList {
    /// The groups.
    pub resource_groups: Vec<ResourceGroup>,
}

/// The settings of a group a client may give; each one left out keeps its value (on
/// creation: its default).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ResourceGroupSettings {
    /// Free text about the group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether every keypair may use the group (default `true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    pub is_public: Option<bool>,
    /// The order queued sessions are tried in (default `fifo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Scheduler")]
    pub scheduler: Option<Scheduler>,
    /// How an agent is picked (default `dispersed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Selector")]
    pub selector: Option<Selector>,
    /// Seconds a session may be passed over before it holds the queue (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub starvation_secs: Option<u64>,
    /// Seconds a session may stay PENDING before it is cancelled (0 = never; the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub pending_timeout_secs: Option<u64>,
    /// Where its sessions' kernels may open connections (default `{"mode": "default"}`):
    /// `open` (nothing closed: kernels reach the host's control ports and the cloud's
    /// metadata service), `default` (the host, link-local and metadata addresses and the
    /// cluster's nodes closed) or `closed` (only the session's own peers and `allow`). A
    /// change applies to sessions launched after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bai_core::egress::EgressPolicy")]
    pub egress: Option<bai_core::egress::EgressPolicy>,
    /// The shapes its agents keep kernels started for: `IMAGE[,cpu=N][,mem=SIZE]
    /// [,shm=SIZE][,count=N]` entries separated by `;` (an image alias is resolved; what is
    /// left out is a session's default and one kernel); empty: none. Every shape must fit
    /// one of the group's agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub warm_pool: Option<String>,
    /// Kernels kept started for each of the group's two most launched shapes of the last
    /// hour, within its agents' free room (0 turns the automatic mode off; default 1, at
    /// most 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub warm_pool_auto: Option<u32>,
    /// Fair share: seconds after which recorded usage counts half (default 604800, 7 days;
    /// 0: it never decays).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub fairshare_half_life_secs: Option<u64>,
    /// Fair share: per-slot weights, `SLOT=WEIGHT` separated by `,` (`cpu` per core, `mem`
    /// per GiB, an accelerator slot per unit, `accel` for those not named; defaults
    /// `cpu=1,mem=0.1,accel=50`); those left out keep their value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub fairshare_weights: Option<String>,
    /// Fair share: the weights of the priority's factors and its two durations,
    /// `fairshare=N,age=N,size=N,priority=N,max-age=7d,burst-window=1h` (defaults
    /// `fairshare=10000,age=1000,size=1000,priority=1000,max-age=7d,burst-window=1h`;
    /// `burst-window=0` turns the burst penalty off); those left out keep their value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub fairshare_priority: Option<String>,
    /// Preemption: `off` (the default), `priority` (a pending session may end running ones
    /// of a lower priority) or `fairshare` (of accounts far over their share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bai_core::preemption::PreemptionMode")]
    pub preemption: Option<bai_core::preemption::PreemptionMode>,
    /// Preemption: seconds between SIGTERM and the end (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub preemption_grace_secs: Option<u64>,
    /// Preemption: seconds a session runs at least before it may be preempted (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub preemption_min_runtime_secs: Option<u64>,
    /// Preemption: interactive sessions may be preempted too (default false; batch
    /// sessions always may, a model service's replicas never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    pub preempt_interactive: Option<bool>,
}

/// `POST /admin/resource-groups`: a new group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NewResourceGroup {
    /// 1 to 64 letters, digits, `-`, `_` or `.`.
    pub name: String,
    /// Its settings.
    #[serde(flatten)]
    pub settings: ResourceGroupSettings,
}

/// `POST /admin/resource-groups/{name}/access`: allow or deny a keypair, or every member of
/// a project, the use of a group. One of `project` and `access_key` is needed; when both
/// are given, `project` is the one changed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct GroupAccessChange {
    /// The keypair to allow or deny.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_key: Option<String>,
    /// The project whose members to allow or deny.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// `true` allows, `false` denies (default `true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<bool>,
}

/// The access a group now gives: to the keypair or to the project that was named.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GroupAccess {
    /// The group's name.
    pub resource_group: String,
    /// The keypair changed (when the request named one and no project).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_key: Option<String>,
    /// The project changed (when the request named one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Whether it may use the group now.
    pub allowed: bool,
}

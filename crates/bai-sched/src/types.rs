//! What the scheduler looks at: a snapshot of one resource group.

use crate::policy::{Sequencer, Strategy};
use bai_core::resources::ResourceSlots;
use chrono::{DateTime, Duration, Utc};
use std::collections::HashMap;
use uuid::Uuid;

/// A PENDING session as the scheduler sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub id: Uuid,
    /// The access key whose policy and usage count (the owner).
    pub owner: String,
    /// Higher bands go first.
    pub priority: i64,
    pub enqueued_at: DateTime<Utc>,
    /// The whole request (every kernel's together).
    pub slots: ResourceSlots,
    /// Multi-node cluster sessions: how many kernels are placed one by one (each one
    /// `kernels`-th of `slots`, on any agent). 1: the whole request goes to one agent (a
    /// session of one kernel, or a single-node cluster).
    pub kernels: u32,
    /// Batch sessions: never before this time.
    pub starts_at: Option<DateTime<Utc>>,
    /// "Select Agent": only this agent may take it.
    pub designated_agent: Option<String>,
    /// Only these agents may take it (they have its image and the storage hosts of its
    /// folders); None: any agent of the group.
    pub eligible: Option<Eligible>,
    /// Sessions that must have ended successfully first.
    pub dependencies: Vec<Uuid>,
    /// Who its usage is charged to (the `fairshare` sequencer ranks by it; None: an
    /// account of its own, at its share).
    pub account: Option<crate::fairshare::tree::Account>,
    /// The longest it can run once started (a batch session's timeout, the owner's maximum
    /// session lifetime), if known. A session with a known end may be backfilled ahead of
    /// the head of the queue when it ends before the head's reservation ([`crate::reserve`]).
    pub max_runtime: Option<Duration>,
}

/// The agents a workload may go to besides their free slots, and what the others lack (the
/// pending reason when none of them is schedulable).
#[derive(Debug, Clone, PartialEq)]
pub struct Eligible {
    pub agents: std::sync::Arc<std::collections::HashSet<String>>,
    /// E.g. `no agent of group gpu has image X`.
    pub why: String,
    /// Of `agents`, those tried first (they hold the image; the others would pull it).
    pub preferred: Option<std::sync::Arc<std::collections::HashSet<String>>>,
}

/// One agent of the group.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentState {
    pub id: String,
    pub capacity: ResourceSlots,
    /// Slots held by sessions placed on it (SCHEDULED and later, until TERMINATED).
    pub used: ResourceSlots,
    /// False for an agent that is lost or draining: nothing new goes there.
    pub schedulable: bool,
}

impl AgentState {
    pub fn free(&self) -> ResourceSlots {
        self.capacity.checked_sub(&self.used)
    }
}

/// A keypair resource policy's limits that apply at scheduling time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limits {
    pub max_concurrent_sessions: Option<u32>,
    /// Cap on the sum of the owner's occupied slots (only the slots given count).
    pub total_slots: Option<ResourceSlots>,
}

/// What an owner holds now (sessions between SCHEDULED and TERMINATING, all groups).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OwnerUsage {
    pub sessions: u32,
    pub slots: ResourceSlots,
}

/// How a dependency stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepState {
    /// Ended with result SUCCESS.
    Succeeded,
    /// Not ended yet.
    Unfinished,
    /// Ended otherwise (failure, cancelled): the dependent session can never run.
    Failed,
    /// No such session.
    Missing,
}

/// A session occupying an agent, with the time it will end at the latest, if known (batch
/// timeout, maximum lifetime). Used to estimate when a waiting session may start and to
/// reserve room for the head of the queue ([`crate::reserve`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RunningSession {
    pub owner: String,
    pub agent: String,
    pub slots: ResourceSlots,
    pub ends_by: Option<DateTime<Utc>>,
}

/// How a resource group schedules.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupConfig {
    pub name: String,
    pub sequencer: Sequencer,
    pub strategy: Strategy,
    /// How long a session may be passed over by smaller ones before it holds the queue (only
    /// when no reservation can be made for it: the running sessions' ends are not known).
    pub starvation_after: Duration,
    /// Whether (and how) the head of the queue may end running sessions ([`crate::preempt`]).
    pub preemption: crate::preempt::settings::Config,
}

impl GroupConfig {
    pub fn new(name: &str) -> GroupConfig {
        GroupConfig {
            name: name.to_string(),
            sequencer: Sequencer::Fifo,
            strategy: Strategy::Dispersed,
            starvation_after: Duration::minutes(5),
            preemption: Default::default(),
        }
    }
}

/// Everything one pass over one resource group needs.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub now: DateTime<Utc>,
    pub pending: Vec<Workload>,
    pub agents: Vec<AgentState>,
    pub usage: HashMap<String, OwnerUsage>,
    pub limits: HashMap<String, Limits>,
    pub dependencies: HashMap<Uuid, DepState>,
    pub running: Vec<RunningSession>,
    /// The share tree and policy, for groups on the `fairshare` sequencer (None there:
    /// every account at its share, so age, size and priority decide).
    pub fairshare: Option<crate::fairshare::policy::Input>,
    /// Running sessions the group allows to be preempted (empty when preemption is off).
    pub preemptible: Vec<crate::preempt::settings::Candidate>,
    /// Pending sessions whose victims are ending now: they plan no more victims.
    pub preempting: std::collections::HashSet<Uuid>,
    /// Sessions sent back to the queue by a preemption, each with the session it made room
    /// for while that one is still pending: they are not started before it (no flapping).
    pub requeued_behind: HashMap<Uuid, Uuid>,
}

//! The scheduler of bai as a domain model, without I/O.
//!
//! One call, [`pipeline::schedule`], takes a [`Snapshot`] of one resource group (its PENDING
//! sessions, its agents, the owners' usage and limits, the state of dependencies) and returns a
//! [`Plan`]: for each PENDING session a [`Decision`] — placed on an agent, waiting (with the
//! reason in words and as a code), held behind the head of the queue, or failed for good —
//! with the sub-steps that led there and its position in the queue. The manager persists the
//! plan; benchmarks and tests call it directly.
//!
//! The pipeline, in order, for each session the sequencer hands out:
//! validators ([`validate`]) → agent selector ([`select`]) → allocation (the chosen agent's free
//! slots and the owner's usage are updated at once, so later sessions of the same pass see it).
//!
//! Head-of-line rule (see [`pipeline`], [`reserve`]): the first session that does not fit gets
//! a reservation (the time and agents where it will fit, from running sessions' known ends);
//! smaller sessions behind it start only if they do not delay it (EASY backfilling). When no
//! end is known, it is passed over until it has waited longer than the group's starvation
//! threshold; then it holds the queue: nothing behind it in its group starts until it fits.
#![forbid(unsafe_code)]

pub mod backfill;
pub mod explain;
pub mod fairshare;
pub mod gang;
pub mod pipeline;
pub mod policy;
pub mod preempt;
pub mod reserve;
pub mod select;
pub mod sequence;
pub mod step;
pub mod types;
pub mod validate;

pub use pipeline::{Decision, GroupState, Outcome, Plan, schedule};
pub use policy::{Sequencer, Strategy};
pub use step::{StepResult, SubStep};
pub use types::{
    AgentState, DepState, Eligible, GroupConfig, Limits, OwnerUsage, RunningSession, Snapshot,
    Workload,
};

//! bai's control plane below its HTTP edge: the agents (local and remote, over `bai-link`),
//! the session lifecycle and the scheduler driver, images, data-folder storage, stats and
//! metrics, the app proxy's plumbing, and the typed event bus between them. It reaches
//! agents only through [`bai_core::agent::AgentRpc`] and keeps state only in `bai-store`.
//!
//! It stands on `bai-ground` (configuration, bus, agent registry, storage, stats, metrics,
//! identity, …; re-exported here under their old paths) and may import the domain
//! (`bai-core`), the wire types (`bai-api`), the store, the scheduler's pure pipeline
//! (`bai-sched`) and the agent link; never the serving layer or the HTTP edge above it
//! (`bai-serving`, `bai-manager`), which the compiler enforces.
#![forbid(unsafe_code)]

// The ground this crate stands on, under the paths it always had.
pub use bai_ground::{
    agents, apps, audit, bgtask, browsers, bus, config, guard, hourly, identity, metrics, stats,
    storage,
};

pub mod images;
pub mod lifecycle;
pub mod monitor;
pub mod pools;
pub mod proxy;
pub mod remote;
pub mod scheduler;

pub use agents::AgentHandle;
pub use config::ManagerConfig;

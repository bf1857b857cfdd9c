//! bai's control plane below its HTTP edge: the agents (local and remote, over `bai-link`),
//! the session lifecycle and the scheduler driver, images, data-folder storage, stats and
//! metrics, the app proxy's plumbing, and the typed event bus between them. It reaches
//! agents only through [`bai_core::agent::AgentRpc`] and keeps state only in `bai-store`.
//!
//! It may import the domain (`bai-core`), the wire types (`bai-api`), the store, the
//! scheduler's pure pipeline (`bai-sched`) and the agent link; never the serving layer or the
//! HTTP edge above it (`bai-serving`, `bai-manager`), which the compiler enforces.
#![forbid(unsafe_code)]

pub mod agents;
pub mod apps;
pub mod audit;
pub mod bgtask;
pub mod browsers;
pub mod bus;
pub mod config;
pub mod guard;
pub mod hourly;
pub mod identity;
pub mod images;
pub mod lifecycle;
pub mod metrics;
pub mod monitor;
pub mod proxy;
pub mod remote;
pub mod scheduler;
pub mod stats;
pub mod storage;

pub use agents::AgentHandle;
pub use config::ManagerConfig;

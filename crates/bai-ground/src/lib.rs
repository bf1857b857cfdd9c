//! The ground of bai's control plane: what the lifecycle, the scheduler driver, the monitor,
//! images, remote agents and serving stand on, and that imports none of them. The
//! configuration (`config`), the typed event bus (`bus`), the agent registry with each
//! remote agent's link state (`agents`), data-folder storage (`storage`), each running
//! session's readings and how they are shown (`stats`), metrics, background tasks, app
//! traffic, the caller's identity, logged-in browsers, guards, the audit log and the hourly
//! sweeps.
//!
//! It may import the domain (`bai-core`), the store and the agent link; never the wire types
//! (`bai-api`) or `bai-control` above it, which the compiler enforces. The crates above name
//! it where they use it (`bai_ground::storage`, …); nothing re-exports it.
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
pub mod metrics;
pub mod stats;
pub mod storage;

pub use agents::AgentHandle;
pub use config::ManagerConfig;

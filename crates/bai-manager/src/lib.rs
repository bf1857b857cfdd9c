//! The bai manager's HTTP edge: the Backend.AI-compatible REST API, GraphQL, the SSE event
//! streams and the web UI's routes, with authentication and authorization; and the wiring
//! ([`state::Manager`], [`start`]) that builds the control plane (`bai-control`) and the
//! model services (`bai-serving`) under it and starts their loops.
//!
//! The layers below are re-exported under their old paths (`bai_manager::lifecycle`, …), so
//! callers and tests name them as before; the compiler keeps them from importing this crate.
#![forbid(unsafe_code)]
#![recursion_limit = "256"]

pub mod api;
pub mod auth;
pub mod error;
pub mod exec_runs;
pub mod heap;
pub mod sftp;
pub mod start;
pub mod state;
pub mod web;

pub use bai_control::{
    AgentHandle, ManagerConfig, agents, apps, audit, bgtask, browsers, bus, config, guard,
    identity, images, lifecycle, metrics, monitor, pools, proxy, remote, scheduler, stats, storage,
};
pub use bai_serving as serving;
pub use start::{StartError, Started, start};
pub use state::Manager;

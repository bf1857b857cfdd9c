//! The bai manager's HTTP edge: the Backend.AI-compatible REST API, GraphQL, the SSE event
//! streams and the web UI's routes, with authentication and authorization; and the wiring
//! ([`state::Manager`], [`start`]) that builds the control plane (`bai-control`) and the
//! model services (`bai-serving`) under it and starts their loops.
//!
//! Code names the crate each module lives in (`bai_ground::storage`, `bai_control::lifecycle`,
//! `bai_serving::create`); nothing below is re-exported here. The compiler keeps the layers
//! below from importing this crate.
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

pub use start::{StartError, Started, start};
pub use state::Manager;

//! The bai manager: the Backend.AI-compatible API, authentication, the scheduler and the
//! session lifecycle. It reaches agents only through [`bai_core::agent::AgentRpc`].
#![forbid(unsafe_code)]
#![recursion_limit = "256"]

pub mod agents;
pub mod api;
pub mod apps;
pub mod audit;
pub mod auth;
pub mod bgtask;
pub mod browsers;
pub mod bus;
pub mod config;
pub mod error;
pub mod exec_runs;
pub mod guard;
pub mod identity;
pub mod images;
pub mod lifecycle;
pub mod metrics;
pub mod monitor;
pub mod proxy;
pub mod remote;
pub mod scheduler;
pub mod serving;
pub mod sftp;
pub mod start;
pub mod state;
pub mod stats;
pub mod storage;
pub mod web;

pub use agents::AgentHandle;
pub use config::ManagerConfig;
pub use start::{StartError, Started, start};
pub use state::Manager;

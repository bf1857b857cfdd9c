//! Domain types of bai, without I/O.
//!
//! Everything that the manager, the agent, the client and the CLI must agree on lives here:
//! session names and their rules, the session state machine with its legal transitions,
//! resource slots and their parsing, typed lifecycle events, API problems, the HMAC request
//! signature of the Backend.AI wire contract, and the agent RPC interface.
#![forbid(unsafe_code)]

pub mod agent;
pub mod event;
pub mod history;
pub mod idle;
pub mod name;
pub mod problem;
pub mod resources;
pub mod sign;
pub mod stats;
pub mod status;
pub mod vpath;

pub use name::SessionName;
pub use problem::Problem;
pub use resources::ResourceSlots;
pub use status::{SessionResult, SessionStatus, SessionType};

/// The API version we answer on `GET /` (wire contract §2.1).
pub const API_VERSION: &str = "v9.20250722";
/// The manager version string we report.
pub const MANAGER_VERSION: &str = "26.9.6";

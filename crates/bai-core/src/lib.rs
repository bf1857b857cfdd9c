//! Domain types of bai, without I/O.
//!
//! Everything that the manager, the agent, the client and the CLI must agree on lives here:
//! session names and their rules, the session state machine with its legal transitions,
//! resource slots and their parsing, human durations and sizes, typed lifecycle events, API problems, the HMAC request
//! signature of the Backend.AI wire contract, and the agent RPC interface.
#![forbid(unsafe_code)]

pub mod accel;
pub mod agent;
pub mod amount;
pub mod apps;
pub mod audit;
pub mod cluster;
pub mod dotfile;
pub mod egress;
pub mod event;
pub mod files;
pub mod history;
pub mod idle;
pub mod name;
pub mod pending;
pub mod permission;
pub mod pool;
pub mod preemption;
pub mod problem;
pub mod reason;
pub mod resources;
pub mod serving;
pub mod sign;
pub mod spec;
pub mod stats;
pub mod status;
pub mod storage;
pub mod units;
pub mod vpath;

pub use name::SessionName;
pub use permission::FolderPermission;
pub use problem::Problem;
pub use reason::Reason;
pub use resources::ResourceSlots;
pub use spec::SessionSpec;
pub use status::{SessionResult, SessionStatus, SessionType};
pub use units::{UnitError, parse_duration, parse_size};

/// The API version we answer on `GET /` (wire contract §2.1).
pub const API_VERSION: &str = "v9.20250722";
/// The manager version string we report.
pub const MANAGER_VERSION: &str = "26.9.6";

/// The `Upgrade` protocol with which bai's own client asks `tcpproxy` / `httpproxy` for a raw
/// tunnel: after `101 Switching Protocols` the connection carries the app's bytes as they are
/// (no WebSocket frames). Other clients keep the WebSocket.
pub const RAW_TUNNEL_UPGRADE: &str = "bai-tcp";
/// A header on every answer of a manager to a raw-tunnel request, refusals included: a client
/// that does not find it is talking to a server without raw tunnels and uses the WebSocket.
pub const RAW_TUNNEL_HEADER: &str = "x-bai-tunnel";
/// The `Upgrade` protocol with which bai's own client asks the data-folder transfer URLs
/// (`GET /storage/download`, `PATCH /storage/upload`) for the file's bytes on the bare
/// connection after `101 Switching Protocols`; servers that do not know it answer as usual.
pub const RAW_FILE_UPGRADE: &str = "bai-file";
/// How many bytes follow a raw file switch (the download's length; the upload's body).
pub const RAW_LENGTH_HEADER: &str = "x-bai-length";

//! `GET /events/session`: the `data` of each server-sent event.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `event:` name of a server-sent event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventName {
    /// The session was queued.
    SessionEnqueued,
    /// The scheduler placed it on an agent.
    SessionScheduled,
    /// Its kernel is being prepared.
    SessionPreparing,
    /// It runs.
    SessionStarted,
    /// It is being terminated.
    SessionTerminating,
    /// It ended (final).
    SessionTerminated,
    /// It was cancelled before it ran (final).
    SessionCancelled,
    /// Its batch command exited with 0.
    SessionSuccess,
    /// Its batch command failed, or it failed to start.
    SessionFailure,
    /// The kernel is being prepared.
    KernelPreparing,
    /// The kernel's image is being pulled.
    KernelPulling,
    /// The kernel's container is being created.
    KernelCreating,
    /// The kernel runs.
    KernelStarted,
    /// The kernel is being destroyed.
    KernelTerminating,
    /// The kernel was destroyed.
    KernelTerminated,
    /// The kernel was cancelled.
    KernelCancelled,
    /// The last event of a one-session stream, after the session ended; its data is `{}`.
    ServerClose,
}

/// The `data` of a server-sent event: a lifecycle event, or `{}` for `server_close`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum EventData {
    /// A session or kernel event.
    Session(SessionEventData),
    /// `server_close`: nothing.
    Close(CloseData),
}

/// What happened to a session (or its kernel).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionEventData {
    /// Why, e.g. `user-requested`, `idle-timeout`, `task-finished`.
    pub reason: String,
    /// The session's name.
    #[serde(rename = "sessionName")]
    pub session_name: String,
    /// The owner's access key.
    #[serde(rename = "ownerAccessKey")]
    pub owner_access_key: String,
    /// The session's id.
    #[serde(rename = "sessionId")]
    pub session_id: String,
    /// The exit code of the session's command, when it ended with one.
    #[serde(rename = "exitCode")]
    pub exit_code: Option<i32>,
    /// Kernel events only: the kernel's id.
    #[serde(rename = "kernelId", default, skip_serializing_if = "Option::is_none")]
    pub kernel_id: Option<String>,
    /// Kernel events only: the kernel's role (`main`).
    #[serde(
        rename = "clusterRole",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cluster_role: Option<String>,
    /// Kernel events only: the kernel's index in its role (1).
    #[serde(
        rename = "clusterIdx",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cluster_idx: Option<u32>,
}

/// The empty data of `server_close`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseData {}

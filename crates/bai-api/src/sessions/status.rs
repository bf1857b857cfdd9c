//! The fixed words of a session: its status, type, result and cluster mode.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Status of a session (and of its kernel), as Backend.AI spells it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SessionStatus {
    /// Queued, waiting for the scheduler to place it.
    Pending,
    /// Placed on an agent; its kernel is about to be prepared.
    Scheduled,
    /// The agent prepares the kernel.
    Preparing,
    /// The agent pulls the image.
    Pulling,
    /// The image is there; the container is about to be created.
    Prepared,
    /// The container is being created.
    Creating,
    /// The kernel runs and can be used.
    Running,
    /// The kernel restarts.
    Restarting,
    /// The kernel runs, but not everything of it is healthy.
    RunningDegraded,
    /// The kernel is being destroyed.
    Terminating,
    /// Ended after it ran (final).
    Terminated,
    /// Failed; it still has to be terminated.
    Error,
    /// Ended before it ran (final).
    Cancelled,
}

/// What `POST /session` reports: the session's status, or `TIMEOUT` when `maxWaitSeconds`
/// passed before it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CreateStatus {
    /// Queued (always the answer with `enqueueOnly`).
    Pending,
    /// Placed on an agent.
    Scheduled,
    /// The agent prepares the kernel.
    Preparing,
    /// The agent pulls the image.
    Pulling,
    /// The image is there.
    Prepared,
    /// The container is being created.
    Creating,
    /// Ready to use.
    Running,
    /// The kernel restarts.
    Restarting,
    /// Running, not everything healthy.
    RunningDegraded,
    /// Being destroyed (a batch session that finished).
    Terminating,
    /// Ended (a batch session that finished).
    Terminated,
    /// Failed to start.
    Error,
    /// Cancelled before it ran.
    Cancelled,
    /// `maxWaitSeconds` passed while the session was still on its way; it goes on.
    Timeout,
}

/// The kind of session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SessionType {
    /// Used by a person: apps, terminals, code execution (the default).
    Interactive,
    /// Runs its startup command and ends with it.
    Batch,
    /// Serves a model.
    Inference,
}

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SessionResult {
    /// Not ended, or ended without an outcome (interactive sessions).
    Undefined,
    /// A batch session whose command exited with 0.
    Success,
    /// A batch session whose command failed, or a session that failed to start.
    Failure,
}

/// How the kernels of a session are spread (bai runs single-node sessions only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ClusterMode {
    /// All kernels on one agent.
    #[serde(rename = "single-node")]
    SingleNode,
    /// Kernels on several agents (refused by bai: cluster sessions are not available).
    #[serde(rename = "multi-node")]
    MultiNode,
}

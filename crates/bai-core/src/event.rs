//! Typed lifecycle events. One type carries each event to the log, the persisted event
//! table and the SSE stream, so the three never disagree.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The event kinds of the Backend.AI SSE stream (wire contract §6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    SessionEnqueued,
    SessionScheduled,
    SessionPreparing,
    SessionStarted,
    SessionTerminating,
    SessionTerminated,
    SessionCancelled,
    SessionSuccess,
    SessionFailure,
    KernelPreparing,
    KernelPulling,
    KernelCreating,
    KernelStarted,
    KernelTerminating,
    KernelTerminated,
    KernelCancelled,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        use EventKind::*;
        match self {
            SessionEnqueued => "session_enqueued",
            SessionScheduled => "session_scheduled",
            SessionPreparing => "session_preparing",
            SessionStarted => "session_started",
            SessionTerminating => "session_terminating",
            SessionTerminated => "session_terminated",
            SessionCancelled => "session_cancelled",
            SessionSuccess => "session_success",
            SessionFailure => "session_failure",
            KernelPreparing => "kernel_preparing",
            KernelPulling => "kernel_pulling",
            KernelCreating => "kernel_creating",
            KernelStarted => "kernel_started",
            KernelTerminating => "kernel_terminating",
            KernelTerminated => "kernel_terminated",
            KernelCancelled => "kernel_cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<EventKind> {
        use EventKind::*;
        [
            SessionEnqueued,
            SessionScheduled,
            SessionPreparing,
            SessionStarted,
            SessionTerminating,
            SessionTerminated,
            SessionCancelled,
            SessionSuccess,
            SessionFailure,
            KernelPreparing,
            KernelPulling,
            KernelCreating,
            KernelStarted,
            KernelTerminating,
            KernelTerminated,
            KernelCancelled,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }

    pub fn is_kernel(self) -> bool {
        self.as_str().starts_with("kernel_")
    }

    /// After this event nothing more happens to the session.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            EventKind::SessionTerminated | EventKind::SessionCancelled
        )
    }
}

/// One lifecycle event of a session (or of its kernel).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionEvent {
    /// Monotonic sequence number assigned when persisted (0 before).
    pub seq: i64,
    pub kind: EventKind,
    pub session_id: Uuid,
    pub session_name: String,
    pub access_key: String,
    pub reason: String,
    pub exit_code: Option<i32>,
    pub kernel_id: Option<Uuid>,
}

impl SessionEvent {
    /// The `data:` payload of the SSE message, as the Backend.AI manager sends it.
    pub fn wire_data(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "reason": self.reason,
            "sessionName": self.session_name,
            "ownerAccessKey": self.access_key,
            "sessionId": self.session_id.to_string(),
            "exitCode": self.exit_code,
        });
        if let (Some(k), Some(obj)) = (self.kernel_id, v.as_object_mut()) {
            obj.insert("kernelId".into(), k.to_string().into());
            obj.insert("clusterRole".into(), "main".into());
            obj.insert("clusterIdx".into(), 1.into());
        }
        v
    }
}

//! Typed lifecycle events. One type carries each event to the log, the persisted event
//! table and the SSE stream, so the three never disagree.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Declares [`EventKind`] from one list: each variant's wire name and meaning are written
/// here once, and the wire names ([`EventKind::as_str`], serde), the list of all kinds
/// ([`EventKind::ALL`], which the API schema and so the web UI's types are made from) and
/// the descriptions ([`EventKind::describe`]) all come from it.
macro_rules! event_kinds {
    ($($(#[doc = $doc:literal])+ $variant:ident = $name:literal,)+) => {
        /// The event kinds of the Backend.AI SSE stream (wire contract §6.1).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(into = "&'static str", try_from = "String")]
        pub enum EventKind {
            $($(#[doc = $doc])+ $variant,)+
        }

        impl EventKind {
            /// Every kind, in the order of the list.
            pub const ALL: &'static [EventKind] = &[$(EventKind::$variant,)+];

            /// The wire name (`session_started`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(EventKind::$variant => $name,)+
                }
            }

            /// What the event says happened, in words.
            pub fn describe(self) -> &'static str {
                match self {
                    $(EventKind::$variant => concat!($($doc),+).trim_ascii(),)+
                }
            }
        }
    };
}

event_kinds! {
    /// The session was queued.
    SessionEnqueued = "session_enqueued",
    /// The scheduler placed it on an agent.
    SessionScheduled = "session_scheduled",
    /// Its kernel is being prepared.
    SessionPreparing = "session_preparing",
    /// It runs.
    SessionStarted = "session_started",
    /// It is being terminated.
    SessionTerminating = "session_terminating",
    /// It ended (final).
    SessionTerminated = "session_terminated",
    /// It was cancelled before it ran (final).
    SessionCancelled = "session_cancelled",
    /// It was preempted: its processes got SIGTERM and it ends after its grace (or goes
    /// back to the queue, started with `--requeue`).
    SessionPreempted = "session_preempted",
    /// Its batch command exited with 0.
    SessionSuccess = "session_success",
    /// Its batch command failed, or it failed to start.
    SessionFailure = "session_failure",
    /// The kernel is being prepared.
    KernelPreparing = "kernel_preparing",
    /// The kernel's image is being pulled.
    KernelPulling = "kernel_pulling",
    /// The kernel's container is being created.
    KernelCreating = "kernel_creating",
    /// The kernel runs.
    KernelStarted = "kernel_started",
    /// The kernel is being destroyed.
    KernelTerminating = "kernel_terminating",
    /// The kernel was destroyed.
    KernelTerminated = "kernel_terminated",
    /// The kernel was cancelled.
    KernelCancelled = "kernel_cancelled",
}

impl From<EventKind> for &'static str {
    fn from(k: EventKind) -> &'static str {
        k.as_str()
    }
}

impl TryFrom<String> for EventKind {
    type Error = String;
    fn try_from(s: String) -> Result<EventKind, String> {
        EventKind::parse(&s).ok_or_else(|| format!("unknown event kind {s:?}"))
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl EventKind {
    pub fn parse(s: &str) -> Option<EventKind> {
        EventKind::ALL.iter().copied().find(|k| k.as_str() == s)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_one_name_that_reads_back() {
        assert_eq!(EventKind::ALL.len(), 17);
        for &k in EventKind::ALL {
            assert_eq!(EventKind::parse(k.as_str()), Some(k));
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.as_str()));
            assert_eq!(serde_json::from_str::<EventKind>(&json).unwrap(), k);
            assert!(!k.describe().is_empty() && !k.describe().starts_with(' '));
        }
        assert!(serde_json::from_str::<EventKind>("\"session_exploded\"").is_err());
        assert_eq!(
            EventKind::KernelPulling.describe(),
            "The kernel's image is being pulled."
        );
    }
}

//! Why a session is in its status: the typed form of `status_info`.
//!
//! The wire keeps Backend.AI's plain text (`kernel-lost: its container is gone`,
//! `task-failed (exit code 2)`); inside bai a reason is a [`Reason`], written with
//! [`fmt::Display`] and read back with [`Reason::parse`], so no code compares reason strings.

use std::fmt;

/// Why a session moved to (or stays in) its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// Stored, waiting for the scheduler's first look.
    Enqueued,
    /// The scheduler's verdict on a queued session: a wait (`no-available-instances`,
    /// `concurrency-limit`, …) or a give-up (`dependency-failed`, `pending-timeout`), as
    /// `CODE: message`.
    Scheduler {
        code: String,
        message: String,
    },
    /// Placed on an agent.
    ScheduledOn(String),
    Preparing,
    /// Its agent pulls the image from the cluster's registry.
    Pulling(String),
    ImageReady,
    Creating,
    Running,
    /// A restart of the manager interrupted the launch; the session waits again.
    Requeued(String),
    /// The user (or an admin) asked for it.
    UserRequested,
    /// A batch command ended with exit code 0.
    TaskFinished,
    /// A batch command ended with another exit code.
    TaskFailed(i32),
    /// A batch session ran past its timeout.
    TaskTimeout,
    OutOfMemory,
    /// An interactive kernel's main process ended by itself (exit code when not 0).
    SelfTerminated(Option<i32>),
    /// An interactive kernel's main process was killed (exit code 137).
    Killed(i32),
    MaxLifetimeExceeded,
    IdleTimeout,
    IdleUtilization,
    CreationFailed(String),
    CreationTimeout {
        secs: u64,
    },
    /// The kernel's container disappeared.
    KernelLost(String),
    /// The session's agent is gone.
    AgentLost(String),
    ImageNotFound {
        image: String,
        agent: String,
    },
    /// A data folder of the session cannot be mounted any more.
    MountFailed(String),
    /// A creation phase made no progress (`stuck-in-preparing`, …).
    Stuck {
        status: String,
        secs: i64,
    },
    /// Ended (or sent back to the queue) to make room for a more urgent session: which one,
    /// and why it may take this one's place.
    Preempted {
        by: String,
        why: String,
    },
    /// Text this version does not know (kept as it is).
    Other(String),
}

impl Reason {
    /// Reads a stored or received reason back. Unknown text becomes [`Reason::Other`].
    pub fn parse(text: &str) -> Reason {
        let (head, rest) = match text.split_once(": ") {
            Some((h, r)) => (h, Some(r)),
            None => (text, None),
        };
        let exit_code = |prefix: &str| -> Option<i32> {
            text.strip_prefix(prefix)?
                .strip_prefix(" (exit code ")?
                .strip_suffix(')')?
                .parse()
                .ok()
        };
        match (head, rest) {
            ("enqueued", None) => Reason::Enqueued,
            ("preparing", None) => Reason::Preparing,
            ("image-ready", None) => Reason::ImageReady,
            ("pulling", Some(r)) => {
                Reason::Pulling(r.strip_suffix(" from the registry").unwrap_or(r).into())
            }
            ("creating", None) => Reason::Creating,
            ("running", None) => Reason::Running,
            ("user-requested", None) => Reason::UserRequested,
            ("task-finished", None) => Reason::TaskFinished,
            ("task-timeout", None) => Reason::TaskTimeout,
            ("out-of-memory", None) => Reason::OutOfMemory,
            ("self-terminated", None) => Reason::SelfTerminated(None),
            ("max-lifetime-exceeded", None) => Reason::MaxLifetimeExceeded,
            ("idle-timeout", None) => Reason::IdleTimeout,
            ("idle-utilization", None) => Reason::IdleUtilization,
            ("requeued", Some(r)) => Reason::Requeued(r.into()),
            ("creation-failed", Some(r)) => Reason::CreationFailed(r.into()),
            ("kernel-lost", Some(r)) => Reason::KernelLost(r.into()),
            ("agent-lost", Some(r)) => Reason::AgentLost(r.into()),
            ("mount-failed", Some(r)) => Reason::MountFailed(r.into()),
            ("creation-timeout", Some(r)) => r
                .strip_prefix("the kernel was not ready within ")
                .and_then(|s| s.strip_suffix('s'))
                .and_then(|s| s.parse().ok())
                .map(|secs| Reason::CreationTimeout { secs })
                .unwrap_or_else(|| Reason::Other(text.into())),
            ("preempted", Some(r)) => r
                .strip_prefix("for session ")
                .and_then(|r| r.split_once(" ("))
                .and_then(|(by, why)| Some((by, why.strip_suffix(')')?)))
                .map(|(by, why)| Reason::Preempted {
                    by: by.into(),
                    why: why.into(),
                })
                .unwrap_or_else(|| Reason::Other(text.into())),
            ("image-not-found", Some(r)) => match r.split_once(" is not on agent ") {
                Some((image, agent)) => Reason::ImageNotFound {
                    image: image.into(),
                    agent: agent.into(),
                },
                None => Reason::Other(text.into()),
            },
            (h, Some(r)) if h.starts_with("stuck-in-") => r
                .strip_prefix("no progress for ")
                .and_then(|s| s.strip_suffix('s'))
                .and_then(|s| s.parse().ok())
                .map(|secs| Reason::Stuck {
                    status: h["stuck-in-".len()..].into(),
                    secs,
                })
                .unwrap_or_else(|| Reason::Other(text.into())),
            (h, Some(r)) if SCHEDULER_CODES.contains(&h) => Reason::Scheduler {
                code: h.into(),
                message: r.into(),
            },
            (h, None) if h.starts_with("scheduled on ") => {
                Reason::ScheduledOn(h["scheduled on ".len()..].into())
            }
            _ => {
                if let Some(c) = exit_code("task-failed") {
                    Reason::TaskFailed(c)
                } else if let Some(c) = exit_code("self-terminated") {
                    Reason::SelfTerminated(Some(c))
                } else if let Some(c) = exit_code("killed") {
                    Reason::Killed(c)
                } else {
                    Reason::Other(text.into())
                }
            }
        }
    }
}

/// The codes with which the scheduler explains a wait or a give-up.
pub const SCHEDULER_CODES: &[&str] = &[
    "no-available-instances",
    "starts-at-not-reached",
    "concurrency-limit",
    "resource-quota",
    "dependency-not-finished",
    "held-for-head-of-line",
    "pending-timeout",
    "dependency-failed",
    "preempted-waits",
];

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Enqueued => f.write_str("enqueued"),
            Reason::Scheduler { code, message } => write!(f, "{code}: {message}"),
            Reason::ScheduledOn(agent) => write!(f, "scheduled on {agent}"),
            Reason::Preparing => f.write_str("preparing"),
            Reason::ImageReady => f.write_str("image-ready"),
            Reason::Pulling(image) => write!(f, "pulling: {image} from the registry"),
            Reason::Creating => f.write_str("creating"),
            Reason::Running => f.write_str("running"),
            Reason::Requeued(why) => write!(f, "requeued: {why}"),
            Reason::UserRequested => f.write_str("user-requested"),
            Reason::TaskFinished => f.write_str("task-finished"),
            Reason::TaskFailed(c) => write!(f, "task-failed (exit code {c})"),
            Reason::TaskTimeout => f.write_str("task-timeout"),
            Reason::OutOfMemory => f.write_str("out-of-memory"),
            Reason::SelfTerminated(None) => f.write_str("self-terminated"),
            Reason::SelfTerminated(Some(c)) => write!(f, "self-terminated (exit code {c})"),
            Reason::Killed(c) => write!(f, "killed (exit code {c})"),
            Reason::MaxLifetimeExceeded => f.write_str("max-lifetime-exceeded"),
            Reason::IdleTimeout => f.write_str("idle-timeout"),
            Reason::IdleUtilization => f.write_str("idle-utilization"),
            Reason::CreationFailed(e) => write!(f, "creation-failed: {e}"),
            Reason::CreationTimeout { secs } => write!(
                f,
                "creation-timeout: the kernel was not ready within {secs}s"
            ),
            Reason::KernelLost(why) => write!(f, "kernel-lost: {why}"),
            Reason::AgentLost(why) => write!(f, "agent-lost: {why}"),
            Reason::ImageNotFound { image, agent } => {
                write!(f, "image-not-found: {image} is not on agent {agent}")
            }
            Reason::MountFailed(why) => write!(f, "mount-failed: {why}"),
            Reason::Stuck { status, secs } => {
                write!(f, "stuck-in-{status}: no progress for {secs}s")
            }
            Reason::Preempted { by, why } => write!(f, "preempted: for session {by} ({why})"),
            Reason::Other(text) => f.write_str(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Reason> {
        vec![
            Reason::Enqueued,
            Reason::Scheduler {
                code: "no-available-instances".into(),
                message: "cpu short on 2 of 2 agents".into(),
            },
            Reason::Scheduler {
                code: "dependency-failed".into(),
                message: "prep ended with FAILURE".into(),
            },
            Reason::ScheduledOn("local".into()),
            Reason::Preparing,
            Reason::ImageReady,
            Reason::Pulling("bai/python:3.11".into()),
            Reason::Creating,
            Reason::Running,
            Reason::Requeued("a manager restart interrupted the launch".into()),
            Reason::UserRequested,
            Reason::TaskFinished,
            Reason::TaskFailed(2),
            Reason::TaskFailed(-1),
            Reason::TaskTimeout,
            Reason::OutOfMemory,
            Reason::SelfTerminated(None),
            Reason::SelfTerminated(Some(3)),
            Reason::Killed(137),
            Reason::MaxLifetimeExceeded,
            Reason::IdleTimeout,
            Reason::IdleUtilization,
            Reason::CreationFailed("docker: no such image".into()),
            Reason::CreationTimeout { secs: 120 },
            Reason::KernelLost("its container is gone".into()),
            Reason::AgentLost("the assigned agent is gone".into()),
            Reason::ImageNotFound {
                image: "python:latest".into(),
                agent: "a1".into(),
            },
            Reason::MountFailed("data folder \"x\" was deleted".into()),
            Reason::Stuck {
                status: "preparing".into(),
                secs: 150,
            },
            Reason::Preempted {
                by: "4f1c9a52-0000-4000-8000-000000000001".into(),
                why: "priority 80 over 10".into(),
            },
            Reason::Other("something new".into()),
        ]
    }

    #[test]
    fn every_reason_reads_back_as_itself() {
        for r in all() {
            assert_eq!(Reason::parse(&r.to_string()), r, "{r}");
        }
    }

    #[test]
    fn wire_text_is_backend_ai_s() {
        assert_eq!(
            Reason::TaskFailed(2).to_string(),
            "task-failed (exit code 2)"
        );
        assert_eq!(
            Reason::KernelLost("its container is gone".into()).to_string(),
            "kernel-lost: its container is gone"
        );
        assert_eq!(Reason::UserRequested.to_string(), "user-requested");
    }
}

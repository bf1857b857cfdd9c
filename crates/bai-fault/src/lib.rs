//! Fault points: named steps where a test build of `baid` kills itself with SIGKILL, so the
//! crash tests can stop the manager (or an agent) exactly between two writes and check what a
//! restart makes of it.
//!
//! A point is armed by the environment of the process: `BAI_FAULT_POINT=NAME` kills the
//! process the first time NAME is crossed (`BAI_FAULT_HIT=N`: the N-th time). Only builds with
//! the feature `armed` read it (`make test` and `make chaos` build `baid` with
//! `--features baid/fault-points`); in any other build [`point`] is an empty function and the
//! variables mean nothing.
//!
//! Names: `FROM>TO:before` and `FROM>TO:after` around each status change of a session (the
//! store's compare-and-set), `pass:before-apply` and `pass:after-apply` around the write of a
//! scheduler pass, `agent:container-created`, `agent:kernel-ready` and `agent:container-removed`
//! inside a Docker agent.
#![forbid(unsafe_code)]

/// Whether this build has fault points at all.
pub const ARMED: bool = cfg!(feature = "armed");

/// Which side of a step a point is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Before,
    After,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Before => "before",
            Side::After => "after",
        }
    }
}

/// The name of the point around a status change (`RUNNING>TERMINATING:before`).
pub fn transition_name(from: &str, to: &str, side: Side) -> String {
    format!("{from}>{to}:{}", side.as_str())
}

/// The point armed in this process, if any (`BAI_FAULT_POINT`, with its hit count).
pub fn armed() -> Option<(&'static str, u64)> {
    imp::armed()
}

/// Crosses the point `name`: kills this process if it is the armed one and its hit is due.
#[inline]
pub fn point(name: &str) {
    imp::point(|| std::borrow::Cow::Borrowed(name));
}

/// Whether the step `name` should fail instead of being done: a test build with
/// `BAI_FAULT_FAIL=NAME[,NAME…]` in its environment says yes every time (a step that has a
/// way to fail cleanly, e.g. `agent:pool-bind`, tests that way). Always false in other builds.
pub fn fails(name: &str) -> bool {
    imp::fails(name)
}

/// [`point`] for a status change; the name is only made when a point is armed.
#[inline]
pub fn transition(from: &dyn std::fmt::Display, to: &dyn std::fmt::Display, side: Side) {
    imp::point(|| {
        std::borrow::Cow::Owned(transition_name(&from.to_string(), &to.to_string(), side))
    });
}

#[cfg(feature = "armed")]
mod imp {
    use std::borrow::Cow;
    use std::io::Write;
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};

    struct Armed {
        name: &'static str,
        hit: u64,
        seen: AtomicU64,
    }

    fn config() -> Option<&'static Armed> {
        static ARMED: OnceLock<Option<Armed>> = OnceLock::new();
        ARMED
            .get_or_init(|| {
                let name = std::env::var("BAI_FAULT_POINT").ok()?;
                let name = name.trim();
                if name.is_empty() {
                    return None;
                }
                let hit = std::env::var("BAI_FAULT_HIT")
                    .ok()
                    .and_then(|h| h.trim().parse().ok())
                    .filter(|h| *h > 0)
                    .unwrap_or(1);
                Some(Armed {
                    name: Box::leak(name.to_string().into_boxed_str()),
                    hit,
                    seen: AtomicU64::new(0),
                })
            })
            .as_ref()
    }

    pub fn armed() -> Option<(&'static str, u64)> {
        config().map(|a| (a.name, a.hit))
    }

    pub fn fails(name: &str) -> bool {
        static FAIL: OnceLock<Vec<String>> = OnceLock::new();
        FAIL.get_or_init(|| {
            std::env::var("BAI_FAULT_FAIL")
                .unwrap_or_default()
                .split(',')
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .collect()
        })
        .iter()
        .any(|n| n == name)
    }

    pub fn point<'a>(name: impl FnOnce() -> Cow<'a, str>) {
        let Some(armed) = config() else { return };
        if name() != armed.name {
            return;
        }
        if armed.seen.fetch_add(1, Ordering::SeqCst) + 1 != armed.hit {
            return;
        }
        // The line the crash tests wait for; then no destructor, no flush, no shutdown.
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "bai-fault: point {} reached (hit {}): SIGKILL",
            armed.name, armed.hit
        );
        let _ = err.flush();
        let _ =
            rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
        // SIGKILL is not delivered later than this in practice; never go on past the point.
        loop {
            std::thread::park();
        }
    }
}

#[cfg(not(feature = "armed"))]
mod imp {
    use std::borrow::Cow;

    pub fn armed() -> Option<(&'static str, u64)> {
        None
    }

    pub fn fails(_name: &str) -> bool {
        false
    }

    #[inline(always)]
    pub fn point<'a>(_name: impl FnOnce() -> Cow<'a, str>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_points_are_named_from_to_and_side() {
        assert_eq!(
            transition_name("CREATING", "RUNNING", Side::Before),
            "CREATING>RUNNING:before"
        );
        assert_eq!(
            transition_name("RUNNING", "TERMINATING", Side::After),
            "RUNNING>TERMINATING:after"
        );
    }

    /// A point that is not armed returns (the test process lives on to say so).
    #[test]
    fn a_point_not_armed_returns() {
        point("no-such-point-is-ever-armed");
        transition(&"A", &"B", Side::Before);
        assert_eq!(ARMED, cfg!(feature = "armed"));
    }
}

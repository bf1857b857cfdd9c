//! A resource group's preemption policy: whether its pending sessions may end running ones,
//! which, and how gently. The scheduler's rules are in `bai_sched::preempt`.

use serde::{Deserialize, Serialize};

/// Which running sessions a pending one may end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum PreemptionMode {
    /// None (the default).
    #[default]
    Off,
    /// Sessions of a lower priority.
    Priority,
    /// Sessions of accounts far over their fair share.
    Fairshare,
}

impl PreemptionMode {
    pub fn as_str(self) -> &'static str {
        match self {
            PreemptionMode::Off => "off",
            PreemptionMode::Priority => "priority",
            PreemptionMode::Fairshare => "fairshare",
        }
    }
}

/// The default grace between SIGTERM and the end.
pub const DEFAULT_GRACE_SECS: u64 = 60;

/// A resource group's preemption settings (stored as JSON; `{}` is off).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct PreemptionPolicy {
    pub mode: PreemptionMode,
    /// Seconds between SIGTERM and SIGKILL for a preempted session.
    pub grace_secs: u64,
    /// Seconds a session runs at least before it may be preempted.
    pub min_runtime_secs: u64,
    /// Interactive sessions may be preempted too (batch sessions always may; a model
    /// service's replicas never are).
    pub interactive: bool,
}

impl Default for PreemptionPolicy {
    fn default() -> PreemptionPolicy {
        PreemptionPolicy {
            mode: PreemptionMode::Off,
            grace_secs: DEFAULT_GRACE_SECS,
            min_runtime_secs: 0,
            interactive: false,
        }
    }
}

impl PreemptionPolicy {
    /// `priority, grace 60s, minimum run time 0s, batch sessions only`.
    pub fn summary(&self) -> String {
        if self.mode == PreemptionMode::Off {
            return "off".into();
        }
        format!(
            "{}, grace {}s, minimum run time {}s, {}",
            self.mode.as_str(),
            self.grace_secs,
            self.min_runtime_secs,
            if self.interactive {
                "batch and interactive sessions"
            } else {
                "batch sessions only"
            }
        )
    }

    /// Whether a session of `kind` may be preempted under this policy.
    pub fn covers(&self, kind: crate::status::SessionType) -> bool {
        use crate::status::SessionType as T;
        self.mode != PreemptionMode::Off
            && match kind {
                T::Batch => true,
                T::Interactive => self.interactive,
                T::Inference | T::System => false,
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::SessionType as T;

    #[test]
    fn an_empty_policy_is_off_and_reads_back() {
        let p: PreemptionPolicy = serde_json::from_str("{}").unwrap();
        assert_eq!(p, PreemptionPolicy::default());
        assert!(!p.covers(T::Batch));
        let on = PreemptionPolicy {
            mode: PreemptionMode::Priority,
            ..Default::default()
        };
        let text = serde_json::to_string(&on).unwrap();
        assert!(text.contains("\"priority\""), "{text}");
        assert_eq!(serde_json::from_str::<PreemptionPolicy>(&text).unwrap(), on);
    }

    #[test]
    fn batch_always_interactive_if_asked_inference_never() {
        let mut p = PreemptionPolicy {
            mode: PreemptionMode::Fairshare,
            ..Default::default()
        };
        assert!(p.covers(T::Batch));
        assert!(!p.covers(T::Interactive));
        p.interactive = true;
        assert!(p.covers(T::Interactive));
        assert!(!p.covers(T::Inference));
    }
}

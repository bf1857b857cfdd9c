//! Validators: may this session be placed now at all, whatever the agents have free?
//!
//! Each validator is one recorded sub-step. A failure is either "not yet" (the session keeps
//! waiting, NEED_RETRY) or "never" (it cannot ever run and is cancelled).

use crate::types::{DepState, Limits, OwnerUsage, Workload};
use bai_core::resources::{ResourceSlots, format_bytes, format_cpu};
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use uuid::Uuid;

/// Why a validator refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
    /// True when waiting cannot help (a dependency failed).
    pub fatal: bool,
}

impl Refusal {
    fn wait(code: &'static str, message: String) -> Refusal {
        Refusal {
            code,
            message,
            fatal: false,
        }
    }
}

/// What validators may look at.
pub struct Context<'a> {
    pub now: DateTime<Utc>,
    pub usage: &'a HashMap<String, OwnerUsage>,
    pub limits: &'a HashMap<String, Limits>,
    pub dependencies: &'a HashMap<Uuid, DepState>,
}

pub trait Validator {
    /// The sub-step name.
    fn name(&self) -> &'static str;
    fn check(&self, w: &Workload, cx: &Context<'_>) -> Result<String, Refusal>;
}

/// A batch session never starts before its `starts_at`.
pub struct StartTime;

impl Validator for StartTime {
    fn name(&self) -> &'static str {
        "start_time"
    }
    fn check(&self, w: &Workload, cx: &Context<'_>) -> Result<String, Refusal> {
        match w.starts_at {
            Some(t) if t > cx.now => Err(Refusal::wait(
                "starts-at-not-reached",
                format!("waits for its start time {}", t.to_rfc3339()),
            )),
            _ => Ok("no start time pending".into()),
        }
    }
}

/// Every dependency must have ended with result SUCCESS.
pub struct Dependencies;

impl Validator for Dependencies {
    fn name(&self) -> &'static str {
        "dependencies"
    }
    fn check(&self, w: &Workload, cx: &Context<'_>) -> Result<String, Refusal> {
        let mut waiting = 0;
        for d in &w.dependencies {
            match cx.dependencies.get(d).copied().unwrap_or(DepState::Missing) {
                DepState::Succeeded => {}
                DepState::Unfinished => waiting += 1,
                DepState::Failed => {
                    return Err(Refusal {
                        code: "dependency-failed",
                        message: format!("dependency {d} did not end successfully"),
                        fatal: true,
                    });
                }
                DepState::Missing => {
                    return Err(Refusal {
                        code: "dependency-failed",
                        message: format!("dependency {d} does not exist"),
                        fatal: true,
                    });
                }
            }
        }
        if waiting > 0 {
            return Err(Refusal::wait(
                "dependency-not-finished",
                format!(
                    "waits for {waiting} of {} dependencies to finish successfully",
                    w.dependencies.len()
                ),
            ));
        }
        Ok(format!("{} dependencies finished", w.dependencies.len()))
    }
}

/// The owner's keypair resource policy: concurrent sessions and total slots.
pub struct ResourcePolicy;

impl Validator for ResourcePolicy {
    fn name(&self) -> &'static str {
        "resource_policy"
    }
    fn check(&self, w: &Workload, cx: &Context<'_>) -> Result<String, Refusal> {
        let Some(limits) = cx.limits.get(&w.owner) else {
            return Ok("no limits".into());
        };
        let zero = OwnerUsage::default();
        let usage = cx.usage.get(&w.owner).unwrap_or(&zero);
        let mut problems = Vec::new();
        let mut code = "";
        if let Some(max) = limits.max_concurrent_sessions
            && usage.sessions >= max
        {
            code = "concurrency-limit";
            problems.push(format!(
                "{} of at most {max} concurrent sessions are running",
                usage.sessions
            ));
        }
        if let Some(total) = &limits.total_slots {
            let over = over_quota(&usage.slots.add(&w.slots), total);
            if !over.is_empty() {
                if code.is_empty() {
                    code = "resource-quota";
                }
                problems.push(format!(
                    "would exceed the keypair quota of {}",
                    over.join(", ")
                ));
            }
        }
        if problems.is_empty() {
            Ok("within the keypair resource policy".into())
        } else {
            Err(Refusal::wait(code, problems.join("; ")))
        }
    }
}

/// The slots of `total` (only those it limits) that `want` exceeds, in words.
fn over_quota(want: &ResourceSlots, total: &ResourceSlots) -> Vec<String> {
    let mut out = Vec::new();
    if total.cpu_milli > 0 && want.cpu_milli > total.cpu_milli {
        out.push(format!("cpu {}", format_cpu(total.cpu_milli)));
    }
    if total.mem > 0 && want.mem > total.mem {
        out.push(format!("memory {}", format_bytes(total.mem)));
    }
    for (k, v) in &total.accel {
        if want.accel.get(k).copied().unwrap_or(0) > *v {
            out.push(format!("{k} {}", format_cpu(*v)));
        }
    }
    out
}

/// The validators, in the order they run.
pub fn all() -> [&'static dyn Validator; 3] {
    [&StartTime, &Dependencies, &ResourcePolicy]
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    fn w() -> Workload {
        Workload {
            id: Uuid::new_v4(),
            owner: "ak".into(),
            priority: 10,
            enqueued_at: Utc::now(),
            slots: ResourceSlots {
                cpu_milli: 1000,
                mem: 1 << 30,
                accel: Default::default(),
            },
            kernels: 1,
            starts_at: None,
            designated_agent: None,
            eligible: None,
            dependencies: vec![],
            account: None,
            max_runtime: None,
        }
    }

    #[test]
    fn start_time_waits_until_reached() {
        let now = Utc::now();
        let (u, l, d) = (HashMap::new(), HashMap::new(), HashMap::new());
        let cx = Context {
            now,
            usage: &u,
            limits: &l,
            dependencies: &d,
        };
        let mut x = w();
        x.starts_at = Some(now + Duration::seconds(5));
        assert_eq!(
            StartTime.check(&x, &cx).unwrap_err().code,
            "starts-at-not-reached"
        );
        x.starts_at = Some(now - Duration::seconds(1));
        assert!(StartTime.check(&x, &cx).is_ok());
    }

    #[test]
    fn dependencies_wait_or_fail() {
        let (u, l) = (HashMap::new(), HashMap::new());
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let mut d = HashMap::from([(a, DepState::Succeeded), (b, DepState::Unfinished)]);
        let mut x = w();
        x.dependencies = vec![a, b];
        let r = Dependencies.check(
            &x,
            &Context {
                now: Utc::now(),
                usage: &u,
                limits: &l,
                dependencies: &d,
            },
        );
        let e = r.unwrap_err();
        assert_eq!((e.code, e.fatal), ("dependency-not-finished", false));
        d.insert(b, DepState::Failed);
        let e = Dependencies
            .check(
                &x,
                &Context {
                    now: Utc::now(),
                    usage: &u,
                    limits: &l,
                    dependencies: &d,
                },
            )
            .unwrap_err();
        assert_eq!((e.code, e.fatal), ("dependency-failed", true));
    }

    #[test]
    fn policy_counts_sessions_and_slots() {
        let d = HashMap::new();
        let l = HashMap::from([(
            "ak".to_string(),
            Limits {
                max_concurrent_sessions: Some(2),
                total_slots: Some(ResourceSlots {
                    cpu_milli: 4000,
                    mem: 0,
                    accel: Default::default(),
                }),
            },
        )]);
        let mut u = HashMap::from([(
            "ak".to_string(),
            OwnerUsage {
                sessions: 1,
                slots: ResourceSlots {
                    cpu_milli: 3500,
                    mem: 8 << 30,
                    accel: Default::default(),
                },
            },
        )]);
        let cx = |u: &HashMap<String, OwnerUsage>| {
            ResourcePolicy.check(
                &w(),
                &Context {
                    now: Utc::now(),
                    usage: u,
                    limits: &l,
                    dependencies: &d,
                },
            )
        };
        let e = cx(&u).unwrap_err();
        assert_eq!(e.code, "resource-quota");
        assert!(e.message.contains("cpu 4"), "{}", e.message);
        if let Some(x) = u.get_mut("ak") {
            x.slots.cpu_milli = 1000;
        }
        assert!(cx(&u).is_ok());
        if let Some(x) = u.get_mut("ak") {
            x.sessions = 2;
        }
        assert_eq!(cx(&u).unwrap_err().code, "concurrency-limit");
    }
}

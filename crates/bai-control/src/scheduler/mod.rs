//! The scheduler loop: woken by events (a session enqueued, resources freed) and by a
//! periodic safety tick. Each pass runs, per resource group, the pipeline of `bai_sched`
//! (validators → sequencer → agent selector → allocation), commits the whole pass in one
//! transaction (every placement a PENDING → SCHEDULED compare-and-set), hands each placed
//! session to the launcher, and keeps for every waiting session the answer to "why is it
//! still PENDING" ([`PendingInfo`]).

mod ctx;
pub mod eligible;
pub mod fairshare;
pub mod snapshot;
mod time;

pub use ctx::Scheduler;

use crate::lifecycle::launch;
use bai_core::pending::PendingInfo;
use bai_sched::{Decision, Outcome};
use bai_store::{PassEntry, PassWrite};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// Runs the scheduler loop forever.
pub fn spawn(scheduler: Arc<Scheduler>) {
    tokio::spawn(async move {
        let tick = Duration::from_millis(scheduler.config.schedule_tick_ms);
        let charge_every = fairshare::charge_interval();
        let mut charged: Option<std::time::Instant> = None;
        loop {
            let started = std::time::Instant::now();
            if charged.is_none_or(|t| t.elapsed() >= charge_every) {
                charged = Some(started);
                match fairshare::charge(&scheduler.store, chrono::Utc::now()) {
                    Ok(n) => tracing::debug!(accounts = n, "fair-share usage charged"),
                    Err(e) => tracing::warn!(error = %e, "charging fair-share usage failed"),
                }
            }
            if let Err(e) = schedule_pass(&scheduler) {
                tracing::error!(error = %e, "scheduling pass failed");
            }
            scheduler
                .metrics
                .scheduler_pass(started.elapsed().as_secs_f64());
            // Explicit requeue: the next pass runs on a wake-up or after `tick`.
            let _ = tokio::time::timeout(tick, scheduler.bus.scheduler_woken()).await;
        }
    });
}

/// What one pass did (for tests and logs).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PassOutcome {
    pub scheduled: usize,
    pub waiting: usize,
    pub cancelled: usize,
    /// Running sessions marked PREEMPTED.
    pub preempted: usize,
}

fn steps_json(d: &Decision) -> String {
    serde_json::to_string(&d.steps).unwrap_or_else(|_| "[]".into())
}

/// Turns a decision into what the store writes.
fn to_write(d: &Decision) -> PassWrite {
    match &d.outcome {
        Outcome::Placed { agent, subs } => PassWrite::Placed {
            agent: agent.clone(),
            subs: subs.clone(),
        },
        Outcome::Wait { code, message } => PassWrite::Wait {
            code: code.to_string(),
            info: format!("{code}: {message}"),
            message: message.clone(),
        },
        Outcome::Held { message, .. } => PassWrite::Held {
            info: format!("held-for-head-of-line: {message}"),
            message: message.clone(),
        },
        Outcome::Failed { code, message } => PassWrite::GiveUp {
            code: code.to_string(),
            message: message.clone(),
        },
    }
}

pub fn schedule_pass(scheduler: &Arc<Scheduler>) -> anyhow::Result<PassOutcome> {
    let mut out = PassOutcome::default();
    let groups = bai_ground::metrics::timed(&scheduler.metrics, "snapshot", || {
        snapshot::build(scheduler)
    })?;
    let now = chrono::Utc::now();
    let mut views: HashMap<Uuid, PendingInfo> = HashMap::new();
    for g in groups {
        let mut entries = Vec::new();
        // A session PENDING longer than its group allows is given up first.
        let timeout = g.row.pending_timeout_secs;
        let mut snap = g.snapshot;
        if timeout > 0 {
            snap.pending.retain(|w| {
                let waited = (now - w.enqueued_at).num_seconds();
                if waited < timeout {
                    return true;
                }
                entries.push(PassEntry {
                    id: w.id,
                    write: PassWrite::Expire {
                        code: "pending-timeout".into(),
                        message: format!(
                            "waited {waited}s, longer than the {timeout}s resource group {} allows",
                            g.row.name
                        ),
                    },
                    sub_steps: "[]".into(),
                });
                false
            });
        }
        let plan = {
            let mut states = scheduler
                .sched_state
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let state = states.entry(g.row.name.clone()).or_default();
            bai_sched::schedule(&g.config, &snap, state)
        };
        let queue_length = plan.decisions.len();
        for d in &plan.decisions {
            let write = to_write(d);
            let why = match &d.outcome {
                Outcome::Wait { code, message } | Outcome::Failed { code, message } => {
                    Some((*code, message))
                }
                Outcome::Held { message, .. } => Some(("held-for-head-of-line", message)),
                Outcome::Placed { .. } => None,
            };
            if let Some((code, message)) = why {
                // Under fair share the reason names the priority and its factors.
                let reason = match &d.factors {
                    Some(f) => format!("{message} (fairshare {})", f.describe()),
                    None => message.clone(),
                };
                views.insert(
                    d.id,
                    PendingInfo {
                        reason,
                        code: code.to_string(),
                        queue_position: d.position as u64,
                        queue_length: queue_length as u64,
                        resource_group: g.row.name.clone(),
                        short_of: d
                            .shortage
                            .as_ref()
                            .map(|s| {
                                s.short
                                    .iter()
                                    .map(|(r, n)| (r.clone(), *n as u64))
                                    .collect()
                            })
                            .unwrap_or_default(),
                        agents_considered: d.shortage.as_ref().map_or(0, |s| s.agents as u64),
                        estimated_start: d.estimated_start.map(|t| t.to_rfc3339()),
                        updated_at: now.to_rfc3339(),
                    },
                );
            }
            // Unchanged waits are not rewritten every tick: only when the reason changed or
            // the history record is due for its attempt count (at most every 10 s).
            if let PassWrite::Wait { info, .. } | PassWrite::Held { info, .. } = &write
                && let Some(stored) = g.status_info.get(&d.id)
                && stored.as_deref() == Some(info.as_str())
                && !scheduler.history_due(d.id)
            {
                out.waiting += 1;
                continue;
            }
            entries.push(PassEntry {
                id: d.id,
                write,
                sub_steps: steps_json(d),
            });
        }
        // `ARMED` is a constant: builds without fault points do not look at the entries.
        if bai_fault::ARMED
            && entries
                .iter()
                .any(|e| matches!(e.write, PassWrite::Placed { .. }))
        {
            // The pass decided to place sessions and has written nothing (test builds only).
            bai_fault::point("pass:before-apply");
        }
        let result = bai_ground::metrics::timed(&scheduler.metrics, "apply_pass", || {
            scheduler.store.apply_pass(&entries)
        })?;
        if bai_fault::ARMED && !result.placed.is_empty() {
            // Sessions are SCHEDULED, none of their launches has begun (test builds only).
            bai_fault::point("pass:after-apply");
        }
        for (id, ev) in result.placed {
            scheduler.bus.publish(vec![ev]);
            out.scheduled += 1;
            if scheduler.config.launch_disabled {
                continue;
            }
            match scheduler.store.session(id)? {
                Some(row) => launch::spawn(scheduler.lifecycle.clone(), row),
                None => tracing::error!(session = %id, "a placed session vanished"),
            }
        }
        for (_, events) in result.cancelled {
            scheduler.bus.publish(events);
            out.cancelled += 1;
        }
        // Victims for the head of the queue: marked together (or not at all), then their
        // grace runs in tasks of their own.
        let grace = g.config.preemption.grace.to_std().unwrap_or_default();
        for p in &plan.preemptions {
            match crate::lifecycle::preempt::begin(
                &scheduler.lifecycle,
                p.preemptor,
                &p.victims,
                &p.why,
                grace,
            ) {
                Ok(true) => out.preempted += p.victims.len(),
                Ok(false) => {
                    tracing::debug!(preemptor = %p.preemptor, "the victims changed meanwhile; the next pass plans again")
                }
                Err(e) => {
                    tracing::warn!(preemptor = %p.preemptor, error = %e, "cannot mark the victims of a preemption")
                }
            }
        }
        out.waiting += entries
            .iter()
            .filter(|e| matches!(e.write, PassWrite::Wait { .. } | PassWrite::Held { .. }))
            .count();
    }
    *scheduler
        .pending_views
        .lock()
        .unwrap_or_else(|p| p.into_inner()) = views;
    Ok(out)
}

//! The scheduler: woken by events (a session enqueued, resources freed) and by a periodic
//! safety tick. One pass per wake-up runs the pipeline
//! validators → sequencer → agent selector → allocation (committed atomically as the
//! PENDING → SCHEDULED compare-and-set), then hands each placed session to the launcher.
//!
//! Head-of-line rule: a session that does not fit now is skipped for this pass (it keeps
//! its queue position and its reason), so it never blocks smaller sessions behind it.

pub mod select;
pub mod sequence;
pub mod validate;

use crate::lifecycle::{Change, launch, transition};
use crate::state::Manager;
use bai_core::event::EventKind;
use bai_core::history::HistoryResult;
use bai_core::resources::ResourceSlots;
use bai_core::status::SessionStatus as S;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// Runs the scheduler loop forever.
pub fn spawn(m: Arc<Manager>) {
    tokio::spawn(async move {
        let tick = Duration::from_millis(m.config.schedule_tick_ms);
        loop {
            if let Err(e) = schedule_pass(&m) {
                tracing::error!(error = %e, "scheduling pass failed");
            }
            // Explicit requeue: the next pass runs on a wake-up or after `tick`.
            let _ = tokio::time::timeout(tick, m.wake_scheduler.notified()).await;
        }
    });
}

/// What one pass did (for tests and logs).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PassOutcome {
    pub scheduled: usize,
    pub waiting: usize,
}

pub fn schedule_pass(m: &Arc<Manager>) -> anyhow::Result<PassOutcome> {
    let pending = m.store.sessions_in(&[S::Pending])?;
    let mut out = PassOutcome::default();
    if pending.is_empty() {
        return Ok(out);
    }
    let occupying: Vec<S> = S::ALL
        .into_iter()
        .filter(|s| s.occupies_resources())
        .collect();
    let mut used: HashMap<String, ResourceSlots> = HashMap::new();
    for r in m.store.sessions_in(&occupying)? {
        if let Some(a) = r.agent_id.clone() {
            let e = used.entry(a).or_default();
            *e = e.add(&r.requested_slots);
        }
    }
    let mut agents: Vec<select::AgentView> = m
        .agents()
        .iter()
        .map(|a| {
            let info = a.info();
            let free = info
                .capacity
                .checked_sub(used.get(&a.id).unwrap_or(&ResourceSlots::default()));
            select::AgentView {
                id: a.id.clone(),
                scaling_group: info.scaling_group,
                capacity: info.capacity,
                free,
            }
        })
        .collect();
    let now = chrono::Utc::now();
    for row in sequence::fifo(pending) {
        if let Err(why) = validate::check(&row, now) {
            m.store.set_status_info(row.id, &why.info)?;
            m.store.add_history(
                row.id,
                "schedule",
                HistoryResult::Skipped,
                Some(why.code),
                &why.info,
            )?;
            out.waiting += 1;
            continue;
        }
        let Some(idx) = select::dispersed(&agents, &row.scaling_group, &row.requested_slots) else {
            let why = select::explain_shortage(&agents, &row.scaling_group, &row.requested_slots);
            m.store
                .set_status_info(row.id, &format!("no-available-instances: {why}"))?;
            m.store.add_history(
                row.id,
                "schedule",
                HistoryResult::NeedRetry,
                Some("no-available-instances"),
                &why,
            )?;
            out.waiting += 1;
            continue;
        };
        let agent_id = agents[idx].id.clone();
        let info = format!("scheduled on {agent_id}");
        let change = Change::new(S::Pending, S::Scheduled, &info, "schedule")
            .events(&[EventKind::SessionScheduled])
            .agent(&agent_id);
        if let Some(row) = transition(m, row.id, change)? {
            agents[idx].free = agents[idx].free.checked_sub(&row.requested_slots);
            out.scheduled += 1;
            launch::spawn(m.clone(), row);
        }
    }
    Ok(out)
}

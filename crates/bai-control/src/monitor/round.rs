//! The monitor's round: every interval it reads each running session's counters from its
//! agent, asks the idle checkers about each session, and terminates the ones found idle.

use super::ctx::Monitor;
use crate::lifecycle::terminate::terminate;
use bai_core::stats::now_ms;
use bai_core::status::{SessionResult, SessionStatus as S};
use bai_ground::stats::view::{forget_ended, judge, running_since};
use std::collections::HashMap;
use std::sync::Arc;

/// One round: read every running session's counters, then judge each.
pub async fn round(monitor: &Arc<Monitor>) {
    let Ok(rows) = monitor.readings.store.sessions_in(&[S::Running]) else {
        return;
    };
    let readings = futures::future::join_all(rows.iter().map(|row| {
        let agent = row
            .state
            .agent_id
            .as_deref()
            .and_then(|a| monitor.agents.get(a));
        let kernel = row.main_kernel_id;
        async move {
            match agent {
                Some(a) => a.rpc.kernel_stats(kernel).await.ok(),
                None => None,
            }
        }
    }))
    .await;
    for (row, reading) in rows.iter().zip(readings) {
        if let Some(r) = reading {
            monitor
                .readings
                .stats
                .record(row.id, &row.spec.requested_slots, r);
        }
    }
    forget_ended(&monitor.readings, &rows);
    let now = now_ms();
    let mut policies: HashMap<String, bai_store::PolicyRow> = HashMap::new();
    for row in &rows {
        let Some(since) = running_since(row) else {
            continue;
        };
        let policy = policies
            .entry(row.spec.access_key.clone())
            .or_insert_with(|| {
                monitor
                    .readings
                    .store
                    .policy_of(&row.spec.access_key)
                    .unwrap_or_default()
            })
            .clone();
        let Some(verdict) = judge(&monitor.readings, row, since, &policy, now)
            .into_iter()
            .find(|r| r.idle)
        else {
            continue;
        };
        // The readings took a while: the session may be ending already.
        if !matches!(monitor.readings.store.session(row.id), Ok(Some(r)) if r.state.status == S::Running)
        {
            continue;
        }
        let reason = verdict.checker.reason();
        tracing::info!(session = %row.id, name = %row.name, checker = verdict.checker.as_str(), %reason, "idle checker ends a session");
        let monitor = monitor.clone();
        let id = row.id;
        tokio::spawn(async move {
            if let Err(e) = terminate(&monitor.lifecycle, id, reason, SessionResult::Failure).await
            {
                tracing::error!(session = %id, error = %e, "idle termination failed");
            }
        });
    }
}

/// Runs [`round`] every interval, for good.
pub fn spawn(monitor: Arc<Monitor>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(monitor.readings.config.interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            round(&monitor).await;
        }
    });
}

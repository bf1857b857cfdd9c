//! The autoscaler: every second, for each live service with rules, reads its metrics (the
//! endpoint's requests, or the replicas' kernels), asks its rules
//! (`bai_core::serving::autoscale::decide`) by priority, applies the first change and
//! records every firing with its inputs.
//!
//! Metrics, per replica (healthy routes):
//! * `INFERENCE_FRAMEWORK` (the endpoint's own): `inflight` (requests in flight, averaged
//!   over the last 10 s), `requests_per_second` and `latency_ms` (mean) over the same window;
//! * `KERNEL`: `cpu_util` and `mem`, percent of what each replica was given, from the last
//!   resource reading of each replica's session, averaged.

pub mod input;
pub mod memory;
pub mod metrics;

use super::route_status as rs;
use crate::state::Serving;
use bai_core::serving::autoscale::{self, Decision, Inputs, MetricSource, Rule};
use bai_store::EndpointRow;
use memory::{Reading, lock};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Starts the autoscaler.
pub fn spawn(serving: Arc<Serving>) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if let Err(e) = round(&serving) {
                tracing::error!(error = %e, "autoscaling round failed");
            }
        }
    });
}

/// One round over every live service.
pub fn round(serving: &Serving) -> Result<(), bai_store::StoreError> {
    for e in serving.store.live_endpoints(None)? {
        if e.state.lifecycle != "created" {
            continue;
        }
        let rows = serving.store.rules_of(e.id)?;
        if rows.is_empty() {
            continue;
        }
        let mut rules: Vec<Rule> = rows
            .iter()
            .filter_map(|r| input::from_row(r).ok())
            .collect();
        metrics::by_priority(&mut rules);
        service(serving, &e, &rules)?;
    }
    Ok(())
}

fn service(
    serving: &Serving,
    e: &EndpointRow,
    rules: &[Rule],
) -> Result<(), bai_store::StoreError> {
    let st = &serving.autoscale;
    let now = st.started.elapsed().as_secs_f64();
    let routes = serving.store.routes_of(e.id)?;
    let healthy: Vec<_> = routes.iter().filter(|r| r.status == rs::HEALTHY).collect();
    // The endpoint's counters now, and the window behind them.
    let window: Vec<Reading> = {
        let mut all = lock(&st.readings);
        let w = all.entry(e.id).or_default();
        if let Some(g) = serving.existing_gateway(e.id) {
            let mut reading = Reading {
                at: now,
                inflight: 0,
                requests: 0,
                latency_us: 0,
            };
            for r in &routes {
                let c = g.counters(r.id);
                reading.inflight += c.inflight.load(Ordering::Relaxed) as u64;
                reading.requests += c.requests.load(Ordering::Relaxed);
                reading.latency_us += c.latency_us.load(Ordering::Relaxed);
            }
            w.push_back(reading);
        }
        metrics::trim(w, now);
        w.iter().copied().collect()
    };
    let metric = |source: MetricSource, name: &str| -> Option<f64> {
        if healthy.is_empty() {
            return None;
        }
        match source {
            MetricSource::InferenceFramework => metrics::framework(name, &window, healthy.len()),
            MetricSource::Kernel => {
                let values: Vec<f64> = healthy
                    .iter()
                    .filter_map(|r| r.session_id)
                    .filter_map(|s| serving.readings.stats.samples(s).last().cloned())
                    .map(|x| if name == "mem" { x.mem } else { x.cpu_util })
                    .collect();
                metrics::mean(&values)
            }
        }
    };
    let now_utc = chrono::Utc::now();
    let service_changed = lock(&st.changed).get(&e.id).copied();
    for rule in rules {
        let last = metrics::last_change(rule, service_changed);
        let inputs = Inputs {
            replicas: e.spec.replicas,
            value: metric(rule.metric_source, &rule.metric_name),
            since_last_change: last.map(|t| (now_utc - t).num_milliseconds() as f64 / 1000.0),
        };
        let decision = {
            let mut memories = lock(&st.memories);
            autoscale::decide(rule, inputs, memories.entry(rule.id).or_default(), now)
        };
        let Some(d) = decision else {
            lock(&st.notes).remove(&rule.id);
            continue;
        };
        record(serving, e, &d, &now_utc)?;
        if d.applied {
            apply(serving, e, &d, &now_utc)?;
            break;
        }
    }
    Ok(())
}

/// Records a firing (a repeated firing that changes nothing only once).
fn record(
    serving: &Serving,
    e: &EndpointRow,
    d: &Decision,
    at: &chrono::DateTime<chrono::Utc>,
) -> Result<(), bai_store::StoreError> {
    let key = format!(
        "{}:{}",
        d.to_replicas,
        d.note.split(';').next_back().unwrap_or("")
    );
    if !d.applied {
        let mut notes = lock(&serving.autoscale.notes);
        if notes.get(&d.rule_id) == Some(&key) {
            return Ok(());
        }
        notes.insert(d.rule_id, key);
    } else {
        lock(&serving.autoscale.notes).remove(&d.rule_id);
    }
    let text = serde_json::to_string(d).unwrap_or_default();
    serving.store.insert_decision(
        e.id,
        &at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        &text,
    )?;
    Ok(())
}

fn apply(
    serving: &Serving,
    e: &EndpointRow,
    d: &Decision,
    at: &chrono::DateTime<chrono::Utc>,
) -> Result<(), bai_store::StoreError> {
    if !serving.store.set_endpoint_replicas(e.id, d.to_replicas)? {
        return Ok(());
    }
    serving.store.set_rule_triggered(
        d.rule_id,
        &at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
    )?;
    lock(&serving.autoscale.changed).insert(e.id, *at);
    tracing::info!(
        service = %e.id, rule = %d.rule_id, from = d.from_replicas, to = d.to_replicas,
        note = %d.note, "autoscaled"
    );
    serving.wake.notify_one();
    Ok(())
}

//! Model serving: services (Backend.AI's endpoints) of inference sessions behind one
//! persistent URL each.
//!
//! * [`definition`]: `model-definition.yaml` of a model folder, and the replica's command;
//! * [`create`]: validating `POST /services` and storing the service;
//! * [`replica`]: one route's inference session;
//! * [`probe`]: a running route's health checks (readiness and liveness);
//! * [`reconcile`]: desired replicas against live routes, always (recovery, scaling, retries,
//!   taking a service down);
//! * [`gateway`]: the endpoint proxy (tokens, balancing, retry, counters);
//! * [`token`]: the services' HS256 tokens;
//! * [`autoscale`]: rules (Backend.AI's thresholds and target tracking) and their decisions;
//! * [`view`]: what the API shows.

pub mod autoscale;
pub mod create;
pub mod definition;
pub mod gateway;
pub mod probe;
pub mod reconcile;
pub mod replica;
pub mod token;
pub mod view;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use uuid::Uuid;

/// Routes that failed to start before a service stops making new ones (until it is scaled,
/// its errors are cleared, or a route becomes healthy).
pub const MAX_RETRIES: u32 = 5;

/// Replicas one service may ask for.
pub const MAX_REPLICAS: u32 = 16;

/// Route statuses (Backend.AI's names, lower case as its current API writes them).
pub mod route_status {
    pub const PROVISIONING: &str = "provisioning";
    pub const HEALTHY: &str = "healthy";
    pub const UNHEALTHY: &str = "unhealthy";
    pub const TERMINATING: &str = "terminating";
    pub const FAILED_TO_START: &str = "failed_to_start";

    /// Routes that count as replicas of the service.
    pub fn is_active(s: &str) -> bool {
        matches!(s, PROVISIONING | HEALTHY | UNHEALTHY)
    }
}

/// The serving state kept in memory: each live service's endpoint, each running route's
/// prober, and when a service may next try to start a route after failures.
#[derive(Default)]
pub struct Serving {
    gateways: Mutex<HashMap<Uuid, Arc<gateway::Gateway>>>,
    pub(crate) probers: Mutex<HashMap<Uuid, tokio::task::JoinHandle<()>>>,
    pub(crate) not_before: Mutex<HashMap<Uuid, Instant>>,
    /// Wakes the reconciler (a service changed, a route's session ended).
    pub wake: tokio::sync::Notify,
    /// The autoscaler's memory.
    pub autoscale: autoscale::State,
}

impl Serving {
    /// The endpoint of a service, made on first use.
    pub fn gateway(&self, e: &bai_store::EndpointRow) -> Arc<gateway::Gateway> {
        self.gateways
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(e.id)
            .or_insert_with(|| {
                Arc::new(gateway::Gateway::new(
                    e.id,
                    &e.token_secret,
                    e.open_to_public,
                ))
            })
            .clone()
    }

    pub fn existing_gateway(&self, id: Uuid) -> Option<Arc<gateway::Gateway>> {
        self.gateways
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .cloned()
    }

    /// Forgets a destroyed service's endpoint (it stops listening).
    pub fn drop_gateway(&self, id: Uuid) {
        if let Some(g) = self
            .gateways
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id)
        {
            g.close();
        }
    }

    pub(crate) fn has_prober(&self, route: Uuid) -> bool {
        self.probers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&route)
            .is_some_and(|h| !h.is_finished())
    }

    /// Whether the route has had a task (prober or drain) since it was last stopped.
    pub(crate) fn has_task(&self, route: Uuid) -> bool {
        self.probers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(&route)
    }

    pub(crate) fn stop_prober(&self, route: Uuid) {
        if let Some(h) = self
            .probers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&route)
        {
            h.abort();
        }
    }
}

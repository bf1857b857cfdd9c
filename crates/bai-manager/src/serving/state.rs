//! The serving state kept in memory (beside the store): each live service's endpoint, each
//! route's task (prober or drain), the back-off of services whose routes failed, the
//! reconciler's wake-up and the autoscaler's memory. It names no manager code, so the
//! manager's state can hold it without an import circle.

use super::autoscale::memory::State as AutoscaleState;
use super::gateway;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use uuid::Uuid;

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
    pub autoscale: AutoscaleState,
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

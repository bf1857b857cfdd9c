//! [`Serving`]: what the serving tasks receive (the store, the agents, the bus, the storage
//! hosts of model folders, the monitor's readings for the autoscaler, the lifecycle that
//! starts and ends replicas) and the state they keep in memory beside the store: each live
//! service's endpoint, each route's task (prober or drain), the back-off of services whose
//! routes failed, the reconciler's wake-up and the autoscaler's memory.

use super::autoscale::memory::State as AutoscaleState;
use super::gateway;
use bai_control::lifecycle::Lifecycle;
use bai_ground::agents::Agents;
use bai_ground::bus::Bus;
use bai_ground::config::ManagerConfig;
use bai_ground::stats::readings::Readings;
use bai_ground::storage::Storage;
use bai_store::Store;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use uuid::Uuid;

pub struct Serving {
    pub store: Arc<Store>,
    pub agents: Arc<Agents>,
    pub bus: Arc<Bus>,
    pub config: Arc<ManagerConfig>,
    /// Where model folders live.
    pub storage: Arc<Storage>,
    /// The replicas' resource readings (the autoscaler's kernel metrics).
    pub readings: Arc<Readings>,
    /// Starts and ends the replicas' sessions.
    pub lifecycle: Arc<Lifecycle>,
    gateways: Mutex<HashMap<Uuid, Arc<gateway::Gateway>>>,
    pub(crate) probers: Mutex<HashMap<Uuid, tokio::task::JoinHandle<()>>>,
    pub not_before: Mutex<HashMap<Uuid, Instant>>,
    /// Wakes the reconciler (a service changed, a route's session ended).
    pub wake: tokio::sync::Notify,
    /// The autoscaler's memory.
    pub autoscale: AutoscaleState,
}

impl Serving {
    /// Serving on the lifecycle's ground, with no service live yet.
    pub fn new(lifecycle: Arc<Lifecycle>, readings: Arc<Readings>) -> Serving {
        Serving {
            store: lifecycle.store.clone(),
            agents: lifecycle.agents.clone(),
            bus: lifecycle.bus.clone(),
            config: lifecycle.config.clone(),
            storage: lifecycle.storage.clone(),
            readings,
            lifecycle,
            gateways: Mutex::default(),
            probers: Mutex::default(),
            not_before: Mutex::default(),
            wake: tokio::sync::Notify::new(),
            autoscale: AutoscaleState::default(),
        }
    }

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
                    e.spec.open_to_public,
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

    pub fn stop_prober(&self, route: Uuid) {
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

//! [`Scheduler`]: what the scheduler receives (the store, the agents, the bus, the storage
//! hosts and the registry's images for placement, the lifecycle to launch what it placed) and
//! what it keeps between passes (each group's round-robin state, why each session waits,
//! when an unchanged wait was last written).

use crate::images::registry_view::RegistryView;
use crate::lifecycle::Lifecycle;
use bai_core::pending::PendingInfo;
use bai_ground::agents::Agents;
use bai_ground::bus::Bus;
use bai_ground::config::ManagerConfig;
use bai_ground::metrics::Metrics;
use bai_ground::storage::Storage;
use bai_store::Store;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use uuid::Uuid;

pub struct Scheduler {
    pub store: Arc<Store>,
    pub agents: Arc<Agents>,
    pub bus: Arc<Bus>,
    pub config: Arc<ManagerConfig>,
    pub storage: Arc<Storage>,
    pub registry: Arc<RegistryView>,
    pub metrics: Arc<Metrics>,
    /// Launches what a pass placed.
    pub lifecycle: Arc<Lifecycle>,
    /// Per resource group scheduler state kept between passes (round-robin counter).
    pub sched_state: Mutex<HashMap<String, bai_sched::GroupState>>,
    /// Why each PENDING session waits, as of the last scheduling pass.
    pub pending_views: Mutex<HashMap<Uuid, PendingInfo>>,
    /// When the scheduler last wrote an unchanged wait to a session's history.
    history_marks: Mutex<HashMap<Uuid, Instant>>,
}

impl Scheduler {
    /// A scheduler that launches through `lifecycle` and shares its ground.
    pub fn new(
        lifecycle: Arc<Lifecycle>,
        storage: Arc<Storage>,
        metrics: Arc<Metrics>,
    ) -> Scheduler {
        Scheduler {
            store: lifecycle.store.clone(),
            agents: lifecycle.agents.clone(),
            bus: lifecycle.bus.clone(),
            config: lifecycle.config.clone(),
            registry: lifecycle.registry.clone(),
            storage,
            metrics,
            lifecycle,
            sched_state: Mutex::new(HashMap::new()),
            pending_views: Mutex::new(HashMap::new()),
            history_marks: Mutex::new(HashMap::new()),
        }
    }

    /// Whether an unchanged wait of this session should be recorded again (attempts += 1):
    /// at most every 10 seconds, so a long queue does not rewrite its history every tick.
    pub fn history_due(&self, id: Uuid) -> bool {
        let mut marks = self.history_marks.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        match marks.get(&id) {
            Some(t) if now.duration_since(*t).as_secs() < 10 => false,
            _ => {
                marks.insert(id, now);
                if marks.len() > 100_000 {
                    marks.retain(|_, t| now.duration_since(*t).as_secs() < 60);
                }
                true
            }
        }
    }

    /// Why a PENDING session waits, if the scheduler has looked at it.
    pub fn pending_view(&self, id: Uuid) -> Option<PendingInfo> {
        self.pending_views
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .cloned()
    }
}

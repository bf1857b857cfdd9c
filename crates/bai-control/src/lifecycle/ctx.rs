//! [`Lifecycle`]: what the session lifecycle receives (the store, the agents, the bus, the
//! configuration, the storage hosts, what the registry holds, the monitor's readings) and the
//! state it keeps itself (the launches in flight, exits that came early).

use crate::images::registry_view::RegistryView;
use bai_core::agent::KernelExit;
use bai_ground::agents::Agents;
use bai_ground::bus::Bus;
use bai_ground::config::ManagerConfig;
use bai_ground::stats::readings::Readings;
use bai_ground::storage::Storage;
use bai_store::Store;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use uuid::Uuid;

pub struct Lifecycle {
    pub store: Arc<Store>,
    pub agents: Arc<Agents>,
    pub bus: Arc<Bus>,
    pub config: Arc<ManagerConfig>,
    /// Where data folders live (mounts are bound at launch).
    pub storage: Arc<Storage>,
    /// What the cluster's registry holds (a launch pulls what its agent lacks).
    pub registry: Arc<RegistryView>,
    /// What the monitor read of running sessions (an ending one keeps its last counters).
    pub readings: Arc<Readings>,
    /// Sessions whose launch task is running now (the stuck-session sweeper skips them).
    pub launching: Mutex<HashSet<Uuid>>,
    /// Kernel exits that arrived while their session was still being created.
    pub early_exits: Mutex<HashMap<Uuid, KernelExit>>,
}

impl Lifecycle {
    pub fn new(
        store: Arc<Store>,
        agents: Arc<Agents>,
        bus: Arc<Bus>,
        config: Arc<ManagerConfig>,
        storage: Arc<Storage>,
        registry: Arc<RegistryView>,
        readings: Arc<Readings>,
    ) -> Lifecycle {
        Lifecycle {
            store,
            agents,
            bus,
            config,
            storage,
            registry,
            readings,
            launching: Mutex::new(HashSet::new()),
            early_exits: Mutex::new(HashMap::new()),
        }
    }
}

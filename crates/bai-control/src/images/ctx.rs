//! [`Images`]: what the image tasks receive (the store, the agents that hold images, the
//! background tasks a commit reports through) and keep (the commits in flight, what the
//! cluster's registry holds).

use super::catalogue::Sources;
use super::committing::Commits;
use super::registry_view::RegistryView;
use bai_ground::agents::Agents;
use bai_ground::bgtask::BgTasks;
use bai_ground::config::ManagerConfig;
use bai_store::Store;
use std::sync::Arc;

pub struct Images {
    pub store: Arc<Store>,
    pub agents: Arc<Agents>,
    pub config: Arc<ManagerConfig>,
    /// Commits and conversions are background tasks, followed on `/events/background-task`.
    pub bgtasks: Arc<BgTasks>,
    /// Sessions being committed now.
    pub commits: Commits,
    /// What the cluster's registry holds, as last read (the lifecycle and the scheduler
    /// read it too).
    pub registry: Arc<RegistryView>,
}

impl Images {
    /// Where the catalogue is read from.
    pub fn sources(&self) -> Sources<'_> {
        Sources {
            store: &self.store,
            agents: &self.agents,
            registry: &self.registry,
        }
    }
}

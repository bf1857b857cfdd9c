//! The agents subsystem's ground: the registry of agents the manager reaches (in-process and
//! remote), each an [`AgentHandle`]. A remote agent's link state is its [`slot::AgentSlot`];
//! the tasks that admit, reconnect and age remote agents are in `crate::remote`.

mod handle;
pub mod slot;

pub use handle::AgentHandle;
pub use slot::AgentStatus;

use bai_core::agent::AgentRpc;
use bai_store::Store;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};

/// The agents the manager knows now, by id.
#[derive(Default)]
pub struct Agents {
    list: RwLock<Vec<Arc<AgentHandle>>>,
}

impl Agents {
    /// Every agent, in the order they joined.
    pub fn all(&self) -> Vec<Arc<AgentHandle>> {
        self.list.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn get(&self, id: &str) -> Option<Arc<AgentHandle>> {
        self.list
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|a| a.id == id)
            .cloned()
    }

    /// The agent that holds `row`'s kernel, when it can be reached: 503 at once for a remote
    /// agent whose link is down (rather than a wait on it), 500 for one the manager does not
    /// know any more.
    pub fn holding(
        &self,
        row: &bai_store::SessionRow,
    ) -> Result<Arc<AgentHandle>, bai_core::Problem> {
        let agent = row
            .state
            .agent_id
            .as_deref()
            .and_then(|a| self.get(a))
            .ok_or_else(|| bai_core::Problem::internal("the session's agent is gone"))?;
        if agent.remote.is_some() && !agent.is_alive() {
            return Err(bai_core::Problem::new(
                503,
                "agent-lost",
                "Agent unreachable",
                format!(
                    "the session's agent {} is {}; its apps and files are out of reach until it comes back",
                    agent.id,
                    agent.status().as_str()
                ),
            ));
        }
        Ok(agent)
    }

    /// The accelerator slots the agents offer, each with its quantum.
    pub fn accel_slots(&self) -> Vec<bai_core::accel::AccelSlot> {
        let infos: Vec<_> = self.all().iter().map(|a| a.info()).collect();
        bai_core::accel::AccelSlot::collect(
            infos.iter().flat_map(|i| i.devices.iter()),
            infos.iter().flat_map(|i| i.capacity.accel.keys()),
        )
    }

    /// Adds an in-process agent: asks it who it is, and keeps whether an admin drained it.
    pub async fn register(
        &self,
        store: &Store,
        rpc: Arc<dyn AgentRpc>,
    ) -> Result<Arc<AgentHandle>, bai_core::agent::AgentError> {
        let info = rpc.info().await?;
        let drained = store
            .agent_row(&info.id)
            .ok()
            .flatten()
            .is_some_and(|r| r.drained);
        let handle = Arc::new(AgentHandle {
            id: info.id.clone(),
            rpc,
            info: RwLock::new(info),
            alive: AtomicBool::new(true),
            drained: AtomicBool::new(drained),
            remote: None,
        });
        self.add(handle.clone());
        Ok(handle)
    }

    /// Adds an agent (replacing one of the same id).
    pub fn add(&self, handle: Arc<AgentHandle>) {
        let mut agents = self.list.write().unwrap_or_else(|p| p.into_inner());
        agents.retain(|a| a.id != handle.id);
        agents.push(handle);
    }

    /// Takes an agent out of the registry.
    pub fn remove(&self, id: &str) -> Option<Arc<AgentHandle>> {
        let mut agents = self.list.write().unwrap_or_else(|p| p.into_inner());
        let i = agents.iter().position(|a| a.id == id)?;
        Some(agents.remove(i))
    }
}

//! [`AgentHandle`]: one agent as the manager reaches it (in-process or remote), with what
//! the scheduler needs to know of it (alive, drained, its last reported info).

use super::slot::{AgentSlot, AgentStatus};
use bai_core::agent::{AgentInfo, AgentRpc};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

/// One agent, reached through its RPC interface.
pub struct AgentHandle {
    pub id: String,
    pub rpc: Arc<dyn AgentRpc>,
    pub info: RwLock<AgentInfo>,
    /// False once the agent stopped answering; nothing new is scheduled there.
    pub alive: AtomicBool,
    /// Drained by an admin: no new sessions, running ones stay.
    pub drained: AtomicBool,
    /// A remote agent's link and state (None: inside the manager's process).
    pub remote: Option<Arc<AgentSlot>>,
}

impl AgentHandle {
    pub fn is_alive(&self) -> bool {
        self.status() == AgentStatus::Alive
    }

    pub fn status(&self) -> AgentStatus {
        match &self.remote {
            Some(slot) => slot.status(),
            None if self.alive.load(Ordering::Relaxed) => AgentStatus::Alive,
            None => AgentStatus::Lost,
        }
    }

    pub fn is_drained(&self) -> bool {
        self.drained.load(Ordering::Relaxed)
    }

    /// Whether new sessions may be placed here.
    pub fn schedulable(&self) -> bool {
        self.is_alive() && !self.is_drained() && self.withheld().is_none()
    }

    pub fn info(&self) -> AgentInfo {
        self.info.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// `f` of the image named `image` as this agent reported it last (its labels), without
    /// copying the agent's whole info; `None` when the agent does not have it.
    pub fn with_image<T>(
        &self,
        image: &str,
        f: impl FnOnce(&bai_core::agent::ImageInfo) -> T,
    ) -> Option<T> {
        let info = self.info.read().unwrap_or_else(|p| p.into_inner());
        info.images.iter().find(|i| i.name == image).map(f)
    }

    /// What the agent offers, as it reported it last (`withheld`: why nothing is offered).
    pub fn set_offer(
        &self,
        capacity: bai_core::resources::ResourceSlots,
        size: Option<bai_core::resources::ResourceSlots>,
        withheld: Option<String>,
        kernels_unreachable: bool,
        kernel_most: std::collections::BTreeMap<String, bai_core::agent::KernelMost>,
    ) {
        let mut info = self.info.write().unwrap_or_else(|p| p.into_inner());
        info.capacity = capacity;
        info.size = size;
        info.withheld = withheld;
        info.kernels_unreachable = kernels_unreachable;
        info.kernel_most = kernel_most;
    }

    /// Why the agent offers nothing now (its node is cordoned, say).
    pub fn withheld(&self) -> Option<String> {
        self.info
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .withheld
            .clone()
    }

    /// The agent's kernel images as it reported them last.
    pub fn set_images(&self, images: Vec<bai_core::agent::ImageInfo>) {
        self.info.write().unwrap_or_else(|p| p.into_inner()).images = images;
    }
}

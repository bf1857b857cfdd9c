//! Usage-decayed fair share (Slurm's classic multifactor priority), without I/O.
//!
//! - [`decay`]: weighted resource-seconds and their decay with a half-life (the manager
//!   keeps one accumulator per account and group, updated as kernels run);
//! - [`tree`]: shares down domain → project → user and the fair-share factor
//!   `F = 2^(−effective usage / normalized shares)`;
//! - [`priority`]: fair share, age, size and the session's own priority in one number per
//!   pending session, with the burst penalty; the `fairshare` sequencer tries sessions in
//!   that order.

pub mod decay;
pub mod priority;
pub mod tree;

pub use decay::{SlotWeights, accrue, decay_factor, decayed};
pub use priority::{Factors, PriorityWeights, rank};
pub use tree::{Account, Level, Node, ShareTree, Shares};

use serde::{Deserialize, Serialize};

/// A resource group's fair-share settings (kept as JSON with the group; missing fields take
/// their defaults).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Policy {
    /// Usage counts half after this long (0: it never decays). Default 7 days.
    pub half_life_secs: u64,
    pub weights: SlotWeights,
    pub priority: PriorityWeights,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            half_life_secs: 7 * 86_400,
            weights: SlotWeights::default(),
            priority: PriorityWeights::default(),
        }
    }
}

impl Policy {
    /// Reads the JSON kept with a group (anything unreadable: the defaults).
    pub fn from_json(text: &str) -> Policy {
        serde_json::from_str(text).unwrap_or_default()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".into())
    }
}

/// The fair-share input of one pass over a group: the tree (usage decayed to now) and the
/// group's policy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Input {
    pub tree: std::sync::Arc<ShareTree>,
    pub policy: Policy,
}

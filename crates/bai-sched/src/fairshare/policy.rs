//! A resource group's fair-share settings and the input of one scheduling pass.

use super::decay::SlotWeights;
use super::tree::ShareTree;
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

/// How the factors (each in 0..=1) weigh in the priority number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PriorityWeights {
    pub fairshare: f64,
    pub age: f64,
    pub size: f64,
    /// The session's own priority (0..=100, as given at creation).
    pub priority: f64,
    /// The age at which the age factor reaches 1.
    pub max_age_secs: u64,
    /// How long each earlier pending session of an account is assumed to run (burst penalty;
    /// 0: off).
    pub burst_window_secs: u64,
}

impl Default for PriorityWeights {
    fn default() -> PriorityWeights {
        PriorityWeights {
            fairshare: 10_000.0,
            age: 1_000.0,
            size: 1_000.0,
            priority: 1_000.0,
            max_age_secs: 7 * 86_400,
            burst_window_secs: 3_600,
        }
    }
}

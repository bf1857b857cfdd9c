//! Fair share: the share tree of each resource group with shares, decayed usage and factor
//! (`GET /admin/fairshare`, as Slurm's `sshare` prints it), and the shares administrators set.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One node of a group's tree: a domain, a project in it, or a user in that project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FairShareNode {
    /// `domain`, `project` or `user`.
    pub level: String,
    /// The domain's or project's name, or the user's email (its id when it has none).
    pub name: String,
    /// 1 for a domain, 2 for a project, 3 for a user.
    pub depth: u32,
    /// Shares set by an administrator (1 unless set).
    pub shares: f64,
    /// Its fraction of the whole group's shares (down the tree).
    pub norm_shares: f64,
    /// Decayed weighted resource-seconds.
    pub usage: f64,
    /// Its fraction of the group's usage.
    pub norm_usage: f64,
    /// `norm_shares` times the mean, over the levels down to it where it has siblings, of
    /// its usage fraction among its siblings over its share fraction among them.
    pub effective_usage: f64,
    /// `2^(-effective_usage / norm_shares)`: 1 unused, 0.5 with every level at its share,
    /// lower above it.
    pub factor: f64,
}

/// One resource group's tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FairShareGroup {
    pub resource_group: String,
    /// The group's scheduler (`fairshare` ranks its queue by the factor; the others only
    /// record usage).
    pub scheduler: super::Scheduler,
    /// Usage counts half after this many seconds (0: never decays).
    pub half_life_secs: u64,
    /// What each slot unit weighs per second: `cpu=1,mem=0.1,SLOT=W,...,accel=W`.
    pub weights: String,
    /// The tree depth first, each level's children by name.
    pub nodes: Vec<FairShareNode>,
}

/// `GET /admin/fairshare[?group=G]`: every resource group's tree, or one group's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FairShareReport {
    pub groups: Vec<FairShareGroup>,
}

/// `PUT /admin/fairshare/shares`: sets the shares of a domain, project or user (a user by
/// email), in every resource group; `shares` left out or null resets it to 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FairShareChange {
    /// `domain`, `project` or `user`.
    pub level: String,
    pub name: String,
    #[serde(default)]
    pub shares: Option<f64>,
}

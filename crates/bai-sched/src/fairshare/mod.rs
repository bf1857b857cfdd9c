//! Usage-decayed fair share (Slurm's multifactor priority, with a level-wise fair-share
//! factor), without I/O.
//!
//! - [`decay`]: weighted resource-seconds and their decay with a half-life (the manager
//!   keeps one accumulator per account and group, updated as kernels run);
//! - [`tree`]: shares down domain → project → user and the fair-share factor
//!   `F = 2^(−mean over the levels of usage fraction / share fraction among siblings)`;
//! - [`policy`]: a group's settings (half-life, slot weights, priority weights) and a pass's
//!   input;
//! - [`priority`]: fair share, age, size and the session's own priority in one number per
//!   pending session, with the burst penalty; the `fairshare` sequencer tries sessions in
//!   that order.

pub mod decay;
pub mod policy;
pub mod priority;
pub mod tree;

pub use decay::{SlotWeights, accrue, decay_factor, decayed};
pub use policy::{Input, Policy, PriorityWeights};
pub use priority::{Factors, rank};
pub use tree::{Account, Level, Node, ShareTree, Shares};

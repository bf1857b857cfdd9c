//! The monitor: every interval it reads each running session's resource counters from its
//! agent into the [`bai_ground::stats`] readings, asks the idle checkers of `bai_core::idle` about
//! each session, and terminates the sessions one of them finds idle.
//!
//! `ctx` is what the round receives, `round` the periodic task.

mod ctx;
pub mod round;

pub use ctx::Monitor;

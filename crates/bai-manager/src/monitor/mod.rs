//! The monitor: every interval it reads each running session's resource counters from its
//! agent, keeps a short series of samples per session (the detail panel's charts, the
//! utilization checker's input), asks the idle checkers of `bai_core::idle` about each
//! session, and terminates the sessions one of them finds idle.
//!
//! `book` holds the series (no I/O), `view` turns them into what the API shows and what an
//! ended session keeps, `round` is the periodic task.

pub mod book;
pub mod round;
pub mod view;

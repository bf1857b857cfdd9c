//! The session lifecycle: one verb per module. Every status change goes through
//! [`transition::transition`], which checks the state machine, writes the row, the history
//! record and the events in one transaction, and publishes the events.

pub mod create;
pub mod launch;
pub mod reconcile;
pub mod terminate;
pub mod timeouts;
pub mod transition;
pub mod watch;

pub use transition::{Change, transition};

//! Resource statistics of running sessions: `book` holds each session's short series of
//! samples (no I/O), [`Readings`] is what the manager knows now (the series and the traffic
//! through the app proxies), and `view` turns that into what the API shows, what the idle
//! checkers judge, and what an ended session keeps. The monitor's round (`crate::monitor`)
//! adds the readings; the lifecycle keeps an ending session's last counters.

pub mod book;
pub mod readings;
pub mod view;

pub use readings::Readings;

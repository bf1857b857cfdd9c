//! bai's control plane below its HTTP edge: remote agents' links, the session lifecycle and
//! the scheduler driver, the monitor, images, warm pools and the app proxy's plumbing. It
//! reaches agents only through [`bai_core::agent::AgentRpc`] and keeps state only in
//! `bai-store`.
//!
//! It stands on `bai-ground` (configuration, bus, agent registry, storage, stats, metrics,
//! identity, …), naming it where it uses it (`bai_ground::storage`; nothing is re-exported
//! here), and may import the domain (`bai-core`), the store, the scheduler's pure pipeline
//! (`bai-sched`) and the agent link; never the wire types (`bai-api`), the serving layer or
//! the HTTP edge above it (`bai-serving`, `bai-manager`), which the compiler enforces.
#![forbid(unsafe_code)]

pub mod images;
pub mod lifecycle;
pub mod monitor;
pub mod pools;
pub mod proxy;
pub mod remote;
pub mod scheduler;

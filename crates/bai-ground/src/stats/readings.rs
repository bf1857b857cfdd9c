//! [`Readings`]: what the manager knows of running sessions (the series, the traffic through
//! their proxies) and what it reads that with. The lifecycle holds it too, to keep an ending
//! session's last counters; the API shows it.

use super::book::{MonitorConfig, StatsBook};
use crate::apps::TrafficBook;
use bai_store::Store;
use std::sync::Arc;

pub struct Readings {
    pub store: Arc<Store>,
    /// How often readings are taken, and the utilization checker's settings.
    pub config: MonitorConfig,
    /// Recent resource use of running sessions.
    pub stats: StatsBook,
    /// Bytes through the app proxies per session.
    pub traffic: Arc<TrafficBook>,
    /// Unix milliseconds when this manager started (activity before it is unknown).
    pub started_ms: i64,
}

impl Readings {
    pub fn new(store: Arc<Store>, config: MonitorConfig, traffic: Arc<TrafficBook>) -> Readings {
        Readings {
            store,
            config,
            stats: StatsBook::default(),
            traffic,
            started_ms: bai_core::stats::now_ms(),
        }
    }
}

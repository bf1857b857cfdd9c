//! [`Monitor`]: what the monitor's round receives: the readings it adds to, the agents it
//! reads counters from, and the lifecycle that ends the sessions an idle checker finds idle.

use crate::lifecycle::Lifecycle;
use bai_ground::agents::Agents;
use bai_ground::stats::readings::Readings;
use std::sync::Arc;

pub struct Monitor {
    pub readings: Arc<Readings>,
    pub agents: Arc<Agents>,
    pub lifecycle: Arc<Lifecycle>,
}

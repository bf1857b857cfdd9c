//! The images of the manager's own agents are read again every 30 seconds, so an image built
//! or loaded on this machine while bai runs (`make up` builds `python-ml` in the background)
//! becomes launchable without a restart. Remote agents' lists are read when they connect and
//! after bai's own commits, pulls and purges.

use crate::state::Manager;
use std::sync::Arc;
use std::time::Duration;

const EVERY: Duration = Duration::from_secs(30);

pub fn spawn(m: &Arc<Manager>) {
    let m = m.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(EVERY).await;
            for a in m.agents().into_iter().filter(|a| a.remote.is_none()) {
                let before = a.info().images.len();
                super::refresh_agent(&m, &a.id).await;
                let info = a.info();
                if info.images.len() != before {
                    tracing::info!(agent = %a.id, images = info.images.len(), "the agent's images changed");
                    if let Err(e) = crate::aliases::register(&m.store, &info) {
                        tracing::warn!(agent = %a.id, error = %e, "cannot register image aliases");
                    }
                }
            }
        }
    });
}

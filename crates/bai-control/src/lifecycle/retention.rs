//! How long ended sessions keep their details (`--session-detail-retention`). A site keeps
//! every session it ever ran: past the retention an ended session keeps its row (listed and
//! shown as before: owner, image, resources, times, result) and loses its scheduling history,
//! its events and its logs. Kept for good unless an admin sets a retention.

use bai_store::Store;
use std::sync::Arc;
use std::time::Duration;

/// Drops the details of sessions ended more than `retention` ago (None: kept for good), now
/// and every hour.
pub fn spawn_pruner(store: Arc<Store>, retention: Option<Duration>) {
    let Some(keep) = retention else {
        return;
    };
    bai_ground::hourly::spawn("ended sessions' detail pruning", move || {
        prune(&store, keep)
    });
}

/// One pruning: the details of sessions that ended before now − `keep` go.
pub fn prune(store: &Store, keep: Duration) {
    let Some(before) = bai_store::time_before(keep) else {
        return;
    };
    match store.prune_ended_details(&before) {
        Ok(0) => {}
        Ok(n) => tracing::info!(sessions = n, before = %before, "ended sessions' details pruned"),
        Err(e) => tracing::warn!(error = %e, "could not prune ended sessions' details"),
    }
}

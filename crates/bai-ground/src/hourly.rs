//! The manager's hourly housekeeping (the audit log's and ended sessions' retention): a job
//! run now and every hour, on a blocking thread (a sweep of a long history may take a while).

use std::time::Duration;

/// Runs `job` now and then every hour, for as long as the manager runs.
pub fn spawn(what: &'static str, job: impl Fn() + Send + Sync + 'static) {
    let job = std::sync::Arc::new(job);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(3600));
        loop {
            tick.tick().await;
            let job = job.clone();
            if let Err(e) = tokio::task::spawn_blocking(move || job()).await {
                tracing::warn!(error = %e, job = what, "an hourly job failed");
            }
        }
    });
}

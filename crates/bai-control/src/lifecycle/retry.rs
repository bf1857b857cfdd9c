//! Trying a write again until the store takes it (its disk was full, say): after 0.5 s, then
//! twice as long each time, at most 30 s apart. Used where a lost write would leave a
//! session in a status nobody else moves it out of.

use std::future::Future;
use std::time::Duration;

/// Runs `attempt` in the background until it answers true (done, or nothing left to do).
pub fn until_done<F, Fut>(mut attempt: F)
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: Future<Output = bool> + Send,
{
    tokio::spawn(async move {
        let mut wait = Duration::from_millis(500);
        loop {
            tokio::time::sleep(wait).await;
            if attempt().await {
                return;
            }
            wait = (wait * 2).min(Duration::from_secs(30));
        }
    });
}

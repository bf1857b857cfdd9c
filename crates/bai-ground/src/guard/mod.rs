//! Guards against too much of something: per-keypair request rate limits (Backend.AI's
//! `X-RateLimit-*` contract) and web login throttling after repeated failures.
//! Both are counters kept in memory; the time is passed in so they test without clocks.

pub mod logins;
pub mod rate;

/// Backend.AI's rate limit window: a keypair's `rate_limit` is per this many seconds.
pub const WINDOW_SECS: u64 = 15 * 60;

/// Seconds since the Unix epoch, as the guards count time.
pub fn now_secs() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

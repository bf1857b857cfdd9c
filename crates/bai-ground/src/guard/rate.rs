//! Per-keypair request rate limits: at most `rate_limit` requests in any window of
//! [`super::WINDOW_SECS`], counted as a sliding window (this window's count plus the part of
//! the last window's that still overlaps), so memory is two counters per keypair.

use std::collections::HashMap;
use std::sync::Mutex;

/// The answer for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub allowed: bool,
    pub limit: i64,
    /// Requests left in the window after this one.
    pub remaining: i64,
    /// When refused: seconds until one more request would be let through.
    pub retry_after: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Counter {
    window: u64,
    current: u64,
    previous: u64,
}

/// The counters of every keypair seen.
#[derive(Default)]
pub struct RateLimiter {
    counters: Mutex<HashMap<String, Counter>>,
}

impl RateLimiter {
    /// Counts one request of `key` at `now` (seconds) against `limit`; a refused request is
    /// not counted. A limit of 0 or less means no limit.
    pub fn check(&self, key: &str, limit: i64, now: f64) -> Verdict {
        if limit <= 0 {
            return Verdict {
                allowed: true,
                limit,
                remaining: i64::MAX,
                retry_after: 0,
            };
        }
        let w = super::WINDOW_SECS as f64;
        let window = (now / w).floor().max(0.0) as u64;
        let into = (now - window as f64 * w) / w;
        let mut all = self.counters.lock().unwrap_or_else(|p| p.into_inner());
        if all.len() > 100_000 {
            all.retain(|_, c| c.window + 1 >= window);
        }
        let c = all.entry(key.to_string()).or_default();
        if c.window != window {
            c.previous = if c.window + 1 == window { c.current } else { 0 };
            c.current = 0;
            c.window = window;
        }
        let used = c.previous as f64 * (1.0 - into) + c.current as f64;
        if used + 1.0 > limit as f64 {
            // The overlap of the last window shrinks as time goes on; with none left to
            // shrink, the next window starts afresh only when this one's count leaves too.
            let retry_after = if c.previous > 0 && c.current < limit as u64 {
                let excess = used + 1.0 - limit as f64;
                (excess / c.previous as f64 * w).ceil() as u64
            } else {
                ((1.0 - into) * w).ceil() as u64
            };
            return Verdict {
                allowed: false,
                limit,
                remaining: 0,
                retry_after: retry_after.max(1),
            };
        }
        c.current += 1;
        Verdict {
            allowed: true,
            limit,
            remaining: (limit as f64 - used - 1.0).floor().max(0.0) as i64,
            retry_after: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: f64 = super::super::WINDOW_SECS as f64;

    #[test]
    fn the_limit_is_per_key_and_a_refusal_is_not_counted() {
        let r = RateLimiter::default();
        let t = 10.0 * W;
        for i in 0..3 {
            let v = r.check("AK1", 3, t + i as f64);
            assert!(v.allowed, "request {i}");
            assert_eq!(v.remaining, 2 - i);
        }
        let v = r.check("AK1", 3, t + 4.0);
        assert!(!v.allowed);
        assert_eq!(v.remaining, 0);
        assert!(v.retry_after > 0);
        // Another keypair has its own count.
        assert!(r.check("AK2", 3, t + 4.0).allowed);
    }

    #[test]
    fn the_window_slides_instead_of_resetting_at_its_edge() {
        let r = RateLimiter::default();
        let t = 20.0 * W;
        for _ in 0..10 {
            assert!(r.check("AK", 10, t + W - 1.0).allowed);
        }
        // Just after the edge most of the last window still counts.
        assert!(!r.check("AK", 10, t + W + 1.0).allowed);
        // Half-way through the next window, half of it is left.
        let mut let_through = 0;
        while r.check("AK", 10, t + 1.5 * W).allowed {
            let_through += 1;
        }
        assert_eq!(let_through, 5);
        // Two windows later nothing of it is left.
        assert_eq!(r.check("AK", 10, t + 3.0 * W).remaining, 9);
    }

    #[test]
    fn no_limit_when_the_limit_is_zero() {
        let r = RateLimiter::default();
        for _ in 0..1000 {
            assert!(r.check("AK", 0, 5.0).allowed);
        }
    }
}

//! Web login throttling: after [`MAX_FAILURES`] wrong passwords for one e-mail within
//! [`super::WINDOW_SECS`], further logins of that e-mail are refused (429) until the oldest
//! failure leaves the window, whatever password they give. A successful login clears the
//! count.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Wrong passwords allowed per e-mail per window.
pub const MAX_FAILURES: usize = 5;
/// Refused logins allowed per client address per window (any names, and OpenID callbacks
/// of no login under way): enough for a few people behind one address mistyping.
pub const MAX_CLIENT_FAILURES: usize = 20;

/// Failed logins by e-mail (lower-cased), or by whatever key the caller counts by.
pub struct LoginThrottle {
    failures: Mutex<HashMap<String, VecDeque<f64>>>,
    max: usize,
}

impl Default for LoginThrottle {
    fn default() -> LoginThrottle {
        LoginThrottle::with_max(MAX_FAILURES)
    }
}

impl LoginThrottle {
    /// A throttle that locks a key after `max` failures in the window.
    pub fn with_max(max: usize) -> LoginThrottle {
        LoginThrottle {
            failures: Mutex::default(),
            max: max.max(1),
        }
    }

    fn key(email: &str) -> String {
        email.trim().to_lowercase()
    }

    /// None when `email` may try now; otherwise the seconds to wait.
    pub fn wait(&self, email: &str, now: f64) -> Option<u64> {
        let mut all = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        let q = all.get_mut(&Self::key(email))?;
        let w = super::WINDOW_SECS as f64;
        while q.front().is_some_and(|t| now - t >= w) {
            q.pop_front();
        }
        if q.len() < self.max {
            return None;
        }
        q.front().map(|t| ((t + w - now).ceil() as u64).max(1))
    }

    /// Records a wrong password.
    pub fn failed(&self, email: &str, now: f64) {
        let mut all = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        if all.len() > 100_000 {
            let w = super::WINDOW_SECS as f64;
            all.retain(|_, q| q.back().is_some_and(|t| now - t < w));
        }
        let q = all.entry(Self::key(email)).or_default();
        q.push_back(now);
        while q.len() > self.max {
            q.pop_front();
        }
    }

    /// Forgets the failures of an e-mail that logged in.
    pub fn succeeded(&self, email: &str) {
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&Self::key(email));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: f64 = super::super::WINDOW_SECS as f64;

    #[test]
    fn repeated_failures_lock_the_email_until_the_oldest_leaves_the_window() {
        let t = LoginThrottle::default();
        for i in 0..MAX_FAILURES {
            assert_eq!(t.wait("A@x", 100.0 + i as f64), None);
            t.failed("a@X", 100.0 + i as f64);
        }
        let wait = t.wait("a@x", 110.0).expect("locked");
        assert_eq!(wait, (100.0 + W - 110.0) as u64);
        assert_eq!(t.wait("b@x", 110.0), None, "other e-mails are not locked");
        assert_eq!(t.wait("a@x", 100.0 + W), None, "the oldest failure left");
    }

    #[test]
    fn the_maximum_is_the_throttles() {
        let t = LoginThrottle::with_max(MAX_CLIENT_FAILURES);
        for i in 0..MAX_CLIENT_FAILURES {
            assert_eq!(t.wait("127.0.0.1", i as f64), None);
            t.failed("127.0.0.1", i as f64);
        }
        assert!(t.wait("127.0.0.1", 30.0).is_some());
    }

    #[test]
    fn a_success_clears_the_count() {
        let t = LoginThrottle::default();
        for i in 0..MAX_FAILURES - 1 {
            t.failed("a@x", i as f64);
        }
        t.succeeded("a@x");
        t.failed("a@x", 10.0);
        assert_eq!(t.wait("a@x", 11.0), None);
    }
}

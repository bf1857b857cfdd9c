//! Web login throttling: after [`MAX_FAILURES`] wrong passwords for one e-mail within
//! [`super::WINDOW_SECS`], further logins of that e-mail are refused (429) until the oldest
//! failure leaves the window, whatever password they give. A successful login clears the
//! count.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Wrong passwords allowed per e-mail per window.
pub const MAX_FAILURES: usize = 5;

/// Failed logins by e-mail (lower-cased).
#[derive(Default)]
pub struct LoginThrottle {
    failures: Mutex<HashMap<String, VecDeque<f64>>>,
}

impl LoginThrottle {
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
        if q.len() < MAX_FAILURES {
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
        while q.len() > MAX_FAILURES {
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

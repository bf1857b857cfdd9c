//! The autoscaler's arithmetic, without I/O: the endpoint's metrics per replica from its
//! recent counter readings, a mean of the replicas' kernel readings, the order rules are
//! asked in, and when a rule or its service last changed the count.

use super::memory::Reading;
use bai_core::serving::autoscale::Rule;

/// The window metrics are averaged over, in seconds.
pub const WINDOW_SECS: f64 = 10.0;

/// Drops the readings older than [`WINDOW_SECS`] before `now` from the front of `window`
/// (oldest first).
pub fn trim(window: &mut std::collections::VecDeque<Reading>, now: f64) {
    while window.front().is_some_and(|r| now - r.at > WINDOW_SECS) {
        window.pop_front();
    }
}

/// An `INFERENCE_FRAMEWORK` metric per replica over `window` (oldest first), for `replicas`
/// healthy replicas: `inflight` (the mean of the readings), `requests_per_second` (between
/// the first and the last reading) and `latency_ms` (the mean of the requests between
/// them). `None`: not known yet, or a metric of another name.
pub fn framework(name: &str, window: &[Reading], replicas: usize) -> Option<f64> {
    let n = replicas.max(1) as f64;
    match name {
        "inflight" => {
            let sum: u64 = window.iter().map(|r| r.inflight).sum();
            (!window.is_empty()).then(|| sum as f64 / window.len() as f64 / n)
        }
        "requests_per_second" => {
            let (a, b) = (window.first()?, window.last()?);
            (b.at > a.at)
                .then(|| (b.requests.saturating_sub(a.requests)) as f64 / (b.at - a.at) / n)
        }
        "latency_ms" => {
            let (a, b) = (window.first()?, window.last()?);
            let reqs = b.requests.saturating_sub(a.requests);
            (reqs > 0)
                .then(|| b.latency_us.saturating_sub(a.latency_us) as f64 / reqs as f64 / 1000.0)
        }
        _ => None,
    }
}

/// The mean of the replicas' kernel readings (`None` when there is none).
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Rules in the order they are asked: the highest priority first, then the oldest.
pub fn by_priority(rules: &mut [Rule]) {
    rules.sort_by(|a, b| {
        b.priority
            .cmp(&a.priority)
            .then(a.created_at.cmp(&b.created_at))
    });
}

/// When the count last changed for `rule`: its own last firing or the service's last
/// change by any rule, whichever is later.
pub fn last_change(
    rule: &Rule,
    service_changed: Option<chrono::DateTime<chrono::Utc>>,
) -> Option<chrono::DateTime<chrono::Utc>> {
    let rule_changed = rule
        .last_triggered_at
        .as_deref()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&chrono::Utc));
    rule_changed.max(service_changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    fn at(at: f64, inflight: u64, requests: u64, latency_us: u64) -> Reading {
        Reading {
            at,
            inflight,
            requests,
            latency_us,
        }
    }

    fn rule(priority: i32, created_at: &str, triggered: Option<&str>) -> Rule {
        let mut r = super::super::input::blank();
        r.priority = priority;
        r.created_at = created_at.into();
        r.last_triggered_at = triggered.map(str::to_string);
        r
    }

    #[test]
    fn the_window_keeps_the_last_ten_seconds() {
        let mut w: VecDeque<Reading> = [0.0, 5.0, 9.0, 15.0]
            .into_iter()
            .map(|t| at(t, 0, 0, 0))
            .collect();
        trim(&mut w, 15.0);
        let kept: Vec<f64> = w.iter().map(|r| r.at).collect();
        assert_eq!(kept, [5.0, 9.0, 15.0]);
        trim(&mut w, 100.0);
        assert!(w.is_empty());
    }

    #[test]
    fn framework_metrics_are_per_replica_over_the_window() {
        let w = [at(0.0, 4, 100, 1_000_000), at(10.0, 8, 300, 3_000_000)];
        assert_eq!(framework("inflight", &w, 2), Some(3.0));
        assert_eq!(framework("requests_per_second", &w, 2), Some(10.0));
        // 200 requests took 2 s between them: 10 ms each, whatever the replicas.
        assert_eq!(framework("latency_ms", &w, 2), Some(10.0));
        assert_eq!(framework("latency_ms", &w, 4), Some(10.0));
        // No healthy replica counts as one (the caller asks only when there is one).
        assert_eq!(framework("inflight", &w, 0), Some(6.0));
        assert_eq!(framework("queue_depth", &w, 1), None);
    }

    #[test]
    fn framework_metrics_are_unknown_until_the_window_says_something() {
        assert_eq!(framework("inflight", &[], 1), None);
        let one = [at(3.0, 2, 50, 0)];
        assert_eq!(framework("inflight", &one, 1), Some(2.0));
        assert_eq!(framework("requests_per_second", &one, 1), None, "no time");
        assert_eq!(framework("latency_ms", &one, 1), None, "no request");
        // Counters that went back (a restarted gateway) are no requests, not negative ones.
        let back = [at(0.0, 0, 500, 900), at(10.0, 0, 100, 100)];
        assert_eq!(framework("requests_per_second", &back, 1), Some(0.0));
        assert_eq!(framework("latency_ms", &back, 1), None);
    }

    #[test]
    fn kernel_metrics_are_the_replicas_mean() {
        assert_eq!(mean(&[]), None);
        assert_eq!(mean(&[20.0, 40.0, 90.0]), Some(50.0));
    }

    #[test]
    fn rules_are_asked_by_priority_then_age() {
        let mut rules = vec![
            rule(0, "2026-01-01T00:00:00Z", None),
            rule(5, "2026-01-03T00:00:00Z", None),
            rule(5, "2026-01-02T00:00:00Z", None),
            rule(-1, "2025-01-01T00:00:00Z", None),
        ];
        let ids: Vec<_> = [2, 1, 0, 3].iter().map(|i| rules[*i].id).collect();
        by_priority(&mut rules);
        let got: Vec<_> = rules.iter().map(|r| r.id).collect();
        assert_eq!(got, ids);
    }

    #[test]
    fn the_later_of_the_rules_and_the_services_change_counts() {
        let t = |s: &str| {
            chrono::DateTime::parse_from_rfc3339(s)
                .map(|t| t.with_timezone(&chrono::Utc))
                .ok()
        };
        let fired = rule(0, "", Some("2026-01-02T00:00:00Z"));
        let never = rule(0, "", None);
        let garbled = rule(0, "", Some("yesterday"));
        assert_eq!(last_change(&never, None), None);
        assert_eq!(
            last_change(&fired, None),
            t("2026-01-02T00:00:00Z"),
            "the rule's own"
        );
        assert_eq!(
            last_change(&fired, t("2026-01-01T00:00:00Z")),
            t("2026-01-02T00:00:00Z")
        );
        assert_eq!(
            last_change(&fired, t("2026-01-03T00:00:00Z")),
            t("2026-01-03T00:00:00Z"),
            "another rule changed the service since"
        );
        assert_eq!(
            last_change(&garbled, t("2026-01-01T00:00:00Z")),
            t("2026-01-01T00:00:00Z")
        );
    }
}

//! The serving reconciler's decisions, without I/O: what requests wait for, what becomes of
//! a route whose session ended, whether the retries start over, how many routes to start
//! and which to take down. [`crate::reconcile`] reads the store, asks these, and acts.

use super::limits::MAX_RETRIES;
use super::route_status as rs;
use bai_core::status::SessionStatus;
use bai_store::RouteRow;
use std::time::Duration;

/// Whether a route's session has ended (its route is then removed, failed or replaced).
pub fn session_ended(s: SessionStatus) -> bool {
    matches!(
        s,
        SessionStatus::Terminated | SessionStatus::Cancelled | SessionStatus::Error
    )
}

/// How many healthy routes requests at the endpoint wait for: the replicas wanted while
/// routes may still come, none once the service is going away or has given up starting them.
pub fn waiting_for(lifecycle: &str, retries: u32, replicas: u32) -> u32 {
    if lifecycle == "created" && retries < MAX_RETRIES {
        replicas
    } else {
        0
    }
}

/// What becomes of a route whose session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndedRoute {
    /// Already `failed_to_start`: kept, for `GET /services/{id}/errors`.
    KeepFailed,
    /// It never became healthy while the service runs: `failed_to_start`, a retry.
    FailToStart,
    /// Removed (and replaced by the next pass while the service wants it).
    Delete,
}

/// What becomes of a route in `route_status` whose session ended, in a service in
/// `lifecycle`.
pub fn ended_route(route_status: &str, lifecycle: &str) -> EndedRoute {
    match route_status {
        rs::FAILED_TO_START => EndedRoute::KeepFailed,
        rs::PROVISIONING if lifecycle == "created" => EndedRoute::FailToStart,
        _ => EndedRoute::Delete,
    }
}

/// Whether a service's retries and failed routes are cleared: it had failures and now has
/// every replica it wants healthy (and wants some).
pub fn clears_retries(retries: u32, healthy: usize, want: usize) -> bool {
    retries > 0 && healthy >= want && want > 0
}

/// How many routes to start: the missing ones, unless the service has given up
/// ([`MAX_RETRIES`]) or is backing off after a failure.
pub fn to_start(active: usize, want: usize, retries: u32, backing_off: bool) -> usize {
    if active < want && retries < MAX_RETRIES && !backing_off {
        want - active
    } else {
        0
    }
}

/// The routes to take down when there are more than `want`: unhealthy ones first, then
/// those not yet healthy, then the newest.
pub fn to_drain(active: &[RouteRow], want: usize) -> Vec<&RouteRow> {
    if active.len() <= want {
        return Vec::new();
    }
    let mut extra: Vec<&RouteRow> = active.iter().collect();
    extra.sort_by_key(|r| {
        let rank = match r.status.as_str() {
            rs::UNHEALTHY => 0,
            rs::PROVISIONING => 1,
            _ => 2,
        };
        (rank, std::cmp::Reverse(r.created_at.clone()))
    });
    extra.truncate(active.len() - want);
    extra
}

/// How long a service waits before starting routes again after its `retries`th failure:
/// 2, 4, 8 … s, at most 64 s.
pub fn backoff(retries: u32) -> Duration {
    Duration::from_secs(1u64 << retries.min(6))
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn route(status: &str, created_at: &str) -> RouteRow {
        RouteRow {
            id: Uuid::new_v4(),
            endpoint_id: Uuid::nil(),
            session_id: Some(Uuid::new_v4()),
            status: status.into(),
            traffic_ratio: 1.0,
            error: None,
            created_at: created_at.into(),
        }
    }

    #[test]
    fn only_ended_sessions_count_as_ended() {
        for s in [
            SessionStatus::Terminated,
            SessionStatus::Cancelled,
            SessionStatus::Error,
        ] {
            assert!(session_ended(s), "{s}");
        }
        for s in [
            SessionStatus::Pending,
            SessionStatus::Creating,
            SessionStatus::Running,
            SessionStatus::Terminating,
        ] {
            assert!(!session_ended(s), "{s}");
        }
    }

    #[test]
    fn requests_wait_only_while_routes_may_come() {
        assert_eq!(waiting_for("created", 0, 3), 3);
        assert_eq!(waiting_for("created", MAX_RETRIES - 1, 3), 3);
        assert_eq!(waiting_for("created", MAX_RETRIES, 3), 0, "given up");
        assert_eq!(waiting_for("destroying", 0, 3), 0, "going away");
    }

    #[test]
    fn a_route_that_never_became_healthy_is_a_failure_while_the_service_runs() {
        assert_eq!(
            ended_route(rs::PROVISIONING, "created"),
            EndedRoute::FailToStart
        );
        assert_eq!(
            ended_route(rs::PROVISIONING, "destroying"),
            EndedRoute::Delete
        );
        assert_eq!(
            ended_route(rs::FAILED_TO_START, "created"),
            EndedRoute::KeepFailed
        );
        assert_eq!(
            ended_route(rs::FAILED_TO_START, "destroying"),
            EndedRoute::KeepFailed
        );
        for status in [rs::HEALTHY, rs::UNHEALTHY, rs::TERMINATING] {
            assert_eq!(
                ended_route(status, "created"),
                EndedRoute::Delete,
                "{status}"
            );
        }
    }

    #[test]
    fn retries_start_over_once_every_wanted_replica_is_healthy() {
        assert!(clears_retries(2, 3, 3));
        assert!(clears_retries(2, 4, 3));
        assert!(!clears_retries(2, 2, 3), "one still missing");
        assert!(!clears_retries(0, 3, 3), "nothing to clear");
        assert!(!clears_retries(2, 0, 0), "a service scaled to zero");
    }

    #[test]
    fn missing_routes_start_unless_the_service_gave_up_or_backs_off() {
        assert_eq!(to_start(0, 3, 0, false), 3);
        assert_eq!(to_start(1, 3, MAX_RETRIES - 1, false), 2);
        assert_eq!(to_start(3, 3, 0, false), 0);
        assert_eq!(to_start(4, 3, 0, false), 0);
        assert_eq!(to_start(0, 3, MAX_RETRIES, false), 0, "given up");
        assert_eq!(to_start(0, 3, 1, true), 0, "backing off");
    }

    #[test]
    fn scaling_in_takes_unhealthy_then_provisioning_then_the_newest() {
        let old = route(rs::HEALTHY, "2026-01-01T00:00:00Z");
        let new = route(rs::HEALTHY, "2026-01-03T00:00:00Z");
        let sick = route(rs::UNHEALTHY, "2026-01-01T00:00:00Z");
        let young = route(rs::PROVISIONING, "2026-01-02T00:00:00Z");
        let active = vec![old.clone(), new.clone(), sick.clone(), young.clone()];
        let ids = |want| -> Vec<Uuid> { to_drain(&active, want).iter().map(|r| r.id).collect() };
        assert_eq!(ids(4), Vec::<Uuid>::new());
        assert_eq!(ids(5), Vec::<Uuid>::new());
        assert_eq!(ids(3), [sick.id]);
        assert_eq!(ids(2), [sick.id, young.id]);
        assert_eq!(ids(1), [sick.id, young.id, new.id]);
        assert_eq!(ids(0), [sick.id, young.id, new.id, old.id]);
    }

    #[test]
    fn failures_back_off_doubling_up_to_a_minute() {
        let secs: Vec<u64> = (1..=8).map(|r| backoff(r).as_secs()).collect();
        assert_eq!(secs, [2, 4, 8, 16, 32, 64, 64, 64]);
    }
}

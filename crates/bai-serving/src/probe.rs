//! Health checks of a running route, done by the manager against main1's model port (never a
//! sub kernel's), as the definition's `health_check` says: a GET of `path` that must answer
//! `expected_status_code` within `max_wait_time`, every `interval`. A definition without a
//! health check is probed by connecting to the port.
//!
//! * provisioning → healthy at the first pass (the route enters the endpoint's rotation);
//!   after `initial_delay`, more than `max_retries` failures in a row give the route up
//!   (`failed_to_start`, with the error) and end its session;
//! * healthy → unhealthy after more than `max_retries` failures in a row (out of rotation,
//!   readiness); unhealthy → healthy at the next pass;
//! * unhealthy for as many failures again ends the session (liveness): the reconciler
//!   replaces the route.

use super::definition::HealthCheck;
use super::route_status as rs;
use crate::state::Serving;
use axum::body::Body;
use bai_core::{Reason, SessionResult};
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// What a probe found.
pub type Outcome = Result<(), String>;

/// One probe: the HTTP check, or a connection when there is no check.
pub async fn probe(target: SocketAddr, check: Option<&HealthCheck>) -> Outcome {
    let Some(h) = check else {
        return match bai_relay::dial(target, bai_relay::DIAL_WAIT).await {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => Err(format!(
                "the port did not accept a connection within {} s",
                bai_relay::DIAL_WAIT.as_secs()
            )),
            Err(e) => Err(format!("the port refuses connections: {e}")),
        };
    };
    let wait = Duration::from_secs_f64(h.max_wait_time.max(0.1));
    let attempt = async {
        let stream = tokio::net::TcpStream::connect(target)
            .await
            .map_err(|e| format!("GET {} failed: {e}", h.path))?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("GET {} failed: {e}", h.path))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let req = axum::http::Request::get(&h.path)
            .header(axum::http::header::HOST, "localhost")
            .body(Body::empty())
            .map_err(|e| e.to_string())?;
        let resp = sender
            .send_request(req)
            .await
            .map_err(|e| format!("GET {} failed: {e}", h.path))?;
        let code = resp.status().as_u16();
        if code == h.expected_status_code {
            Ok(())
        } else {
            Err(format!(
                "GET {} answered {code}, not {}",
                h.path, h.expected_status_code
            ))
        }
    };
    match tokio::time::timeout(wait, attempt).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "GET {} did not answer within {} s",
            h.path, h.max_wait_time
        )),
    }
}

/// The state machine of one route's checks, without I/O.
#[derive(Debug, Clone)]
pub struct Tracker {
    pub status: &'static str,
    pub failures: u32,
    pub max_retries: u32,
    pub grace_until: Instant,
    pub last_error: Option<String>,
}

/// What a probe result asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Stay,
    /// Into rotation.
    Healthy,
    /// Out of rotation.
    Unhealthy,
    /// Never became healthy: give the route up.
    GiveUp(String),
    /// Unhealthy too long: end its session so that it is replaced.
    Replace(String),
}

impl Tracker {
    pub fn new(check: Option<&HealthCheck>, now: Instant) -> Tracker {
        let (retries, delay) = check.map_or((3, 0.0), |h| (h.max_retries, h.initial_delay));
        Tracker {
            status: rs::PROVISIONING,
            failures: 0,
            max_retries: retries,
            grace_until: now + Duration::from_secs_f64(delay.max(0.0)),
            last_error: None,
        }
    }

    pub fn observe(&mut self, outcome: Outcome, now: Instant) -> Step {
        match outcome {
            Ok(()) => {
                self.failures = 0;
                if self.status == rs::HEALTHY {
                    Step::Stay
                } else {
                    self.status = rs::HEALTHY;
                    Step::Healthy
                }
            }
            Err(e) => {
                if self.status == rs::PROVISIONING && now < self.grace_until {
                    self.last_error = Some(e);
                    return Step::Stay;
                }
                self.failures += 1;
                self.last_error = Some(e.clone());
                let over = self.failures > self.max_retries;
                match self.status {
                    rs::PROVISIONING if over => Step::GiveUp(format!(
                        "the health check failed {} times in a row: {e}",
                        self.failures
                    )),
                    rs::HEALTHY if over => {
                        self.status = rs::UNHEALTHY;
                        self.failures = 0;
                        Step::Unhealthy
                    }
                    rs::UNHEALTHY if over => Step::Replace(format!(
                        "unhealthy, and the health check failed {} more times: {e}",
                        self.failures
                    )),
                    _ => Step::Stay,
                }
            }
        }
    }
}

/// Starts checking a running route (its session's main kernel is `kernel` on `agent`).
pub fn spawn(
    serving: &Arc<Serving>,
    endpoint: Uuid,
    route: Uuid,
    session: Uuid,
    target: SocketAddr,
    check: Option<HealthCheck>,
) {
    let mm = serving.clone();
    let task = tokio::spawn(async move {
        let serving = mm;
        let interval = Duration::from_secs_f64(check.as_ref().map_or(2.0, |h| h.interval.max(0.1)));
        let mut t = Tracker::new(check.as_ref(), Instant::now());
        loop {
            let outcome = probe(target, check.as_ref()).await;
            let step = t.observe(outcome, Instant::now());
            let Ok(Some(e)) = serving.store.endpoint(endpoint) else {
                return;
            };
            let gw = serving.gateway(&e);
            let ratio = serving
                .store
                .route(route)
                .ok()
                .flatten()
                .map_or(1.0, |r| r.traffic_ratio);
            match step {
                Step::Stay => {}
                Step::Healthy => {
                    let _ = serving.store.set_route_status(route, rs::HEALTHY, None);
                    gw.admit(route, target, ratio);
                    tracing::info!(service = %endpoint, %route, "route healthy");
                    serving.wake.notify_one();
                }
                Step::Unhealthy => {
                    let _ = serving.store.set_route_status(route, rs::UNHEALTHY, None);
                    gw.retire(route);
                    tracing::warn!(service = %endpoint, %route, error = ?t.last_error, "route unhealthy");
                    serving.wake.notify_one();
                }
                Step::GiveUp(why) => {
                    gw.retire(route);
                    super::failure::fail_route(&serving, &e, route, &why, "health-check");
                    end(&serving, session, &why).await;
                    return;
                }
                Step::Replace(why) => {
                    gw.retire(route);
                    tracing::warn!(service = %endpoint, %route, %why, "replacing an unhealthy route");
                    end(&serving, session, &why).await;
                    return;
                }
            }
            tokio::time::sleep(interval).await;
        }
    });
    serving
        .probers
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(route, task);
}

async fn end(serving: &Arc<Serving>, session: Uuid, why: &str) {
    let reason = Reason::Other(format!("health-check-failed: {why}"));
    if let Err(p) = bai_control::lifecycle::terminate::terminate(
        &serving.lifecycle,
        session,
        reason,
        SessionResult::Failure,
    )
    .await
    {
        tracing::warn!(%session, error = %p.msg, "cannot end a failed route's session");
    }
    serving.wake.notify_one();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(retries: u32, delay: f64) -> HealthCheck {
        HealthCheck {
            enable: None,
            path: "/health".into(),
            interval: 1.0,
            max_retries: retries,
            max_wait_time: 1.0,
            expected_status_code: 200,
            initial_delay: delay,
        }
    }

    #[test]
    fn a_route_becomes_healthy_then_unhealthy_then_is_replaced() {
        let now = Instant::now();
        let mut t = Tracker::new(Some(&check(1, 0.0)), now);
        assert_eq!(t.observe(Ok(()), now), Step::Healthy);
        assert_eq!(t.observe(Err("x".into()), now), Step::Stay);
        assert_eq!(t.observe(Err("x".into()), now), Step::Unhealthy);
        assert_eq!(t.observe(Ok(()), now), Step::Healthy);
        assert_eq!(t.observe(Err("x".into()), now), Step::Stay);
        assert_eq!(t.observe(Err("x".into()), now), Step::Unhealthy);
        assert_eq!(t.observe(Err("x".into()), now), Step::Stay);
        assert!(matches!(t.observe(Err("x".into()), now), Step::Replace(_)));
    }

    #[test]
    fn failures_in_the_initial_delay_do_not_count_then_give_up() {
        let now = Instant::now();
        let mut t = Tracker::new(Some(&check(2, 60.0)), now);
        for _ in 0..10 {
            assert_eq!(t.observe(Err("refused".into()), now), Step::Stay);
        }
        let later = now + Duration::from_secs(61);
        assert_eq!(t.observe(Err("refused".into()), later), Step::Stay);
        assert_eq!(t.observe(Err("refused".into()), later), Step::Stay);
        match t.observe(Err("refused".into()), later) {
            Step::GiveUp(why) => {
                assert!(why.contains("3 times") && why.contains("refused"), "{why}")
            }
            other => panic!("{other:?}"),
        }
    }
}

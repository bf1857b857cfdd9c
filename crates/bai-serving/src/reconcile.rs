//! The serving reconciler: for every live service, the desired replicas against its routes,
//! on every wake-up (a service changed, a route's health changed, a session ended) and on a
//! safety tick.
//!
//! * A route whose session ended is removed, and replaced while the service wants it
//!   (auto-recovery); one that ended before it was ever healthy is `failed_to_start`, with
//!   the session's reason as its error, and counts as a retry: after [`MAX_RETRIES`] the
//!   service stops starting routes (its errors are shown by `GET /services/{id}/errors`)
//!   until it is scaled or its errors are cleared. Between failures it waits 2, 4, 8 … s.
//! * Too few routes: new ones start. Too many: the extra ones (unhealthy first, then those
//!   not yet healthy, then the newest) leave the rotation, finish what they are answering,
//!   and only then end (drain before terminate).
//! * The endpoint's URL is assigned once a first route's session runs, and kept from then on
//!   (requests wait at the endpoint until a route is healthy).
//! * A service being removed ends all its routes the same way, then is `destroyed`.

use super::decide::{self, EndedRoute};
use super::failure::fail_route;
use super::{probe, replica, route_status as rs};
use crate::state::Serving;
use bai_core::status::SessionStatus;
use bai_core::{Reason, SessionResult};
use bai_store::{EndpointRow, RouteRow};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::broadcast::error::RecvError;

/// How long a drained route may take to finish its requests before it ends anyway.
const DRAIN_LIMIT: Duration = Duration::from_secs(30);

/// Starts the reconciler.
pub fn spawn(serving: Arc<Serving>) {
    let mut rx = serving.bus.subscribe();
    let waker = serving.clone();
    tokio::spawn(async move {
        loop {
            match rx.recv().await {
                Ok(_) | Err(RecvError::Lagged(_)) => waker.wake.notify_one(),
                Err(RecvError::Closed) => return,
            }
        }
    });
    tokio::spawn(async move {
        loop {
            if let Err(e) = tick(&serving).await {
                tracing::error!(error = %e, "serving reconciliation failed");
            }
            tokio::select! {
                _ = serving.wake.notified() => {}
                _ = tokio::time::sleep(Duration::from_secs(2)) => {}
            }
        }
    });
}

/// One pass over every live service.
pub async fn tick(serving: &Arc<Serving>) -> Result<(), bai_store::StoreError> {
    for e in serving.store.live_endpoints(None)? {
        endpoint(serving, &e).await?;
    }
    Ok(())
}

async fn endpoint(serving: &Arc<Serving>, e: &EndpointRow) -> Result<(), bai_store::StoreError> {
    let gw = serving.gateway(e);
    if let (Some(_), false) = (&e.state.url, gw.listening()) {
        // After a restart: the same URL again.
        if let Err(err) = gw.listen(serving.config.app_port_pool, e.state.port).await {
            tracing::error!(service = %e.id, error = %err, "cannot open the service endpoint");
        }
    }
    // Requests wait for a healthy route only while one may come: not once the service has
    // given up starting routes.
    gw.set_wanted(decide::waiting_for(
        &e.state.lifecycle,
        e.state.retries,
        e.spec.replicas,
    ));
    let mut active: Vec<RouteRow> = Vec::new();
    let mut live_sessions = 0;
    for r in serving.store.routes_of(e.id)? {
        let Some(sid) = r.session_id else {
            continue;
        };
        let Some(s) = serving.store.session(sid)? else {
            serving.store.delete_route(r.id)?;
            continue;
        };
        if decide::session_ended(s.state.status) {
            gw.retire(r.id);
            serving.stop_prober(r.id);
            if s.state.status == SessionStatus::Error {
                let _ = bai_control::lifecycle::terminate::terminate(
                    &serving.lifecycle,
                    sid,
                    Reason::Other("service-route-failed".into()),
                    SessionResult::Failure,
                )
                .await;
            }
            match decide::ended_route(&r.status, &e.state.lifecycle) {
                EndedRoute::KeepFailed => {}
                EndedRoute::FailToStart => {
                    let why = s
                        .state
                        .status_info
                        .clone()
                        .unwrap_or_else(|| s.state.status.as_str().to_string());
                    fail_route(
                        serving,
                        e,
                        r.id,
                        &format!("its session ended {}: {why}", s.state.status.as_str()),
                        "session",
                    );
                }
                EndedRoute::Delete => serving.store.delete_route(r.id)?,
            }
            continue;
        }
        live_sessions += 1;
        if r.status == rs::TERMINATING {
            if !serving.has_task(r.id) {
                // Nobody drained it (it was just taken down, or the manager restarted).
                drain_and_end(serving, e, &r, "service-scaled-in");
            }
            continue;
        }
        if s.state.status == SessionStatus::Running
            && rs::is_active(&r.status)
            && !serving.has_prober(r.id)
        {
            watch(serving, e, &r, &s).await;
        }
        if rs::is_active(&r.status) {
            active.push(r);
        }
    }

    if e.state.lifecycle == "destroying" {
        for r in &active {
            drain_and_end(serving, e, r, "service-destroyed");
        }
        gw.close();
        if live_sessions == 0 {
            serving.store.set_endpoint_lifecycle(e.id, "destroyed")?;
            serving.drop_gateway(e.id);
            tracing::info!(service = %e.id, name = %e.name, "service destroyed");
        }
        return Ok(());
    }

    let healthy = active.iter().filter(|r| r.status == rs::HEALTHY).count();
    let want = e.spec.replicas as usize;
    if decide::clears_retries(e.state.retries, healthy, want) {
        serving.store.set_endpoint_retries(e.id, 0)?;
        serving.store.clear_failed_routes(e.id)?;
    }
    let to_start = if active.len() < want {
        let waiting = serving
            .not_before
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&e.id)
            .is_some_and(|t| Instant::now() < *t);
        let retries = serving
            .store
            .endpoint(e.id)?
            .map_or(e.state.retries, |x| x.state.retries);
        decide::to_start(active.len(), want, retries, waiting)
    } else {
        0
    };

    // The endpoint listens before its first replica starts, and its address is stored
    // right after the start, with no wait between: a replica may run within milliseconds
    // (from a warm pool), and a client that waits for a RUNNING replica and then reads the
    // address must find it. (The API shows the address only once a replica has run, and
    // takes it from the listening gateway in the instant before it is stored.)
    let opening = e.state.url.is_none() && (to_start > 0 || !active.is_empty());
    let port = if opening {
        match gw.listen(serving.config.app_port_pool, None).await {
            Ok(port) => Some(port),
            Err(err) => {
                tracing::error!(service = %e.id, error = %err, "cannot open the service endpoint");
                None
            }
        }
    } else {
        None
    };

    if active.len() < want {
        for _ in 0..to_start {
            if let Err(p) = replica::start(serving, e) {
                tracing::error!(service = %e.id, error = %p.msg, "cannot store a route");
            }
        }
    } else {
        for r in decide::to_drain(&active, want) {
            drain_and_end(serving, e, r, "service-scaled-in");
        }
    }
    if let Some(port) = port {
        let url = endpoint_url(serving, port);
        serving.store.set_endpoint_url(e.id, &url, port)?;
        tracing::info!(service = %e.id, %url, "service endpoint open");
    }
    Ok(())
}

/// The address of a service endpoint listening on `port`.
pub fn endpoint_url(serving: &Serving, port: u16) -> String {
    format!("http://{}:{port}", serving.config.endpoint_host)
}

/// Starts checking a running route: where its main kernel's model port is reached.
async fn watch(serving: &Arc<Serving>, e: &EndpointRow, r: &RouteRow, s: &bai_store::SessionRow) {
    let spec = &e.spec.replica;
    let Some(agent) = s
        .state
        .agent_id
        .as_deref()
        .and_then(|a| serving.agents.get(a))
    else {
        return;
    };
    let port = spec.definition.port();
    match agent.rpc.app_address(s.main_kernel_id, port).await {
        Ok(target) => probe::spawn(
            serving,
            e.id,
            r.id,
            s.id,
            target,
            spec.definition.health().cloned(),
        ),
        Err(err) => {
            tracing::warn!(service = %e.id, route = %r.id, error = %err, "route's port cannot be reached yet")
        }
    }
}

/// Takes a route out of rotation, lets its requests finish, then ends its session.
fn drain_and_end(serving: &Arc<Serving>, e: &EndpointRow, r: &RouteRow, why: &'static str) {
    if let Err(err) = serving.store.set_route_status(r.id, rs::TERMINATING, None) {
        tracing::error!(error = %err, "cannot mark a route terminating");
        return;
    }
    serving.stop_prober(r.id);
    let gw = serving.gateway(e);
    gw.retire(r.id);
    let Some(session) = r.session_id else {
        return;
    };
    let counters = gw.counters(r.id);
    let mm = serving.clone();
    let route = r.id;
    let task = tokio::spawn(async move {
        let serving = mm;
        let deadline = Instant::now() + DRAIN_LIMIT;
        while counters.inflight.load(std::sync::atomic::Ordering::Relaxed) > 0
            && Instant::now() < deadline
        {
            let _ = tokio::time::timeout(Duration::from_millis(500), gw.finished.notified()).await;
        }
        tracing::info!(%route, %session, why, "route drained; ending its session");
        if let Err(p) = bai_control::lifecycle::terminate::terminate(
            &serving.lifecycle,
            session,
            Reason::Other(why.into()),
            SessionResult::Success,
        )
        .await
        {
            tracing::warn!(%session, error = %p.msg, "cannot end a drained route's session");
        }
        serving.wake.notify_one();
    });
    // Kept as the route's task, so a second pass does not drain it again.
    serving
        .probers
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(r.id, task);
}

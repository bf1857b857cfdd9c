//! A route that failed to start: marked `failed_to_start` with its error, counted as a retry
//! of its service, which then backs off (2, 4, 8 … s) and gives up at [`MAX_RETRIES`].

use super::limits::MAX_RETRIES;
use super::route_status as rs;
use crate::state::Serving;
use bai_store::EndpointRow;
use std::time::Instant;
use uuid::Uuid;

/// Marks a route `failed_to_start` with its error, counts a retry and backs off.
pub fn fail_route(serving: &Serving, e: &EndpointRow, route: Uuid, why: &str, src: &str) {
    let error = bai_core::serving::RouteError {
        name: "RouteFailedToStart".into(),
        repr: why.into(),
        src: src.into(),
    };
    if let Err(err) =
        serving
            .store
            .set_route_status(route, rs::FAILED_TO_START, Some(&error.to_text()))
    {
        tracing::error!(error = %err, "cannot mark a route failed");
    }
    let retries = serving
        .store
        .endpoint(e.id)
        .ok()
        .flatten()
        .map_or(e.state.retries, |x| x.state.retries)
        + 1;
    let _ = serving.store.set_endpoint_retries(e.id, retries);
    let backoff = super::decide::backoff(retries);
    serving
        .not_before
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(e.id, Instant::now() + backoff);
    tracing::warn!(service = %e.id, %route, retries, %why, "route failed to start");
    if retries >= MAX_RETRIES {
        tracing::error!(service = %e.id, retries, "service gives up starting routes; see GET /services/{{id}}/errors");
    }
}

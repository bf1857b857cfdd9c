//! For the people who run bai: `GET /health` for load balancers (unsigned; 503 when the
//! database does not answer), `GET /metrics` for Prometheus (a bearer token configured with
//! `--metrics-token`, or an administrator's signed request), and `GET /admin/audit`.

use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::Extension;
use axum::Json;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bai_api::server::{AuditList, AuditQuery, Health};
use bai_core::Problem;
use std::sync::Arc;

/// `GET /health`.
pub async fn health(State(m): State<Arc<Manager>>) -> Response {
    let db = bai_ground::metrics::timed(&m.metrics, "health", || m.store.user_count());
    let agents = m.agents.all();
    let alive = agents.iter().filter(|a| a.is_alive()).count();
    let body = Health {
        status: if db.is_ok() { "ok" } else { "unavailable" }.into(),
        database: match &db {
            Ok(_) => "ok".into(),
            Err(e) => e.to_string(),
        },
        agents: agents.len(),
        agents_alive: alive,
        version: bai_core::MANAGER_VERSION.into(),
    };
    let status = if db.is_ok() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(body)).into_response()
}

/// Whether the request carries the configured metrics token (compared in constant time).
fn has_token(m: &Manager, headers: &HeaderMap) -> bool {
    let Some(want) = m.config.metrics_token.as_deref() else {
        return false;
    };
    let got = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    bai_core::sign::signatures_match(want, got.trim())
}

/// `GET /metrics`.
pub async fn metrics(State(m): State<Arc<Manager>>, req: axum::extract::Request) -> Response {
    let allowed = has_token(&m, req.headers()) || {
        let pq = req
            .uri()
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_default();
        match crate::auth::verify(&m, "GET", &pq, req.headers()) {
            Ok(c) => c.is_admin,
            Err(_) => false,
        }
    };
    if !allowed {
        return crate::error::ApiError(Problem::unauthorized(
            "metrics need `Authorization: Bearer <the --metrics-token>` or an administrator's signed request",
        ))
        .into_response();
    }
    let mut text = bai_ground::metrics::render(
        &m.metrics,
        &m.store,
        &m.agents,
        &m.readings.stats,
        &m.traffic,
    );
    text.push_str(&m.pools.metrics());
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// `GET /admin/audit`: the audit log, newest first (administrators).
pub async fn audit(
    State(m): State<Arc<Manager>>,
    Extension(_caller): Extension<Caller>,
    Query(q): Query<AuditQuery>,
) -> ApiResult<Json<AuditList>> {
    // Stored times are UTC with microseconds; a `since` is compared in the same form.
    let since = match &q.since {
        Some(s) => Some(
            chrono::DateTime::parse_from_rfc3339(s)
                .map_err(|_| {
                    Problem::invalid(format!(
                        "since {s:?} is not an RFC 3339 time (2026-11-24T10:00:00Z)"
                    ))
                })?
                .with_timezone(&chrono::Utc)
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, false),
        ),
        None => None,
    };
    let limit = q.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(Problem::invalid("limit must be 1 to 1000").into());
    }
    let rows = m.store.audit(&bai_store::AuditFilter {
        actor: q.actor.filter(|s| !s.is_empty()),
        action: q.action.filter(|s| !s.is_empty()),
        target: q.target.filter(|s| !s.is_empty()),
        since,
        limit,
    })?;
    Ok(Json(AuditList { entries: rows }))
}

/// `GET /manager/status` (administrators): Backend.AI's manager status, as the official
/// client's `admin manager status` prints it. bai's managers do not freeze: `running`.
pub async fn manager_status(
    State(m): State<Arc<Manager>>,
) -> ApiResult<Json<bai_api::server::ManagerStatus>> {
    let active: i64 = m
        .store
        .session_counts()?
        .iter()
        .filter(|c| {
            c.status
                .parse::<bai_core::SessionStatus>()
                .is_ok_and(|s| s.is_live())
        })
        .map(|c| c.count)
        .sum();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    Ok(Json(bai_api::server::ManagerStatus {
        status: "running".into(),
        active_sessions: active,
        nodes: vec![bai_api::server::ManagerNode {
            id: if host.is_empty() {
                "manager".into()
            } else {
                host
            },
            status: "running".into(),
            version: bai_core::MANAGER_VERSION.into(),
            api_version: bai_core::API_VERSION.into(),
            active_sessions: active,
        }],
    }))
}

/// `GET /config/resource-slots`: the slots the cluster's agents have now, with their units.
pub async fn resource_slots(
    State(m): State<Arc<Manager>>,
) -> Json<bai_api::server::ResourceSlotTypes> {
    let mut slots = bai_api::server::ResourceSlotTypes::new();
    slots.insert("cpu".into(), "count".into());
    slots.insert("mem".into(), "bytes".into());
    for a in m.agents.all() {
        for slot in a.info().capacity.accel.keys() {
            slots.insert(slot.clone(), "count".into());
        }
    }
    Json(slots)
}

//! `/services`: model services as the official client's `backend.ai service …` calls them
//! (Backend.AI's legacy serving API). Owners see and change their own; administrators all.

use super::views::services as view;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::Extension;
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use bai_api::body::Fields;
use bai_api::services::{
    DefinedModel, DefinitionCheck, DefinitionChecked, HealthCheck, Pagination, RouteUpdate,
    Runtime, Runtimes, Scaled, ServiceError, ServiceErrors, ServiceInfo, ServiceListItem,
    ServiceSearch, ServiceSearchResult, Success, TokenReply,
};
use bai_core::Problem;
use bai_serving::route_status as rs;
use bai_store::EndpointRow;
use std::collections::HashMap;
use std::sync::Arc;
use uuid::Uuid;

/// The live service `id` the caller may see.
pub fn visible_service(m: &Manager, caller: &Caller, id: &str) -> ApiResult<EndpointRow> {
    let not_found = || {
        Problem::not_found(
            "endpoint",
            format!("no service with the id {id:?} is visible to you"),
        )
    };
    let uuid = Uuid::parse_str(id).map_err(|_| not_found())?;
    let e = m.store.endpoint(uuid)?.ok_or_else(not_found)?;
    if e.state.lifecycle == "destroyed"
        || (!caller.is_admin && e.spec.access_key != caller.access_key)
    {
        return Err(not_found().into());
    }
    Ok(e)
}

/// `POST /services`.
pub async fn create(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<ServiceInfo>)> {
    // The wire request becomes a spec here, at the edge; serving checks the rest.
    let spec = super::service_spec::spec_of(bai_api::services::read_new_service(&body)?);
    let mm = m.clone();
    // Reading the model folder's definition touches the disk.
    let row = tokio::task::spawn_blocking(move || {
        let row = bai_serving::create::plan(&mm.serving, &caller, &spec)?;
        bai_serving::create::create(&mm.serving, &row)
    })
    .await??;
    Ok((StatusCode::CREATED, Json(view::info(&m.serving, &row))))
}

/// `GET /services?name=`: the caller's services (all, for administrators).
pub async fn list(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Query(q): Query<HashMap<String, String>>,
) -> ApiResult<Json<Vec<ServiceListItem>>> {
    let rows = m.store.live_endpoints(caller.owner_filter())?;
    let items = rows
        .iter()
        .filter(|e| q.get("name").is_none_or(|n| &e.name == n))
        .map(|e| view::list_item(&m.serving, e))
        .collect();
    Ok(Json(items))
}

/// `POST /services/_/search`: `{filter: {name: {equals|contains}}, offset, limit}`.
pub async fn search(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> ApiResult<Json<ServiceSearchResult>> {
    let b: ServiceSearch = super::typed_body(&body)?;
    let equals = b.name_equals();
    let contains = b.name_contains();
    let rows: Vec<EndpointRow> = m
        .store
        .live_endpoints(caller.owner_filter())?
        .into_iter()
        .filter(|e| equals.is_none_or(|n| e.name == n))
        .filter(|e| {
            contains
                .as_deref()
                .is_none_or(|c| e.name.to_lowercase().contains(c))
        })
        .collect();
    let total = rows.len() as u64;
    let offset = b.offset.unwrap_or(0);
    let limit = b.limit.unwrap_or(50).clamp(1, 1000);
    let items = rows
        .iter()
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(usize::try_from(limit).unwrap_or(1000))
        .map(|e| view::info(&m.serving, e))
        .collect();
    Ok(Json(ServiceSearchResult {
        items,
        pagination: Pagination {
            total,
            offset,
            limit,
        },
    }))
}

/// `GET /services/_/runtimes`.
pub async fn runtimes() -> Json<Runtimes> {
    let runtimes = view::RUNTIMES
        .iter()
        .map(|(n, h)| Runtime {
            name: n.to_string(),
            human_readable_name: h.to_string(),
        })
        .collect();
    Json(Runtimes { runtimes })
}

/// `GET /services/{id}`.
pub async fn info(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<ServiceInfo>> {
    let e = visible_service(&m, &caller, &id)?;
    Ok(Json(view::info(&m.serving, &e)))
}

/// `DELETE /services/{id}`: its routes drain and end, then it is destroyed.
pub async fn remove(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<Success>> {
    let e = visible_service(&m, &caller, &id)?;
    m.store.set_endpoint_lifecycle(e.id, "destroying")?;
    tracing::info!(service = %e.id, "service removal asked");
    m.serving.wake.notify_one();
    Ok(Json(Success { success: true }))
}

/// `POST /services/{id}/scale` `{"to": N}`.
pub async fn scale(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Scaled>> {
    let e = visible_service(&m, &caller, &id)?;
    if e.state.lifecycle != "created" {
        return Err(Problem::conflict(
            "service-destroying",
            "The service is being removed.",
            "a service being removed cannot be scaled",
        )
        .into());
    }
    let b = Fields::read(&body)?;
    let to = bai_api::services::replicas_in(&b, &["to", "replicas"])?;
    bai_serving::create::check_policy_replicas(&m.serving, &e.spec.user_id, to)?;
    set_replicas(&m, &e, to)?;
    let current = m
        .store
        .routes_of(e.id)?
        .iter()
        .filter(|r| rs::is_active(&r.status))
        .count();
    Ok(Json(Scaled {
        current_route_count: u32::try_from(current).unwrap_or(u32::MAX),
        target_count: to,
    }))
}

/// A new desired count; it also lifts a give-up after failures.
fn set_replicas(m: &Manager, e: &EndpointRow, to: u32) -> Result<(), Problem> {
    m.store.set_endpoint_replicas(e.id, to)?;
    m.store.set_endpoint_retries(e.id, 0)?;
    m.serving
        .not_before
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&e.id);
    tracing::info!(service = %e.id, from = e.spec.replicas, to, "service scaled");
    m.serving.wake.notify_one();
    Ok(())
}

/// `POST /services/{id}/token` `{"duration": "3600" | "3d" | 3600}` or `{"valid_until": epoch}`.
pub async fn token(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<TokenReply>> {
    let e = visible_service(&m, &caller, &id)?;
    let b = Fields::read(&body)?;
    let now = chrono::Utc::now().timestamp();
    let exp = match (b.amount("duration"), b.whole_number("valid_until")) {
        (Some(d), _) => {
            let secs = bai_core::units::duration_secs(&d)
                .map_err(|v| {
                    Problem::invalid(format!(
                        "duration {v} is not a duration: use seconds or 30m, 12h, 3d"
                    ))
                })?
                .filter(|s| *s > 0)
                .ok_or_else(|| Problem::invalid("duration must be longer than 0 s"))?;
            now + secs
        }
        (_, Some(t)) => {
            let t =
                t.map_err(|()| Problem::invalid("valid_until must be a Unix time in seconds"))?;
            if t <= now {
                return Err(Problem::invalid("valid_until is in the past").into());
            }
            t
        }
        _ => {
            return Err(Problem::invalid(
                "give duration (e.g. \"3600\", \"3d\") or valid_until (Unix seconds)",
            )
            .into());
        }
    };
    let claims = bai_serving::token::Claims {
        endpoint_id: e.id,
        user: e.spec.user_id.clone(),
        exp,
    };
    let token = bai_serving::token::sign(&e.token_secret, &claims);
    let valid_until = chrono::DateTime::from_timestamp(exp, 0)
        .unwrap_or_default()
        .to_rfc3339();
    m.store
        .insert_endpoint_token(&bai_store::EndpointTokenRow {
            id: Uuid::new_v4(),
            endpoint_id: e.id,
            token: token.clone(),
            created_at: String::new(),
            valid_until,
        })?;
    Ok(Json(TokenReply { token }))
}

/// `PUT /services/{id}/routings/{route}` `{"traffic_ratio": R}`.
pub async fn update_route(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path((id, route)): Path<(String, String)>,
    body: Bytes,
) -> ApiResult<Json<Success>> {
    let e = visible_service(&m, &caller, &id)?;
    let r = route_of(&m, &e, &route)?;
    let RouteUpdate { traffic_ratio } = super::typed_body(&body)?;
    let ratio = Some(traffic_ratio)
        .filter(|r| r.is_finite() && *r >= 0.0)
        .ok_or_else(|| Problem::invalid("traffic_ratio must be a number ≥ 0"))?;
    m.store.set_route_ratio(r.id, ratio)?;
    if let Some(g) = m.serving.existing_gateway(e.id) {
        g.set_weight(r.id, ratio);
    }
    Ok(Json(Success { success: true }))
}

/// `DELETE /services/{id}/routings/{route}`: that route drains and ends; one replica fewer.
pub async fn remove_route(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path((id, route)): Path<(String, String)>,
) -> ApiResult<Json<Success>> {
    let e = visible_service(&m, &caller, &id)?;
    let r = route_of(&m, &e, &route)?;
    if r.status == rs::PROVISIONING {
        return Err(Problem::invalid(
            "the route is still provisioning; remove it once it is healthy, or scale the service",
        )
        .into());
    }
    if !rs::is_active(&r.status) {
        return Err(Problem::invalid(format!("the route is {}, not serving", r.status)).into());
    }
    // The route leaves the rotation and its session ends; one replica fewer.
    m.store.set_route_status(r.id, rs::TERMINATING, None)?;
    m.serving.stop_prober(r.id);
    if let Some(g) = m.serving.existing_gateway(e.id) {
        g.retire(r.id);
    }
    set_replicas(&m, &e, e.spec.replicas.saturating_sub(1))?;
    Ok(Json(Success { success: true }))
}

fn route_of(m: &Manager, e: &EndpointRow, route: &str) -> ApiResult<bai_store::RouteRow> {
    let not_found = || {
        Problem::not_found(
            "route",
            format!("service {} has no route {route:?}", e.name),
        )
    };
    let id = Uuid::parse_str(route).map_err(|_| not_found())?;
    let r = m.store.route(id)?.ok_or_else(not_found)?;
    if r.endpoint_id != e.id {
        return Err(not_found().into());
    }
    Ok(r)
}

/// `GET /services/{id}/errors`: routes that failed to start, with why.
pub async fn errors(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<ServiceErrors>> {
    let e = visible_service(&m, &caller, &id)?;
    let errors = m
        .store
        .routes_of(e.id)?
        .iter()
        .filter(|r| r.status == rs::FAILED_TO_START)
        .map(|r| {
            ServiceError::new(
                r.id.to_string(),
                r.session_id.map(|s| s.to_string()),
                r.error.as_deref(),
            )
        })
        .collect();
    Ok(Json(ServiceErrors {
        errors,
        retries: e.state.retries,
    }))
}

/// `POST /services/{id}/errors/clear`: forgets the failures and tries again.
pub async fn clear_errors(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<Success>> {
    let e = visible_service(&m, &caller, &id)?;
    m.store.clear_failed_routes(e.id)?;
    set_replicas(&m, &e, e.spec.replicas)?;
    Ok(Json(Success { success: true }))
}

/// `POST /services/{id}/sync`: the endpoint is this process's own; nothing to push.
pub async fn sync(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<Success>> {
    visible_service(&m, &caller, &id)?;
    m.serving.wake.notify_one();
    Ok(Json(Success { success: true }))
}

/// `POST /services/_/check-definition` `{"model", "model_definition_path"?}`: whether a
/// model folder's definition would serve.
pub async fn check_definition(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> ApiResult<Json<DefinitionChecked>> {
    let b: DefinitionCheck = super::typed_body(&body)?;
    let model = Some(b.model)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Problem::invalid("model is required: the model folder's name or id"))?;
    let path = b.model_definition_path;
    let mm = m.clone();
    let (path, def) = tokio::task::spawn_blocking(move || {
        let folder = bai_serving::create::model_folder(
            &mm.serving,
            &caller.user_id,
            caller.is_admin,
            &model,
        )?;
        bai_serving::create::read_definition(&mm.serving, &folder, path.as_deref())
    })
    .await??;
    let model = def.model();
    Ok(Json(DefinitionChecked {
        ok: true,
        path,
        model: DefinedModel {
            name: model.name.clone(),
            model_path: model.model_path.clone(),
            port: def.port(),
            command: def.command_line(),
            health_check: def.health().map(|h| HealthCheck {
                path: h.path.clone(),
                interval: h.interval,
                max_retries: h.max_retries,
                max_wait_time: h.max_wait_time,
                expected_status_code: h.expected_status_code,
                initial_delay: h.initial_delay,
            }),
        },
    }))
}

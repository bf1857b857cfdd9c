//! What the API shows of a service: the REST shape (`ServeInfoModel`) and the GraphQL
//! `Endpoint` / `Routing` nodes, from the store and the endpoint's counters.

use bai_api::services::{ActiveRoute, RouteStatus, ServiceInfo, ServiceListItem, ServiceStatus};
use bai_serving::route_status as rs;
use bai_serving::state::Serving;
use bai_store::{EndpointRow, RouteRow};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

/// The service's status as Backend.AI names it.
pub fn status(e: &EndpointRow, routes: &[RouteRow]) -> ServiceStatus {
    match e.state.lifecycle.as_str() {
        "destroying" => return ServiceStatus::Destroying,
        "destroyed" => return ServiceStatus::Destroyed,
        _ => {}
    }
    let healthy = routes.iter().filter(|r| r.status == rs::HEALTHY).count();
    let unhealthy = routes.iter().filter(|r| r.status == rs::UNHEALTHY).count();
    let active = routes.iter().filter(|r| rs::is_active(&r.status)).count();
    if e.spec.replicas == 0 && active == 0 {
        ServiceStatus::Ready
    } else if healthy >= e.spec.replicas as usize && healthy > 0 {
        ServiceStatus::Healthy
    } else if healthy > 0 {
        ServiceStatus::Degraded
    } else if unhealthy > 0 {
        ServiceStatus::Unhealthy
    } else {
        ServiceStatus::Provisioning
    }
}

/// A route's status as the wire names it (a stored word it does not know reads as
/// provisioning).
fn route_status(s: &str) -> RouteStatus {
    match s {
        rs::HEALTHY => RouteStatus::Healthy,
        rs::UNHEALTHY => RouteStatus::Unhealthy,
        rs::TERMINATING => RouteStatus::Terminating,
        rs::FAILED_TO_START => RouteStatus::FailedToStart,
        _ => RouteStatus::Provisioning,
    }
}

/// A count of routes as the wire's number.
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn active_route(serving: &Serving, e: &EndpointRow, r: &RouteRow) -> ActiveRoute {
    let (requests, errors, latency_us, inflight) = match serving.existing_gateway(e.id) {
        Some(g) => {
            let c = g.counters(r.id);
            (
                c.requests.load(Ordering::Relaxed),
                c.errors.load(Ordering::Relaxed),
                c.latency_us.load(Ordering::Relaxed),
                c.inflight.load(Ordering::Relaxed),
            )
        }
        None => (0, 0, 0, 0),
    };
    let mean_latency_ms = if requests > 0 {
        latency_us as f64 / requests as f64 / 1000.0
    } else {
        0.0
    };
    ActiveRoute {
        route_id: r.id.to_string(),
        session_id: r.session_id.map(|s| s.to_string()),
        traffic_ratio: r.traffic_ratio,
        status: route_status(&r.status),
        requests,
        errors,
        inflight: u64::try_from(inflight).unwrap_or(u64::MAX),
        mean_latency_ms,
    }
}

/// The endpoint's address. It listens from its first replica's start, and is shown once a
/// replica has run: hidden while no route exists yet or every route is still provisioning
/// and no replica's session is RUNNING, so a client that looks at once after the create
/// sees none yet, and one that waits for a running replica and then reads the address
/// always finds it (from the listening gateway, in the instant before the reconciler has
/// stored it).
fn published_url(serving: &Serving, e: &EndpointRow, routes: &[RouteRow]) -> Option<String> {
    use bai_core::status::SessionStatus as S;
    let running = routes.iter().filter_map(|r| r.session_id).any(|sid| {
        serving
            .store
            .session(sid)
            .ok()
            .flatten()
            .is_some_and(|s| matches!(s.state.status, S::Running | S::RunningDegraded))
    });
    let first_start = !routes.is_empty() && routes.iter().all(|r| r.status == rs::PROVISIONING);
    if first_start && !running {
        return None;
    }
    match &e.state.url {
        Some(url) => Some(url.clone()),
        None if running => {
            let gw = serving.existing_gateway(e.id)?;
            let port = gw.port()?;
            Some(bai_serving::reconcile::endpoint_url(serving, port))
        }
        None => None,
    }
}

/// `GET /services/{id}` and the answer of `POST /services`.
pub fn info(serving: &Serving, e: &EndpointRow) -> ServiceInfo {
    let routes = serving.store.routes_of(e.id).unwrap_or_default();
    let active_routes = routes
        .iter()
        .filter(|r| rs::is_active(&r.status) || r.status == rs::TERMINATING)
        .map(|r| active_route(serving, e, r))
        .collect();
    ServiceInfo {
        endpoint_id: e.id.to_string(),
        model_id: e.spec.model_id.to_string(),
        extra_mounts: Vec::new(),
        name: e.name.clone(),
        replicas: e.spec.replicas,
        desired_session_count: e.spec.replicas,
        model_definition_path: e.spec.model_definition_path.clone(),
        active_routes,
        service_endpoint: published_url(serving, e, &routes),
        is_public: e.spec.open_to_public,
        runtime_variant: e.spec.runtime_variant.clone(),
        status: status(e, &routes),
        retries: e.state.retries,
        refused_requests: serving
            .existing_gateway(e.id)
            .map_or(0, |g| g.refused.load(Ordering::Relaxed)),
    }
}

/// An item of `GET /services` (Backend.AI's legacy list).
pub fn list_item(serving: &Serving, e: &EndpointRow) -> ServiceListItem {
    let routes = serving.store.routes_of(e.id).unwrap_or_default();
    ServiceListItem {
        id: e.id.to_string(),
        name: e.name.clone(),
        replicas: e.spec.replicas,
        desired_session_count: e.spec.replicas,
        active_route_count: count(routes.iter().filter(|r| rs::is_active(&r.status)).count()),
        service_endpoint: published_url(serving, e, &routes),
        is_public: e.spec.open_to_public,
        status: status(e, &routes),
        healthy_route_count: count(routes.iter().filter(|r| r.status == rs::HEALTHY).count()),
    }
}

/// GraphQL `Routing`.
pub fn routing_node(e: &EndpointRow, r: &RouteRow) -> Value {
    json!({
        "id": r.id.to_string(),
        "routing_id": r.id.to_string(),
        "endpoint": e.id.to_string(),
        "session": r.session_id.map(|s| s.to_string()),
        "status": r.status.to_ascii_uppercase(),
        "traffic_ratio": r.traffic_ratio,
        "created_at": r.created_at,
        "error_data": r.error.as_deref().and_then(|x| serde_json::from_str::<Value>(x).ok()),
    })
}

/// GraphQL `Endpoint`.
pub fn endpoint_node(serving: &Serving, e: &EndpointRow) -> Value {
    let routes = serving.store.routes_of(e.id).unwrap_or_default();
    let spec = &e.spec.replica;
    let slots = serde_json::to_value(&spec.resources).unwrap_or(json!({}));
    let lifecycle = match e.state.lifecycle.as_str() {
        "created" => "CREATED",
        "destroying" => "DESTROYING",
        _ => "DESTROYED",
    };
    json!({
        "id": e.id.to_string(),
        "endpoint_id": e.id.to_string(),
        "name": e.name,
        "image": e.spec.image,
        "image_object": {"name": e.spec.image},
        "domain": e.spec.domain_name,
        "project": e.spec.project,
        "resource_group": e.spec.scaling_group,
        "resource_slots": slots.to_string(),
        "url": e.state.url,
        "model": e.spec.model_id.to_string(),
        "model_definition_path": e.spec.model_definition_path,
        "model_mount_destination": e.spec.model_mount,
        "created_user": e.spec.created_user,
        "session_owner": e.spec.user_id,
        "tag": spec.tag,
        "startup_command": spec.startup_command,
        "bootstrap_script": spec.bootstrap_script,
        "callback_url": Value::Null,
        "environ": serde_json::to_string(&spec.environ).ok(),
        "resource_opts": serde_json::to_string(&spec.resource_opts).ok(),
        "replicas": e.spec.replicas,
        "desired_session_count": e.spec.replicas,
        "cluster_mode": spec.cluster_mode.as_str().to_ascii_uppercase().replace('-', "_"),
        "cluster_size": spec.cluster_size,
        "open_to_public": e.spec.open_to_public,
        "runtime_variant": e.spec.runtime_variant,
        "created_at": e.created_at,
        "destroyed_at": e.state.destroyed_at,
        "routings": routes.iter().map(|r| routing_node(e, r)).collect::<Vec<_>>(),
        "retries": e.state.retries,
        "status": status(e, &routes),
        "lifecycle_stage": lifecycle,
    })
}

/// The runtime variants bai serves.
pub const RUNTIMES: &[(&str, &str)] = &[
    ("custom", "Custom (Default)"),
    ("cmd", "Predefined Image Command"),
];

pub fn runtime_label(name: &str) -> &'static str {
    RUNTIMES
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("Custom (Default)", |(_, l)| l)
}

//! What the API shows of a service: the REST shape (`ServeInfoModel`) and the GraphQL
//! `Endpoint` / `Routing` nodes, from the store and the endpoint's counters.

use super::route_status as rs;
use super::spec::Spec;
use crate::state::Serving;
use bai_api::services::{ActiveRoute, RouteStatus, ServiceInfo, ServiceListItem, ServiceStatus};
use bai_store::{EndpointRow, RouteRow};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

/// The service's status as Backend.AI names it.
pub fn status(e: &EndpointRow, routes: &[RouteRow]) -> ServiceStatus {
    match e.lifecycle.as_str() {
        "destroying" => return ServiceStatus::Destroying,
        "destroyed" => return ServiceStatus::Destroyed,
        _ => {}
    }
    let healthy = routes.iter().filter(|r| r.status == rs::HEALTHY).count();
    let unhealthy = routes.iter().filter(|r| r.status == rs::UNHEALTHY).count();
    let active = routes.iter().filter(|r| rs::is_active(&r.status)).count();
    if e.replicas == 0 && active == 0 {
        ServiceStatus::Ready
    } else if healthy >= e.replicas as usize && healthy > 0 {
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

fn active_route(m: &Serving, e: &EndpointRow, r: &RouteRow) -> ActiveRoute {
    let (requests, errors, latency_us, inflight) = match m.existing_gateway(e.id) {
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

/// `GET /services/{id}` and the answer of `POST /services`.
pub fn info(m: &Serving, e: &EndpointRow) -> ServiceInfo {
    let routes = m.store.routes_of(e.id).unwrap_or_default();
    let active_routes = routes
        .iter()
        .filter(|r| rs::is_active(&r.status) || r.status == rs::TERMINATING)
        .map(|r| active_route(m, e, r))
        .collect();
    ServiceInfo {
        endpoint_id: e.id.to_string(),
        model_id: e.model_id.to_string(),
        extra_mounts: Vec::new(),
        name: e.name.clone(),
        replicas: e.replicas,
        desired_session_count: e.replicas,
        model_definition_path: e.model_definition_path.clone(),
        active_routes,
        service_endpoint: e.url.clone(),
        is_public: e.open_to_public,
        runtime_variant: e.runtime_variant.clone(),
        status: status(e, &routes),
        retries: e.retries,
        refused_requests: m
            .existing_gateway(e.id)
            .map_or(0, |g| g.refused.load(Ordering::Relaxed)),
    }
}

/// An item of `GET /services` (Backend.AI's legacy list).
pub fn list_item(m: &Serving, e: &EndpointRow) -> ServiceListItem {
    let routes = m.store.routes_of(e.id).unwrap_or_default();
    ServiceListItem {
        id: e.id.to_string(),
        name: e.name.clone(),
        replicas: e.replicas,
        desired_session_count: e.replicas,
        active_route_count: count(routes.iter().filter(|r| rs::is_active(&r.status)).count()),
        service_endpoint: e.url.clone(),
        is_public: e.open_to_public,
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
pub fn endpoint_node(m: &Serving, e: &EndpointRow) -> Value {
    let routes = m.store.routes_of(e.id).unwrap_or_default();
    let spec = Spec::of(e).ok();
    let slots = spec
        .as_ref()
        .and_then(|s| serde_json::to_value(&s.resources).ok())
        .unwrap_or(json!({}));
    let lifecycle = match e.lifecycle.as_str() {
        "created" => "CREATED",
        "destroying" => "DESTROYING",
        _ => "DESTROYED",
    };
    json!({
        "id": e.id.to_string(),
        "endpoint_id": e.id.to_string(),
        "name": e.name,
        "image": e.image,
        "image_object": {"name": e.image},
        "domain": e.domain_name,
        "project": e.project,
        "resource_group": e.scaling_group,
        "resource_slots": slots.to_string(),
        "url": e.url,
        "model": e.model_id.to_string(),
        "model_definition_path": e.model_definition_path,
        "model_mount_destination": e.model_mount,
        "created_user": e.created_user,
        "session_owner": e.user_id,
        "tag": spec.as_ref().and_then(|s| s.tag.clone()),
        "startup_command": spec.as_ref().and_then(|s| s.startup_command.clone()),
        "bootstrap_script": spec.as_ref().and_then(|s| s.bootstrap_script.clone()),
        "callback_url": Value::Null,
        "environ": spec.as_ref().and_then(|s| serde_json::to_string(&s.environ).ok()),
        "resource_opts": spec.as_ref().and_then(|s| serde_json::to_string(&s.resource_opts).ok()),
        "replicas": e.replicas,
        "desired_session_count": e.replicas,
        "cluster_mode": spec.as_ref().map(|s| s.cluster_mode.as_str().to_ascii_uppercase().replace('-', "_")),
        "cluster_size": spec.as_ref().map(|s| s.cluster_size),
        "open_to_public": e.open_to_public,
        "runtime_variant": e.runtime_variant,
        "created_at": e.created_at,
        "destroyed_at": e.destroyed_at,
        "routings": routes.iter().map(|r| routing_node(e, r)).collect::<Vec<_>>(),
        "retries": e.retries,
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

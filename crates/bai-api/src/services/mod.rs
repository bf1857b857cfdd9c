//! The serving area's bodies and routes: model services (Backend.AI's endpoints), their
//! routes (replicas) and tokens, as `backend.ai service …` calls them.

use crate::route::{Route, json};
use crate::sessions::NumberOrText;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

mod read;
mod rule_fields;
mod spellings;
pub use read::{MAX_REPLICAS, invalid_params, read_new_service, replicas_in};
pub use rule_fields::{RuleFields, canonical_rule_props};
pub use spellings::canonical_service_body;

// A rule and its enums are `bai-core`'s (the autoscaler's own), with their schemas from its
// `schema` feature.
pub use bai_core::serving::RouteError;
pub use bai_core::serving::autoscale::{Comparator, MetricSource, Rule, RuleMode};

/// `POST /services`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NewService {
    /// 4–64 letters, digits, `_` and `-` (also read as `service_name`,
    /// `clientSessionToken`); default `bai-serve-…`.
    #[serde(alias = "service_name", alias = "clientSessionToken", default)]
    pub name: Option<String>,
    /// Replicas wanted, 0–16 (also read as `desired_session_count`, `desiredSessionCount`).
    #[serde(alias = "desired_session_count", alias = "desiredSessionCount")]
    pub replicas: u32,
    /// The image (or alias) replicas run; also read as `lang`.
    #[serde(alias = "lang")]
    pub image: String,
    /// Accepted for compatibility; images here are of the host's architecture.
    #[serde(alias = "architecture", default)]
    pub arch: Option<String>,
    /// The project (default `default`).
    #[serde(default)]
    pub group: Option<String>,
    #[serde(default)]
    pub domain: Option<String>,
    /// Kernels per replica (1–64).
    #[serde(default)]
    pub cluster_size: Option<u32>,
    /// `single-node` or `multi-node`.
    #[serde(default)]
    pub cluster_mode: Option<String>,
    #[serde(default)]
    pub tag: Option<String>,
    /// Replaces the definition's command (runtime variant `cmd`).
    #[serde(default)]
    pub startup_command: Option<String>,
    #[serde(default)]
    pub bootstrap_script: Option<String>,
    /// Accepted, not called.
    #[serde(default)]
    pub callback_url: Option<String>,
    /// Administrators: the keypair that owns the replicas.
    #[serde(default)]
    pub owner_access_key: Option<String>,
    /// No token needed at the endpoint.
    #[serde(default)]
    pub open_to_public: Option<bool>,
    /// `custom` (a model definition; default) or `cmd`.
    #[serde(default)]
    pub runtime_variant: Option<String>,
    pub config: ServiceConfig,
}

/// `config` of [`NewService`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServiceConfig {
    /// The model folder (usage mode `model`), by name or id (also read as `model_id`).
    #[serde(alias = "model_id")]
    pub model: String,
    #[serde(default)]
    pub model_version: Option<Value>,
    /// Where the model folder is mounted, read-only (default `/models`).
    #[serde(default)]
    pub model_mount_destination: Option<String>,
    #[serde(default)]
    pub vfolder_subpath: Option<String>,
    /// The definition inside the folder (default `model-definition.yaml`, then `.yml`).
    #[serde(default)]
    pub model_definition_path: Option<String>,
    #[serde(default)]
    pub extra_mounts: Option<Map<String, Value>>,
    /// Environment variables of every replica.
    #[serde(default)]
    pub environ: Option<BTreeMap<String, String>>,
    /// The resource group (also read as `scalingGroup`).
    #[serde(alias = "scalingGroup", default)]
    pub scaling_group: Option<String>,
    /// Per kernel, as `POST /session` takes them.
    #[serde(default)]
    pub resources: Option<BTreeMap<String, NumberOrText>>,
    /// `shmem`, as `POST /session` takes it.
    #[serde(default)]
    pub resource_opts: Option<BTreeMap<String, NumberOrText>>,
}

/// A route's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RouteStatus {
    /// Its session is starting, or its model server has not passed a health check yet.
    Provisioning,
    /// In the endpoint's rotation.
    Healthy,
    /// Failing its health checks: out of rotation (replaced if it stays so).
    Unhealthy,
    /// Leaving: out of rotation, finishing its requests, then its session ends.
    Terminating,
    /// Its session ended before it was ever healthy (see `GET /services/{id}/errors`).
    FailedToStart,
}

/// A service's state as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ServiceStatus {
    /// No replica wanted and none running.
    Ready,
    /// Replicas wanted, none healthy yet.
    Provisioning,
    /// As many healthy replicas as wanted.
    Healthy,
    /// Some, not all, replicas healthy.
    Degraded,
    /// Replicas running, none healthy.
    Unhealthy,
    Destroying,
    Destroyed,
}

/// One replica in [`ServiceInfo`], with what the endpoint counted for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ActiveRoute {
    pub route_id: String,
    /// Its inference session.
    pub session_id: Option<String>,
    /// Its weight in the endpoint's balancing (0: no traffic).
    pub traffic_ratio: f64,
    pub status: RouteStatus,
    /// Requests the endpoint sent it.
    pub requests: u64,
    /// Of those, failed ones (no answer, or a 5xx).
    pub errors: u64,
    /// Requests on their way now.
    pub inflight: u64,
    pub mean_latency_ms: f64,
}

/// `GET /services/{id}`, and the answer of `POST /services` (`ServeInfoModel`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServiceInfo {
    pub endpoint_id: String,
    /// The model folder's id.
    pub model_id: String,
    pub extra_mounts: Vec<String>,
    pub name: String,
    pub replicas: u32,
    pub desired_session_count: u32,
    pub model_definition_path: Option<String>,
    pub active_routes: Vec<ActiveRoute>,
    /// The endpoint's URL: null until a first replica runs, then kept for good (requests
    /// wait there until one is healthy).
    pub service_endpoint: Option<String>,
    pub is_public: bool,
    pub runtime_variant: String,
    pub status: ServiceStatus,
    /// Replicas that failed to start since it was last fully healthy (5: it stops trying).
    pub retries: u32,
    /// Requests the endpoint refused for want of a valid token.
    pub refused_requests: u64,
}

/// An item of `GET /services`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServiceListItem {
    pub id: String,
    pub name: String,
    pub replicas: u32,
    pub desired_session_count: u32,
    pub active_route_count: u32,
    pub service_endpoint: Option<String>,
    pub is_public: bool,
    /// bai's: the service's state as a whole.
    pub status: ServiceStatus,
    /// bai's: routes in the endpoint's rotation.
    pub healthy_route_count: u32,
}

/// `POST /services/_/search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServiceSearch {
    /// `{"name": {"equals": …}}` or `{"name": {"contains": …}}`.
    #[serde(default)]
    pub filter: Option<Value>,
    #[serde(default)]
    pub offset: Option<u64>,
    #[serde(default)]
    pub limit: Option<u64>,
}

impl ServiceSearch {
    fn name_filter(&self, op: &str) -> Option<&str> {
        self.filter.as_ref()?.get("name")?.get(op)?.as_str()
    }

    /// `filter.name.equals`, when it is a text.
    pub fn name_equals(&self) -> Option<&str> {
        self.name_filter("equals")
    }

    /// `filter.name.contains` (or `i_contains`), lower-cased, when it is a text.
    pub fn name_contains(&self) -> Option<String> {
        self.filter
            .as_ref()
            .and_then(|f| f.get("name"))
            .and_then(|n| n.get("contains").or_else(|| n.get("i_contains")))
            .and_then(Value::as_str)
            .map(str::to_lowercase)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Pagination {
    pub total: u64,
    pub offset: u64,
    pub limit: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServiceSearchResult {
    pub items: Vec<ServiceInfo>,
    pub pagination: Pagination,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Runtime {
    pub name: String,
    pub human_readable_name: String,
}

/// `GET /services/_/runtimes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Runtimes {
    pub runtimes: Vec<Runtime>,
}

/// `POST /services/{id}/scale`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Scale {
    /// Replicas wanted, 0–16.
    pub to: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Scaled {
    /// Routes serving or starting now.
    pub current_route_count: u32,
    pub target_count: u32,
}

/// `POST /services/{id}/token`: a lifetime, or an end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TokenRequest {
    /// Seconds, or `30m`, `12h`, `3d`.
    #[serde(default)]
    pub duration: Option<NumberOrText>,
    /// Unix seconds.
    #[serde(default)]
    pub valid_until: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TokenReply {
    /// An HS256 JWT for `Authorization: Bearer …` (or `BackendAI …`) at the endpoint.
    pub token: String,
}

/// `PUT /services/{id}/routings/{route}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RouteUpdate {
    pub traffic_ratio: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Success {
    pub success: bool,
}

/// One route that failed to start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServiceError {
    pub route_id: String,
    pub session_id: Option<String>,
    /// `{"name", "repr", "src"}`: what failed and where (`create`, `session`, `health-check`).
    pub error: Value,
}

impl ServiceError {
    /// A failed route's error, from the JSON text its route keeps (`null` when none reads).
    pub fn new(route_id: String, session_id: Option<String>, stored: Option<&str>) -> ServiceError {
        ServiceError {
            route_id,
            session_id,
            error: stored
                .and_then(|x| serde_json::from_str::<Value>(x).ok())
                .unwrap_or(Value::Null),
        }
    }
}

/// `GET /services/{id}/errors`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServiceErrors {
    pub errors: Vec<ServiceError>,
    pub retries: u32,
}

/// `GET /services/{id}/rules`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuleList {
    pub rules: Vec<Rule>,
}

/// One firing of a rule, applied or not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Decision {
    pub id: String,
    pub at: String,
    pub rule_id: String,
    pub metric_source: MetricSource,
    pub metric_name: String,
    /// The metric's value it saw.
    pub value: Option<f64>,
    pub from_replicas: u32,
    pub to_replicas: u32,
    pub applied: bool,
    /// Why: the comparison or the tracking, and when not applied, what stopped it.
    pub note: String,
}

impl Decision {
    /// A decision as the autoscaler stored it (its JSON text, every field but `id` and
    /// `at`); None when the text does not read.
    pub fn from_stored(id: String, at: String, stored: &str) -> Option<Decision> {
        let mut fields: Map<String, Value> = serde_json::from_str(stored).ok()?;
        fields.insert("id".into(), id.into());
        fields.insert("at".into(), at.into());
        serde_json::from_value(Value::Object(fields)).ok()
    }
}

/// `GET /services/{id}/decisions`: newest first, at most 200.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DecisionList {
    pub decisions: Vec<Decision>,
}

/// `POST /services/_/check-definition`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DefinitionCheck {
    /// The model folder, by name or id.
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_definition_path: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HealthCheck {
    pub path: String,
    pub interval: f64,
    pub max_retries: u32,
    pub max_wait_time: f64,
    pub expected_status_code: u16,
    pub initial_delay: f64,
}

/// The model a definition serves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DefinedModel {
    pub name: String,
    pub model_path: String,
    pub port: u16,
    /// The shell command each replica runs.
    pub command: String,
    /// Null when the definition has none (the port is then checked by connecting).
    pub health_check: Option<HealthCheck>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DefinitionChecked {
    pub ok: bool,
    /// The file read, inside the folder.
    pub path: String,
    pub model: DefinedModel,
}

/// The serving area's operations.
pub fn routes() -> Vec<Route> {
    vec![
        Route::new("get", "/services").answers(200, json::<Vec<ServiceListItem>>()),
        Route::new("post", "/services")
            .takes(json::<NewService>())
            .answers(201, json::<ServiceInfo>()),
        Route::new("post", "/services/_/search")
            .takes(json::<ServiceSearch>())
            .answers(200, json::<ServiceSearchResult>()),
        Route::new("get", "/services/_/runtimes").answers(200, json::<Runtimes>()),
        Route::new("get", "/services/{id}").answers(200, json::<ServiceInfo>()),
        Route::new("delete", "/services/{id}").answers(200, json::<Success>()),
        Route::new("post", "/services/{id}/scale")
            .takes(json::<Scale>())
            .answers(200, json::<Scaled>()),
        Route::new("post", "/services/{id}/token")
            .takes(json::<TokenRequest>())
            .answers(200, json::<TokenReply>()),
        Route::new("post", "/services/{id}/sync").answers(200, json::<Success>()),
        Route::new("get", "/services/{id}/errors").answers(200, json::<ServiceErrors>()),
        Route::new("post", "/services/{id}/errors/clear").answers(200, json::<Success>()),
        Route::new("put", "/services/{id}/routings/{route}")
            .takes(json::<RouteUpdate>())
            .answers(200, json::<Success>()),
        Route::new("delete", "/services/{id}/routings/{route}").answers(200, json::<Success>()),
        Route::new("post", "/services/_/check-definition")
            .takes(json::<DefinitionCheck>())
            .answers(200, json::<DefinitionChecked>()),
        Route::new("get", "/services/{id}/rules").answers(200, json::<RuleList>()),
        Route::new("post", "/services/{id}/rules")
            .takes(json::<RuleFields>())
            .answers(201, json::<Rule>()),
        Route::new("patch", "/services/{id}/rules/{rule}")
            .takes(json::<RuleFields>())
            .answers(200, json::<Rule>()),
        Route::new("delete", "/services/{id}/rules/{rule}").answers(200, json::<Success>()),
        Route::new("get", "/services/{id}/decisions").answers(200, json::<DecisionList>()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_decision_reads_with_its_id_and_time() {
        let stored = r#"{"rule_id": "r1", "metric_source": "KERNEL", "metric_name": "cpu_util",
            "value": 2.0, "from_replicas": 1, "to_replicas": 2, "applied": true, "note": "up"}"#;
        let d = Decision::from_stored("d1".into(), "t1".into(), stored).expect("reads");
        assert_eq!(
            (d.id.as_str(), d.at.as_str(), d.rule_id.as_str()),
            ("d1", "t1", "r1")
        );
        assert_eq!(
            (d.metric_source, d.value, d.to_replicas),
            (MetricSource::Kernel, Some(2.0), 2)
        );
        assert!(Decision::from_stored("d".into(), "t".into(), "{}").is_none());
        assert!(Decision::from_stored("d".into(), "t".into(), "not json").is_none());
    }
}

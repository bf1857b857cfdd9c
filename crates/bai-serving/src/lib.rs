//! Model serving: services (Backend.AI's endpoints) of inference sessions behind one
//! persistent URL each.
//!
//! * [`definition`]: `model-definition.yaml` of a model folder, and the replica's command;
//! * [`create`]: validating `POST /services` and storing the service;
//! * [`replica`]: one route's inference session;
//! * [`probe`]: a running route's health checks (readiness and liveness);
//! * [`reconcile`]: desired replicas against live routes, always (recovery, scaling, retries,
//!   taking a service down), acting on [`decide`]'s answers (no I/O there);
//! * [`gateway`]: the endpoint proxy (tokens, balancing, retry, counters);
//! * [`token`]: the services' HS256 tokens;
//! * [`autoscale`]: rules (Backend.AI's thresholds and target tracking) and their decisions.
//!
//! What the API shows of a service is built at the edge (`bai-manager`'s `api/views`).
//!
//! It stands on `bai-control` (the lifecycle makes each route's session) and `bai-ground`
//! (the registry, the bus, storage, readings), naming each crate it uses, and under the HTTP
//! edge (`bai-manager`), which it cannot import.
#![forbid(unsafe_code)]

pub mod autoscale;
pub mod create;
pub mod decide;
pub mod definition;
pub mod failure;
pub mod gateway;
pub mod limits;
pub mod probe;
pub mod reconcile;
pub mod replica;
pub mod route_status;
pub mod state;
pub mod token;

pub use limits::MAX_RETRIES;

//! bai's wire contract as types, without I/O: the bodies of every route bai serves on the
//! Backend.AI v9 contract and on its own endpoints, each with its JSON Schema.
//!
//! [`route::routes`] names, for each operation, its request and response bodies;
//! [`openapi::generate`] turns the hand-written operation texts (`openapi-base.json`: summaries,
//! parameters, tags) and these types into `docs/openapi.json`, and a test fails when the
//! committed file is not what the types make.
#![forbid(unsafe_code)]

pub mod body;
pub mod check;
pub mod folders;
pub mod images;
pub mod openapi;
pub mod problem;
pub mod read;
pub mod resources;
pub mod route;
pub mod schema;
pub mod server;
pub mod services;
pub mod sessions;
pub mod spellings;

pub use problem::Problem;
pub use route::{Body, Route, routes};

/// The route tables of the areas, one function each.
pub(crate) static AREAS: &[fn() -> Vec<Route>] = &[
    server::routes,
    sessions::routes,
    resources::routes,
    folders::routes,
    services::routes,
    images::routes,
];

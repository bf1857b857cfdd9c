//! A small executor for the legacy Backend.AI GraphQL endpoint (`POST /admin/gql`).
//!
//! The official client is strict about the shape of answers: every object must hold exactly
//! the selected fields, in selection order, with duplicated selections merged. So execution
//! is split in two: a [`Resolver`] returns full JSON for each root field, and the executor
//! projects the (merged) selection set over it.
#![forbid(unsafe_code)]

mod plan;
mod project;

pub use plan::FieldPlan;

use serde_json::{Map, Value, json};

/// One GraphQL request.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub query: String,
    pub variables: Map<String, Value>,
    pub operation_name: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperationKind {
    Query,
    Mutation,
}

/// A root field that could not be resolved; it becomes `{"message", "path"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub message: String,
}

/// Resolves one root field to full JSON (object, list, scalar or null).
pub trait Resolver {
    fn resolve(
        &self,
        kind: OperationKind,
        field: &str,
        args: &Map<String, Value>,
    ) -> Result<Value, FieldError>;
}

/// Runs a request. Always returns `{"data": …}`, plus `"errors": […]` when anything failed.
pub fn execute(req: &Request, resolver: &dyn Resolver) -> Value {
    let (kind, fields) = match plan::plan(req) {
        Ok(p) => p,
        Err(e) => return json!({"data": Value::Null, "errors": [{"message": e}]}),
    };
    let mut data = Map::new();
    let mut errors = Vec::new();
    for f in &fields {
        let value = match resolver.resolve(kind, &f.name, &f.args) {
            Ok(v) => project::project(&v, f),
            Err(e) => {
                errors.push(json!({"message": e.message, "path": [f.key]}));
                Value::Null
            }
        };
        data.insert(f.key.clone(), value);
    }
    let mut out = Map::new();
    out.insert("data".into(), Value::Object(data));
    if !errors.is_empty() {
        out.insert("errors".into(), Value::Array(errors));
    }
    Value::Object(out)
}

//! A small executor for the legacy Backend.AI GraphQL endpoint (`POST /admin/gql`).
//!
//! The official client is strict about the shape of answers: every object must hold exactly
//! the selected fields, in selection order, with duplicated selections merged. So execution
//! is split in two: a [`Resolver`] returns full JSON for each root field, and the executor
//! projects the (merged) selection set over it.
//!
//! * [`plan`](crate::plan): operation choice, fragments, directives, merging;
//! * [`args`](crate::args): variables and argument values;
//! * [`types`](crate::types): the declarable variable types and their input coercion;
//! * [`project`](crate::project): the projection of resolved JSON over a selection.
#![forbid(unsafe_code)]

mod args;
mod plan;
mod project;
mod types;

use serde_json::{Map, Value, json};

/// One GraphQL request.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub query: String,
    pub variables: Map<String, Value>,
    pub operation_name: Option<String>,
}

impl Request {
    /// Reads a standard GraphQL-over-HTTP body: `{"query", "variables"?, "operationName"?}`.
    /// `variables` may be absent, null, an object, or a string holding a JSON object.
    pub fn from_body(body: &Value) -> Result<Request, String> {
        let query = body
            .get("query")
            .and_then(Value::as_str)
            .ok_or("the body needs a GraphQL \"query\" string")?
            .to_string();
        let variables = match body.get("variables") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(Value::String(s)) if s.trim().is_empty() => Map::new(),
            Some(Value::String(s)) => match serde_json::from_str(s) {
                Ok(Value::Object(m)) => m,
                _ => return Err("\"variables\" must be a JSON object".into()),
            },
            Some(_) => return Err("\"variables\" must be a JSON object".into()),
        };
        let operation_name = match body.get("operationName") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err("\"operationName\" must be a string".into()),
        };
        Ok(Request {
            query,
            variables,
            operation_name,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperationKind {
    Query,
    Mutation,
}

/// A root field that could not be resolved; it becomes `{"message", "path": [key]}`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FieldError {
    pub message: String,
}

impl FieldError {
    pub fn new(message: impl Into<String>) -> Self {
        FieldError {
            message: message.into(),
        }
    }
}

/// Resolves one root field to full JSON (object, list, scalar or null); the executor then
/// keeps only the selected fields. `args` holds the field's arguments with variables
/// substituted, in written order.
pub trait Resolver {
    fn resolve(
        &self,
        kind: OperationKind,
        field: &str,
        args: &Map<String, Value>,
    ) -> Result<Value, FieldError>;
}

/// Runs a request. Always returns `{"data": …}`, plus `"errors": […]` when anything failed:
/// a request that cannot be planned (syntax, variables, …) gives `"data": null`; a failing
/// root field gives `null` under its key and an error with `"path": [key]`, and the other
/// root fields are still resolved. Root fields run in selection order, once per response key.
pub fn execute(req: &Request, resolver: &dyn Resolver) -> Value {
    let plan = match plan::plan(req) {
        Ok(p) => p,
        Err(e) => return json!({"data": Value::Null, "errors": [{"message": e}]}),
    };
    let mut data = Map::new();
    let mut errors = Vec::new();
    for f in &plan.fields {
        let value = if f.name == "__typename" {
            Value::String(format!("{:?}", plan.kind))
        } else {
            match resolver.resolve(plan.kind, &f.name, &f.args) {
                Ok(v) => project::project(&v, f),
                Err(e) => {
                    errors.push(json!({"message": e.message, "path": [f.key]}));
                    Value::Null
                }
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

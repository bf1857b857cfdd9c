//! `docs/openapi.json`, generated: the hand-written operation texts (summaries, parameters,
//! tags, security) with every body's schema taken from the types of this crate.

use crate::route::{Body, Route, routes};
use schemars::generate::SchemaSettings;
use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value, json};

#[derive(Debug, PartialEq, Eq)]
pub enum OpenApiError {
    /// Operations of the document that no route of the table describes.
    Undescribed(Vec<String>),
    /// Routes of the table that the document does not have.
    Unknown(Vec<String>),
    /// The document is not an OpenAPI object with `paths`.
    Malformed(&'static str),
}

impl std::fmt::Display for OpenApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenApiError::Undescribed(ops) => {
                write!(
                    f,
                    "operations without their bodies in bai-api: {}",
                    ops.join(", ")
                )
            }
            OpenApiError::Unknown(ops) => {
                write!(
                    f,
                    "bai-api describes operations the document lacks: {}",
                    ops.join(", ")
                )
            }
            OpenApiError::Malformed(why) => write!(f, "not an OpenAPI document: {why}"),
        }
    }
}

impl std::error::Error for OpenApiError {}

const METHODS: &[&str] = &["get", "put", "post", "delete", "options", "head", "patch"];

/// The generated document: `base` with `components.schemas` from the types and each
/// operation's request body and success response filled in from [`routes`].
pub fn generate(base: &Value) -> Result<Value, OpenApiError> {
    let mut doc = base.clone();
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.definitions_path = "/components/schemas".into();
    });
    let mut schemas = SchemaGenerator::new(settings);
    let problem = schemas.subschema_for::<crate::Problem>();
    // The event stream is not JSON, so no route names these; they are made here so the
    // document (and the web UI's types generated from it) has the event names and data.
    schemas.subschema_for::<crate::sessions::EventName>();
    schemas.subschema_for::<crate::sessions::EventData>();
    let table = routes();
    let paths = doc
        .get_mut("paths")
        .and_then(Value::as_object_mut)
        .ok_or(OpenApiError::Malformed("no paths"))?;
    let mut undescribed = Vec::new();
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            return Err(OpenApiError::Malformed("a path item is not an object"));
        };
        for (method, op) in item.iter_mut() {
            if !METHODS.contains(&method.as_str()) {
                continue;
            }
            let Some(route) = table.iter().find(|r| r.method == method && r.path == path) else {
                undescribed.push(format!("{} {path}", method.to_uppercase()));
                continue;
            };
            fill(op, route, &mut schemas, &problem);
        }
    }
    let unknown: Vec<String> = table
        .iter()
        .filter(|r| paths.get(r.path).and_then(|i| i.get(r.method)).is_none())
        .map(|r| format!("{} {}", r.method.to_uppercase(), r.path))
        .collect();
    if !undescribed.is_empty() {
        return Err(OpenApiError::Undescribed(undescribed));
    }
    if !unknown.is_empty() {
        return Err(OpenApiError::Unknown(unknown));
    }
    let components = doc
        .get_mut("components")
        .and_then(Value::as_object_mut)
        .ok_or(OpenApiError::Malformed("no components"))?;
    components.insert(
        "responses".into(),
        json!({"Problem": {
            "description": "An error, as a JSON problem.",
            "content": {"application/problem+json": {"schema": problem},
                        "application/json": {"schema": problem}},
        }}),
    );
    let defs: Map<String, Value> = schemas.take_definitions(true).into_iter().collect();
    components.insert("schemas".into(), Value::Object(defs));
    Ok(canonical(doc))
}

/// The same document with every object's keys in sorted order, so its text does not depend
/// on how `serde_json` keeps maps in a given build (`preserve_order` or not).
pub fn canonical(v: Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, canonical(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(canonical).collect()),
        other => other,
    }
}

/// The content of a body: media type → schema.
fn content(body: &Body, schemas: &mut SchemaGenerator) -> Option<Value> {
    Some(match body {
        Body::Json(schema) => json!({"application/json": {"schema": schema(schemas)}}),
        Body::Bytes(media) => {
            json!({*media: {"schema": {"type": "string", "contentMediaType": media}}})
        }
        Body::Multipart(media) => json!({*media: {"schema": {
            "type": "object",
            "description": "one part per file, named by its path",
            "additionalProperties": {"type": "string", "contentMediaType": "application/octet-stream"},
        }}}),
        Body::Events(data) => json!({"text/event-stream": {
            "schema": {
                "type": "object",
                "description": "one server-sent event; its `data` is the JSON text of `x-bai-event-data`",
                "properties": {
                    "event": {"type": "string"},
                    "id": {"type": "string"},
                    "data": {"type": "string"},
                    "retry": {"type": "integer"},
                },
            },
            "x-bai-event-data": data(schemas),
        }}),
        Body::Any => json!({"*/*": {"schema": {}}}),
        Body::Upgrade | Body::Empty => return None,
    })
}

fn fill(op: &mut Value, route: &Route, schemas: &mut SchemaGenerator, problem: &Schema) {
    if let Some(body) = &route.request {
        let req = &mut op["requestBody"];
        if !req.is_object() {
            *req = json!({"required": true});
        }
        match content(body, schemas) {
            Some(c) => req["content"] = c,
            None => {
                if let Some(o) = op.as_object_mut() {
                    o.remove("requestBody");
                }
            }
        }
    }
    let (status, body) = &route.response;
    let responses = &mut op["responses"];
    if !responses.is_object() {
        *responses = json!({});
    }
    // The success answer is the table's: other 1xx–3xx answers of the text are replaced.
    let text = responses.as_object_mut().and_then(|r| {
        let mut keys: Vec<String> = r
            .keys()
            .filter(|k| k.starts_with(['1', '2', '3']))
            .cloned()
            .collect();
        // The text of the table's own status wins; otherwise the lowest status's, so the
        // choice does not hang on the map's key order (serde_json's `preserve_order`).
        keys.sort();
        let own = status.to_string();
        let pick = keys.iter().position(|k| *k == own).unwrap_or(0);
        let texts: Vec<Option<Value>> = keys.iter().map(|k| r.remove(k)).collect();
        texts.into_iter().nth(pick).flatten()
    });
    let description = text
        .as_ref()
        .and_then(|t| t.get("description"))
        .cloned()
        .unwrap_or_else(|| json!(default_description(*status)));
    let mut answer = json!({"description": description});
    if let Some(c) = content(body, schemas) {
        answer["content"] = c;
    }
    responses[status.to_string()] = answer;
    for (status, body) in route.also.iter().flatten() {
        let refusal = status.starts_with(['4', '5']);
        let description = if !refusal {
            json!(default_description(status.parse().unwrap_or(200)))
        } else if matches!(body, Body::Json(_)) {
            json!("A refusal with a body of its own, or a problem.")
        } else {
            json!("A page for the browser.")
        };
        let mut answer = json!({"description": description});
        if let Some(mut c) = content(body, schemas) {
            if refusal && let (Body::Json(_), Some(json)) = (body, c.get_mut("application/json")) {
                let own = json["schema"].take();
                json["schema"] = json!({"anyOf": [own, problem]});
                c["application/problem+json"] = json!({"schema": problem});
            }
            answer["content"] = c;
        }
        responses[*status] = answer;
    }
}

fn default_description(status: u16) -> &'static str {
    match status {
        101 => "Switching Protocols",
        201 => "Created",
        204 => "No Content",
        _ => "OK",
    }
}

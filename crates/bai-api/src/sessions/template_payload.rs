//! A template payload read at the edge: JSON, or YAML (a list, one item, or a stream of
//! documents with one item each). Each item is `{"name"?, "template"}` or a bare template.
//! The manager then checks each (`api/templates/payload.rs`).

use super::templates::TemplateItem;
use bai_core::Problem;
use serde::Deserialize;
use serde_json::{Value, json};

/// The items of a payload, in order. A payload with no item is refused.
pub fn read_template_payload(text: &str) -> Result<Vec<TemplateItem>, Problem> {
    let docs = match serde_json::from_str::<Value>(text) {
        Ok(v) => vec![v],
        Err(_) => yaml_documents(text)?,
    };
    let mut values = Vec::new();
    for d in docs {
        match d {
            Value::Array(a) => values.extend(a),
            Value::Null => {}
            v => values.push(v),
        }
    }
    if values.is_empty() {
        return Err(Problem::invalid("the payload holds no template"));
    }
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| item(i + 1, v))
        .collect()
}

fn yaml_documents(text: &str) -> Result<Vec<Value>, Problem> {
    serde_yaml::Deserializer::from_str(text)
        .map(|doc| {
            Value::deserialize(doc)
                .map_err(|e| Problem::invalid(format!("the payload is neither JSON nor YAML: {e}")))
        })
        .collect()
}

fn item(n: usize, v: Value) -> Result<TemplateItem, Problem> {
    if !v.is_object() {
        return Err(Problem::invalid(format!(
            "template {n} of the payload is not an object"
        )));
    }
    let v = if v.get("template").is_none() && v.get("kind").is_some() {
        json!({ "template": v })
    } else {
        v
    };
    serde_json::from_value(v)
        .map_err(|e| Problem::invalid(format!("template {n} of the payload: {e}")))
}

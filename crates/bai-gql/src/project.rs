//! Projection: keep exactly the planned fields of a resolved value, in plan order.

use crate::plan::FieldPlan;
use serde_json::{Map, Value};

pub fn project(value: &Value, plan: &FieldPlan) -> Value {
    project_sub(value, &plan.sub, &plan.name)
}

fn camel(name: &str) -> String {
    name.split('_')
        .map(|p| {
            let mut c = p.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

fn project_sub(value: &Value, sub: &[FieldPlan], type_hint: &str) -> Value {
    if sub.is_empty() {
        return value.clone();
    }
    match value {
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| project_sub(i, sub, type_hint))
                .collect(),
        ),
        Value::Object(obj) => {
            let mut out = Map::new();
            for f in sub {
                let v = if f.name == "__typename" {
                    obj.get("__typename")
                        .cloned()
                        .unwrap_or_else(|| Value::String(camel(type_hint)))
                } else {
                    project_sub(obj.get(&f.name).unwrap_or(&Value::Null), &f.sub, &f.name)
                };
                out.insert(f.key.clone(), v);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

//! Projection: keep exactly the planned fields of a resolved value, in plan order.

use crate::plan::FieldPlan;
use serde_json::{Map, Value};

/// Projects a root field's resolved value over its selection.
pub fn project(value: &Value, field: &FieldPlan) -> Value {
    project_sub(value, &field.sub, &field.name)
}

/// `compute_session_list` → `ComputeSessionList`: the `__typename` fallback.
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

/// `type_hint` is the name of the field that produced `value`, for `__typename`.
fn project_sub(value: &Value, sub: &[FieldPlan], type_hint: &str) -> Value {
    if sub.is_empty() {
        // A leaf: whatever the resolver gave (JSONString fields are its business).
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
            let mut out = Map::with_capacity(sub.len());
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
        // A sub-selection on a scalar (or null): passed through.
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(key: &str, name: &str, sub: Vec<FieldPlan>) -> FieldPlan {
        FieldPlan {
            key: key.into(),
            name: name.into(),
            args: Map::new(),
            sub,
        }
    }

    fn leaf(name: &str) -> FieldPlan {
        f(name, name, vec![])
    }

    fn keys(v: &Value) -> Vec<&str> {
        v.as_object().unwrap().keys().map(String::as_str).collect()
    }

    #[test]
    fn objects_keep_exactly_the_selection_in_order() {
        let root = f(
            "s",
            "compute_session",
            vec![
                leaf("name"),
                f("n", "name", vec![]),
                leaf("missing"),
                leaf("status_data"),
                f(
                    "containers",
                    "containers",
                    vec![leaf("id"), leaf("__typename")],
                ),
                f("scalar", "scalar", vec![leaf("x")]),
                f("nothing", "nothing", vec![leaf("x")]),
                leaf("__typename"),
            ],
        );
        let v = json!({
            "zzz": 1, "status_data": "{\"a\": 1}", "name": "s1", "scalar": 5, "nothing": null,
            "containers": [{"b": 2, "id": "k1"}, {"id": "k2", "__typename": "ComputeContainer"}],
        });
        let out = project(&v, &root);
        assert_eq!(
            keys(&out),
            [
                "name",
                "n",
                "missing",
                "status_data",
                "containers",
                "scalar",
                "nothing",
                "__typename"
            ]
        );
        assert_eq!(
            out,
            json!({
                "name": "s1", "n": "s1", "missing": null, "status_data": "{\"a\": 1}",
                "containers": [{"id": "k1", "__typename": "Containers"},
                               {"id": "k2", "__typename": "ComputeContainer"}],
                "scalar": 5, "nothing": null, "__typename": "ComputeSession",
            })
        );
        assert_eq!(keys(&out["containers"][0]), ["id", "__typename"]);
    }

    #[test]
    fn lists_of_lists_and_leaves_pass_through() {
        let root = f("m", "m", vec![leaf("a")]);
        let out = project(&json!([[{"a": 1, "b": 2}], [], null]), &root);
        assert_eq!(out, json!([[{"a": 1}], [], null]));
        let leaf_root = leaf("vfolder_mounts");
        assert_eq!(
            project(&json!(["vf", {"x": 1}]), &leaf_root),
            json!(["vf", {"x": 1}])
        );
    }
}

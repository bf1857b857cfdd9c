//! Rewriting a request body that clients spell in several ways into the one spelling its
//! type reads. Serde's aliases refuse a body that gives two spellings of a field at once,
//! and cannot take an empty text for "not given"; these steps run first.

use serde_json::{Map, Value};

/// A field with several spellings: the name the type reads, then every spelling in the
/// order it is looked for (the first given wins).
pub(crate) type Spellings = (&'static str, &'static [&'static str]);

/// "Not given": `null` or an empty text.
pub(crate) fn given(v: &Value) -> bool {
    !matches!(v, Value::Null) && v.as_str() != Some("")
}

/// Keeps the first given spelling of each field under the type's name, and drops the rest.
pub(crate) fn one_spelling(obj: &mut Map<String, Value>, fields: &[Spellings]) {
    for (canonical, spellings) in fields {
        let first = spellings
            .iter()
            .find_map(|k| obj.get(*k).filter(|v| given(v)).cloned());
        for k in *spellings {
            obj.remove(*k);
        }
        if let Some(v) = first {
            obj.insert((*canonical).to_string(), v);
        }
    }
}

/// Drops the empty texts and `null`s among an object's own fields (not inside them).
pub(crate) fn drop_empty(obj: &mut Map<String, Value>) {
    obj.retain(|_, v| given(v));
}

/// A body's `config`: one spelling per field of `fields`, its empty fields dropped, its
/// environment values texts.
pub(crate) fn tidy_config(top: &mut Map<String, Value>, fields: &[Spellings]) {
    if let Some(Value::Object(config)) = top.get_mut("config") {
        one_spelling(config, fields);
        drop_empty(config);
        environ_as_texts(config, "environ");
    }
}

/// An environment value as its text: clients send numbers and booleans too, and `null`
/// for "".
pub fn env_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Environment values are texts ([`env_text`]).
fn environ_as_texts(obj: &mut Map<String, Value>, key: &str) {
    if let Some(Value::Object(env)) = obj.get_mut(key) {
        for v in env.values_mut() {
            if !v.is_string() {
                *v = Value::String(env_text(v));
            }
        }
    }
}

/// A whole number sent as its text (`"2"`, `" 3 "`) read as the number.
pub(crate) fn number_from_text(obj: &mut Map<String, Value>, key: &str) {
    if let Some(v) = obj.get_mut(key)
        && let Some(n) = v.as_str().and_then(|s| s.trim().parse::<i64>().ok())
    {
        *v = Value::from(n);
    }
}

/// A decimal sent as its text (`"2.5"`, `" 3 "`) read as the number.
pub(crate) fn float_from_text(obj: &mut Map<String, Value>, key: &str) {
    if let Some(v) = obj.get_mut(key)
        && let Some(n) = v
            .as_str()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .and_then(serde_json::Number::from_f64)
    {
        *v = Value::Number(n);
    }
}

/// A word in the spelling the type reads, when it is a text.
pub(crate) fn reword(obj: &mut Map<String, Value>, key: &str, how: fn(&str) -> String) {
    if let Some(Value::String(s)) = obj.get_mut(key) {
        *s = how(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn the_first_given_spelling_wins_and_the_others_go() {
        let mut o = obj(json!({"b": "", "c": "third", "a2": "x"}));
        one_spelling(&mut o, &[("a", &["a", "b", "c"])]);
        assert_eq!(Value::Object(o), json!({"a": "third", "a2": "x"}));
    }

    #[test]
    fn numbers_in_text_and_environment_values_are_rewritten() {
        let mut o = obj(json!({"n": " 3 ", "bad": "x", "env": {"A": 1, "B": null}}));
        number_from_text(&mut o, "n");
        number_from_text(&mut o, "bad");
        environ_as_texts(&mut o, "env");
        assert_eq!(
            Value::Object(o),
            json!({"n": 3, "bad": "x", "env": {"A": "1", "B": ""}})
        );
    }
}

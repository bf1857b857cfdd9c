//! Request bodies, read at the HTTP edge: as their type, with a 400 that says why not, or,
//! for the loose bodies Backend.AI's clients send (a field in any JSON kind, or in the query
//! instead), as [`Fields`] whose getters answer typed values. The JSON stays in this crate:
//! the edge's handlers get types.

use bai_core::Problem;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Whether a body holds nothing but white space (read as `{}`).
fn is_blank(body: &[u8]) -> bool {
    body.iter().all(u8::is_ascii_whitespace)
}

/// A request body as JSON (`{}` when empty), or a 400 problem saying why it is not JSON.
pub(crate) fn json_body(body: &[u8]) -> Result<Value, Problem> {
    if body.is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_slice(body)
        .map_err(|e| Problem::invalid(format!("the request body is not valid JSON: {e}")))
}

/// A request body read as its type `T` (a blank body reads as `{}`). A body that is not
/// JSON, or not a `T`, is a 400 that names the field at fault and what it should be, e.g.
/// `allow: invalid type: string "false", expected a boolean`.
pub fn typed_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, Problem> {
    let body: &[u8] = if is_blank(body) { b"{}" } else { body };
    let mut de = serde_json::Deserializer::from_slice(body);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        refusal(&path, e.into_inner())
    })?;
    de.end().map_err(|e| refusal(".", e))?;
    Ok(value)
}

/// A JSON value read as its type `T`; when it does not read, a 400 that names the field at
/// fault, as [`typed_body`]'s does.
pub(crate) fn typed_value<T: DeserializeOwned>(body: Value) -> Result<T, Problem> {
    crate::read::from_value(body).map_err(|e| Problem::invalid(e.to_string()))
}

/// The 400 of a body that did not read, `path` being where (`.`: the body itself).
fn refusal(path: &str, inner: serde_json::Error) -> Problem {
    if inner.is_syntax() || inner.is_eof() {
        return Problem::invalid(format!("the request body is not valid JSON: {inner}"));
    }
    let text = inner.to_string();
    // The position inside the body says nothing a client can use; the field does.
    let what = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(w, _)| w);
    if path == "." {
        Problem::invalid(format!("the request body does not read: {what}"))
    } else {
        Problem::invalid(format!("{path}: {what}"))
    }
}

/// What a field of a loose body holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    Absent,
    Null,
    Text(String),
    /// Another kind of value, as JSON text (for the 400 that names it).
    Other(String),
}

/// A loose request body: its fields read one by one, each as the kind asked for. A blank
/// body has none.
#[derive(Debug, Clone)]
pub struct Fields(Value);

impl Fields {
    /// `body` as JSON (`{}` when empty), or a 400 saying why it is not JSON.
    pub fn read(body: &[u8]) -> Result<Fields, Problem> {
        json_body(body).map(Fields)
    }

    /// Whether the body is a JSON object.
    pub fn is_object(&self) -> bool {
        self.0.is_object()
    }

    /// `key`'s value when it is there and not `null`.
    fn present(&self, key: &str) -> Option<&Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    /// Whether `key` is there and not `null`.
    pub fn given(&self, key: &str) -> bool {
        self.present(key).is_some()
    }

    /// `key` when it is a text (a field of another kind counts as absent).
    pub fn text(&self, key: &str) -> Option<String> {
        self.0.get(key).and_then(Value::as_str).map(str::to_string)
    }

    /// `key` when it is a whole number of 0 or more (a field of another kind counts as
    /// absent).
    pub fn unsigned(&self, key: &str) -> Option<u64> {
        self.0.get(key).and_then(Value::as_u64)
    }

    /// What `key` holds, by kind.
    pub fn lookup(&self, key: &str) -> Lookup {
        match self.0.get(key) {
            None => Lookup::Absent,
            Some(Value::Null) => Lookup::Null,
            Some(Value::String(s)) => Lookup::Text(s.clone()),
            Some(other) => Lookup::Other(other.to_string()),
        }
    }

    /// `key` when it is a boolean (a field of another kind counts as absent).
    pub fn flag(&self, key: &str) -> Option<bool> {
        self.0.get(key).and_then(Value::as_bool)
    }

    /// `key` as an amount's text (a number or a text, e.g. `3600`, `"30m"`), when given.
    pub fn amount(&self, key: &str) -> Option<String> {
        self.present(key).map(bai_core::resources::amount_text)
    }

    /// `key` as a whole number (a fraction is cut) when given; `Err` when it is given as
    /// anything but a number.
    pub fn whole_number(&self, key: &str) -> Option<Result<i64, ()>> {
        let v = self.present(key)?;
        Some(
            v.as_i64()
                .or_else(|| v.as_f64().map(|f| f as i64))
                .ok_or(()),
        )
    }

    /// The body as its type `T`, a field that does not read named in the 400.
    pub fn typed<T: DeserializeOwned>(self) -> Result<T, Problem> {
        typed_value(self.0)
    }

    /// The body as `T`, all of whose fields are the texts named in `required` (in the order
    /// they are checked): a body that lacks one of them, or has it as anything but a text, is
    /// answered "NAME is required"; other fields are ignored.
    pub fn typed_with_texts<T: DeserializeOwned>(self, required: &[&str]) -> Result<T, Problem> {
        for k in required {
            self.required_text(k)?;
        }
        serde_json::from_value(self.0)
            .map_err(|e| Problem::invalid(format!("the request body does not read: {e}")))
    }

    /// `key` as a text, or the 400 "KEY is required".
    pub fn required_text(&self, key: &str) -> Result<String, Problem> {
        self.text(key)
            .ok_or_else(|| Problem::invalid(format!("{key} is required")))
    }

    /// The body's JSON, for a reader of this crate.
    pub(crate) fn into_value(self) -> Value {
        self.0
    }

    pub(crate) fn value(&self) -> &Value {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    struct Access {
        #[serde(default)]
        allow: Option<bool>,
        name: String,
    }

    #[test]
    fn a_wrong_type_names_its_field() {
        let p = typed_body::<Access>(br#"{"name": "g", "allow": "false"}"#).unwrap_err();
        assert!(p.msg.starts_with("allow: invalid type"), "{}", p.msg);
        assert!(p.msg.contains("boolean"), "{}", p.msg);
        assert!(!p.msg.contains(" at line "), "{}", p.msg);
    }

    #[test]
    fn a_missing_field_is_named() {
        let p = typed_body::<Access>(b"  ").unwrap_err();
        assert!(p.msg.contains("missing field `name`"), "{}", p.msg);
    }

    #[test]
    fn broken_json_and_trailing_text_are_refused() {
        for body in [&br#"{"name": "#[..], br#"{"name": "g"} x"#] {
            let p = typed_body::<Access>(body).unwrap_err();
            assert!(p.msg.contains("not valid JSON"), "{}", p.msg);
        }
        let ok: Access = typed_body(br#"{"name": "g"}"#).expect("reads");
        assert_eq!((ok.name.as_str(), ok.allow), ("g", None));
    }
}

//! Request bodies: read as JSON, or as their `bai_api` type, with a 400 that says why not.

use bai_core::Problem;
use serde::de::DeserializeOwned;
use serde_json::json;

/// Whether a body holds nothing but white space (read as `{}`).
fn is_blank(body: &[u8]) -> bool {
    body.iter().all(u8::is_ascii_whitespace)
}

/// A request body as JSON (`{}` when empty), or a 400 problem saying why it is not JSON.
pub(crate) fn json_body(body: &[u8]) -> Result<serde_json::Value, Problem> {
    if body.is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_slice(body)
        .map_err(|e| Problem::invalid(format!("the request body is not valid JSON: {e}")))
}

/// A request body read as its type `T` (a blank body reads as `{}`). A body that is not
/// JSON, or not a `T`, is a 400 that names the field at fault and what it should be, e.g.
/// `allow: invalid type: string "false", expected a boolean`.
pub(crate) fn typed_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, Problem> {
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
pub(crate) fn typed_value<T: DeserializeOwned>(body: serde_json::Value) -> Result<T, Problem> {
    bai_api::read::from_value(body).map_err(|e| Problem::invalid(e.to_string()))
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

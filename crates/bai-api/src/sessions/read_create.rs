//! A `POST /session` body read at the edge: in any spelling clients use, a field that does
//! not read named, with the digest of the request that makes a retry recognisable.

use super::create::CreateRequest;
use super::create_spellings::canonical_create_body;
use crate::body::Fields;
use bai_core::Problem;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// A create request and the digest of its body.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateBody {
    pub request: CreateRequest,
    /// SHA-256 (hex) of the body as JSON with every object's keys sorted, so key order and
    /// spacing do not matter: what an `Idempotency-Key` is held to.
    pub digest: String,
}

/// Reads a `POST /session` body.
pub fn read_create(body: &[u8]) -> Result<CreateBody, Problem> {
    let fields = Fields::read(body)?;
    if !fields.is_object() {
        return Err(Problem::invalid("the request body must be a JSON object"));
    }
    let body = fields.into_value();
    let digest = digest(&body);
    let body = canonical_create_body(body);
    if body.get("image").is_none() {
        return Err(Problem::invalid(
            "no image given: name an image or alias, e.g. `python`",
        ));
    }
    let request = crate::read::from_value(body).map_err(|e| Problem::invalid(e.to_string()))?;
    Ok(CreateBody { request, digest })
}

fn digest(body: &Value) -> String {
    let canonical = serde_json::to_vec(&sorted(body)).unwrap_or_default();
    hex::encode(Sha256::digest(&canonical))
}

/// `v` with every object's keys in sorted order (the map may keep insertion order).
fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_ignores_key_order_and_spacing() {
        let a = read_create(br#"{"image": "python", "c": {"x": null, "y": [1]}, "b": 2}"#).unwrap();
        let b =
            read_create(br#"{ "b": 2,  "image": "python", "c": {"y": [1], "x": null} }"#).unwrap();
        assert_eq!(a.digest, b.digest);
        let c = read_create(br#"{"image": "python", "b": 3}"#).unwrap();
        assert_ne!(a.digest, c.digest);
    }

    #[test]
    fn a_body_that_is_no_object_or_has_no_image_is_refused() {
        assert!(
            read_create(b"[1]")
                .unwrap_err()
                .msg
                .contains("must be a JSON object")
        );
        assert!(
            read_create(b"{}")
                .unwrap_err()
                .msg
                .contains("no image given")
        );
        assert!(
            read_create(b"{")
                .unwrap_err()
                .msg
                .contains("not valid JSON")
        );
        let ok = read_create(br#"{"lang": "python", "sessionName": "s1"}"#).unwrap();
        assert_eq!(ok.request.image, "python");
    }
}

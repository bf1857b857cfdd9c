//! Retry-safe creates: a `POST /session` with an `Idempotency-Key` header creates one
//! session however often it is sent, across manager restarts (the key is stored in the
//! transaction that stores the session). A retry answers the session the key made; the
//! same key with a different request is refused (422), since it would silently answer a
//! session other than the one asked for. Keys are per keypair.

use super::Lifecycle;
use bai_core::Problem;
use bai_store::SessionRow;
use sha2::{Digest, Sha256};

/// The longest key accepted.
pub const MAX_KEY_LEN: usize = 255;

/// A create's key and the digest of its request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdemKey {
    pub key: String,
    pub digest: String,
}

impl IdemKey {
    /// The key of the `i`-th of several sessions one request creates.
    pub fn nth(&self, i: u32) -> IdemKey {
        IdemKey {
            key: format!("{}#{i}", self.key),
            digest: self.digest.clone(),
        }
    }
}

/// Reads the `Idempotency-Key` header (None without one): 1 to 255 visible ASCII
/// characters. The digest covers the request body as JSON, so key order and spacing do
/// not matter.
pub fn key_of(
    headers: &axum::http::HeaderMap,
    body: &serde_json::Value,
) -> Result<Option<IdemKey>, Problem> {
    let Some(raw) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let key = raw
        .to_str()
        .ok()
        .map(str::trim)
        .filter(|k| {
            !k.is_empty() && k.len() <= MAX_KEY_LEN && k.bytes().all(|b| b.is_ascii_graphic())
        })
        .ok_or_else(|| {
            Problem::invalid(format!(
                "the Idempotency-Key header must be 1 to {MAX_KEY_LEN} visible ASCII characters"
            ))
        })?;
    let canonical = serde_json::to_vec(&canonical(body)).unwrap_or_default();
    Ok(Some(IdemKey {
        key: key.to_string(),
        digest: hex::encode(Sha256::digest(&canonical)),
    }))
}

/// `v` with every object's keys in sorted order (the map may keep insertion order).
fn canonical(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// The session `key` already made for `access_key`, if any; a 422 problem when the key
/// came with another request.
pub fn existing(
    lifecycle: &Lifecycle,
    access_key: &str,
    key: &IdemKey,
) -> Result<Option<SessionRow>, Problem> {
    let found = lifecycle
        .store
        .session_by_idempotency_key(access_key, &key.key)?;
    let Some((id, digest)) = found else {
        return Ok(None);
    };
    if digest != key.digest {
        return Err(Problem::new(
            422,
            "idempotency-key-reused",
            "The idempotency key was used for another request.",
            format!(
                "Idempotency-Key {:?} already created session {id} from a different request; use a new key for a new request",
                key.key
            ),
        )
        .with_data(serde_json::json!({ "existingSessionId": id.to_string() })));
    }
    Ok(lifecycle.store.session(id)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderMap, HeaderValue};
    use serde_json::json;

    fn headers(key: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            "idempotency-key",
            HeaderValue::from_str(key).expect("value"),
        );
        h
    }

    #[test]
    fn the_digest_ignores_key_order_and_a_bad_key_is_refused() {
        let a = key_of(
            &headers("k1"),
            &serde_json::from_str(r#"{"a": 1, "c": {"x": null, "y": [1]}, "b": 2}"#).expect("json"),
        )
        .expect("ok")
        .expect("key");
        let b = key_of(
            &headers("k1"),
            &serde_json::from_str(r#"{ "b": 2,  "a": 1, "c": {"y": [1], "x": null} }"#)
                .expect("json"),
        )
        .expect("ok")
        .expect("key");
        assert_eq!(a, b);
        let c = key_of(&headers("k1"), &json!({"a": 1, "b": 3}))
            .expect("ok")
            .expect("key");
        assert_ne!(a.digest, c.digest);
        assert_eq!(key_of(&HeaderMap::new(), &json!({})).expect("ok"), None);
        assert_eq!(
            key_of(&headers(&"x".repeat(256)), &json!({}))
                .expect_err("too long")
                .status,
            400
        );
        assert_eq!(a.nth(2).key, "k1#2");
    }
}

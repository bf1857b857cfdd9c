//! Retry-safe creates: a `POST /session` with an `Idempotency-Key` header creates one
//! session however often it is sent, across manager restarts (the key is stored in the
//! transaction that stores the session). A retry answers the session the key made; the
//! same key with a different request is refused (422), since it would silently answer a
//! session other than the one asked for. Keys are per keypair.

use super::Lifecycle;
use bai_core::Problem;
use bai_store::SessionRow;

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

/// Reads the `Idempotency-Key` header's value (None without one): 1 to 255 visible ASCII
/// characters. `digest` is the request's (the HTTP edge reads it with the body).
pub fn key_of(header: Option<&[u8]>, digest: &str) -> Result<Option<IdemKey>, Problem> {
    let Some(raw) = header else {
        return Ok(None);
    };
    let key = std::str::from_utf8(raw)
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
    Ok(Some(IdemKey {
        key: key.to_string(),
        digest: digest.to_string(),
    }))
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
        .with_data_of(&bai_core::problem::ExistingSession {
            existing_session_id: id.to_string(),
        }));
    }
    Ok(lifecycle.store.session(id)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_kept_with_its_digest_and_a_bad_key_is_refused() {
        let a = key_of(Some(b" k1 "), "d1").expect("ok").expect("key");
        assert_eq!((a.key.as_str(), a.digest.as_str()), ("k1", "d1"));
        assert_eq!(key_of(None, "d1").expect("ok"), None);
        let long = "x".repeat(256);
        for bad in [long.as_bytes(), b"", b"a b", "\u{e9}".as_bytes()] {
            assert_eq!(key_of(Some(bad), "d").expect_err("refused").status, 400);
        }
        assert_eq!(a.nth(2).key, "k1#2");
    }
}

//! Service tokens: HS256 JWTs signed with the service's own key (made with the service, so
//! removing it voids its tokens). Claims: `endpoint_id`, `user`, `exp` (Unix seconds).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    pub endpoint_id: Uuid,
    pub user: String,
    pub exp: i64,
}

fn key(secret: &str) -> ring::hmac::Key {
    ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes())
}

/// Signs the claims.
pub fn sign(secret: &str, claims: &Claims) -> String {
    let header = B64.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let body = B64.encode(serde_json::to_vec(claims).unwrap_or_default());
    let signing_input = format!("{header}.{body}");
    let tag = ring::hmac::sign(&key(secret), signing_input.as_bytes());
    format!("{signing_input}.{}", B64.encode(tag.as_ref()))
}

/// Why a token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("the token is not a JWT")]
    Malformed,
    #[error("the token's signature is wrong")]
    BadSignature,
    #[error("the token is for another service")]
    OtherService,
    #[error("the token has expired")]
    Expired,
}

/// Checks a token against the service's key, id and the time now (Unix seconds).
pub fn verify(
    secret: &str,
    endpoint_id: Uuid,
    token: &str,
    now: i64,
) -> Result<Claims, TokenError> {
    let mut parts = token.trim().split('.');
    let (Some(h), Some(b), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenError::Malformed);
    };
    let header: serde_json::Value = B64
        .decode(h)
        .ok()
        .and_then(|x| serde_json::from_slice(&x).ok())
        .ok_or(TokenError::Malformed)?;
    if header.get("alg").and_then(|a| a.as_str()) != Some("HS256") {
        return Err(TokenError::Malformed);
    }
    let sig = B64.decode(s).map_err(|_| TokenError::Malformed)?;
    ring::hmac::verify(&key(secret), format!("{h}.{b}").as_bytes(), &sig)
        .map_err(|_| TokenError::BadSignature)?;
    let claims: Claims = B64
        .decode(b)
        .ok()
        .and_then(|x| serde_json::from_slice(&x).ok())
        .ok_or(TokenError::Malformed)?;
    if claims.endpoint_id != endpoint_id {
        return Err(TokenError::OtherService);
    }
    if claims.exp <= now {
        return Err(TokenError::Expired);
    }
    Ok(claims)
}

/// The token of an `Authorization: Bearer …` or `Authorization: BackendAI …` header.
pub fn from_header(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    (scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("backendai"))
        .then_some(token.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signed_token_verifies_only_for_its_service_key_and_time() {
        let id = Uuid::new_v4();
        let c = Claims {
            endpoint_id: id,
            user: "u".into(),
            exp: 1000,
        };
        let t = sign("k1", &c);
        assert_eq!(verify("k1", id, &t, 999).unwrap(), c);
        assert_eq!(verify("k2", id, &t, 999), Err(TokenError::BadSignature));
        assert_eq!(
            verify("k1", Uuid::new_v4(), &t, 999),
            Err(TokenError::OtherService)
        );
        assert_eq!(verify("k1", id, &t, 1000), Err(TokenError::Expired));
        assert_eq!(verify("k1", id, "a.b", 0), Err(TokenError::Malformed));
        let mut forged = t.clone();
        forged.insert(t.find('.').unwrap() + 2, 'x');
        assert!(verify("k1", id, &forged, 0).is_err());
    }

    #[test]
    fn both_schemes_are_read() {
        assert_eq!(from_header("Bearer abc"), Some("abc"));
        assert_eq!(from_header("BackendAI abc"), Some("abc"));
        assert_eq!(from_header("Basic abc"), None);
        assert_eq!(from_header("abc"), None);
    }
}

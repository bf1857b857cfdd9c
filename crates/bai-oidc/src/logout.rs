//! OpenID Connect Back-Channel Logout 1.0: the provider POSTs a logout token (a JWT) when a
//! person's session there ends, and bai ends the web sessions that came from it. The token is
//! checked as an ID token is ([`crate::token::verify_signature`] against the provider's JWKS,
//! `iss`, `aud`/`azp`, `iat`, `exp` when there), plus what §2.4 and §2.6 of the spec ask: the
//! `events` claim holds `http://schemas.openid.net/event/backchannel-logout`, there is no
//! `nonce`, and there is a `sid` or a `sub` (or both).

use crate::token::{self, Jwks, LEEWAY, TokenError};
use serde_json::{Map, Value};

/// The event a logout token carries.
pub const EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";

/// Why a logout token is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogoutError {
    #[error(transparent)]
    Token(#[from] TokenError),
    #[error("the logout token has no back-channel logout event")]
    NoEvent,
    #[error("the logout token has a nonce (an ID token is not a logout token)")]
    Nonce,
    #[error("the logout token names neither a session (sid) nor a subject (sub)")]
    NoSubject,
    #[error("the logout token has no iat")]
    NoIat,
}

/// Whose sessions end: the provider's session (`sid`) and/or the person (`sub`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logout {
    pub sub: Option<String>,
    pub sid: Option<String>,
}

/// What a logout token must say.
#[derive(Debug, Clone)]
pub struct ExpectLogout<'a> {
    pub issuer: &'a str,
    pub client_id: &'a str,
    /// Seconds since the epoch.
    pub now: i64,
}

/// The logout token's signature and claims checked: whose sessions end.
pub fn verify(token: &str, jwks: &Jwks, expect: &ExpectLogout) -> Result<Logout, LogoutError> {
    let claims = token::verify_signature(token, jwks)?;
    check_claims(&claims, expect)
}

/// The claim checks of a logout token (after its signature's).
pub fn check_claims(
    claims: &Map<String, Value>,
    expect: &ExpectLogout,
) -> Result<Logout, LogoutError> {
    if claims.get("iss").and_then(Value::as_str) != Some(expect.issuer) {
        return Err(TokenError::Issuer.into());
    }
    if !token::for_client(claims, expect.client_id) {
        return Err(TokenError::Audience.into());
    }
    let iat = claims
        .get("iat")
        .and_then(Value::as_i64)
        .ok_or(LogoutError::NoIat)?;
    if iat - LEEWAY > expect.now {
        return Err(TokenError::NotYet.into());
    }
    if let Some(exp) = claims.get("exp") {
        let exp = exp
            .as_i64()
            .ok_or(TokenError::Malformed("exp is not a number"))?;
        if exp + LEEWAY <= expect.now {
            return Err(TokenError::Expired.into());
        }
    }
    let event = claims
        .get("events")
        .and_then(Value::as_object)
        .and_then(|e| e.get(EVENT));
    if !event.is_some_and(Value::is_object) {
        return Err(LogoutError::NoEvent);
    }
    if claims.contains_key("nonce") {
        return Err(LogoutError::Nonce);
    }
    let text = |k: &str| {
        claims
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let (sub, sid) = (text("sub"), text("sid"));
    if sub.is_none() && sid.is_none() {
        return Err(LogoutError::NoSubject);
    }
    Ok(Logout { sub, sid })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token::tests::Key;
    use serde_json::json;

    const NOW: i64 = 1_800_000_000;

    fn claims() -> Value {
        json!({"iss": "https://sso.example.org", "aud": "bai", "sub": "u1", "sid": "s1",
               "iat": NOW, "exp": NOW + 120, "jti": "j1", "events": {EVENT: {}}})
    }

    fn expect() -> ExpectLogout<'static> {
        ExpectLogout {
            issuer: "https://sso.example.org",
            client_id: "bai",
            now: NOW,
        }
    }

    fn with(change: impl FnOnce(&mut Map<String, Value>)) -> Value {
        let mut c = claims();
        change(c.as_object_mut().unwrap());
        c
    }

    #[test]
    fn a_good_logout_token_names_whose_sessions_end() {
        let k = Key::new("k1");
        let jwks = Jwks {
            keys: vec![k.jwk()],
        };
        let l = verify(&k.sign(&claims()), &jwks, &expect()).unwrap();
        assert_eq!(l.sub.as_deref(), Some("u1"));
        assert_eq!(l.sid.as_deref(), Some("s1"));
        // sid alone, sub alone.
        let only_sid = with(|c| {
            c.remove("sub");
        });
        let l = verify(&k.sign(&only_sid), &jwks, &expect()).unwrap();
        assert_eq!((l.sub, l.sid.as_deref()), (None, Some("s1")));
        let only_sub = with(|c| {
            c.remove("sid");
        });
        let l = verify(&k.sign(&only_sub), &jwks, &expect()).unwrap();
        assert_eq!((l.sub.as_deref(), l.sid), (Some("u1"), None));
    }

    #[test]
    fn bad_logout_tokens_are_refused() {
        let k = Key::new("k1");
        let jwks = Jwks {
            keys: vec![k.jwk()],
        };
        let check = |c: Value| verify(&k.sign(&c), &jwks, &expect()).unwrap_err();
        // Signed by another key (a forgery), or naming a key the provider does not have.
        let forged = Key::new("k1").sign(&claims());
        assert_eq!(
            verify(&forged, &jwks, &expect()).unwrap_err(),
            LogoutError::Token(TokenError::Signature)
        );
        assert_eq!(
            verify(&Key::new("k9").sign(&claims()), &jwks, &expect()).unwrap_err(),
            LogoutError::Token(TokenError::UnknownKey(Some("k9".into())))
        );
        assert_eq!(
            check(with(|c| {
                c.insert("aud".into(), json!("other"));
            })),
            LogoutError::Token(TokenError::Audience)
        );
        assert_eq!(
            check(with(|c| {
                c.insert("iss".into(), json!("https://evil.example.org"));
            })),
            LogoutError::Token(TokenError::Issuer)
        );
        assert_eq!(
            check(with(|c| {
                c.remove("iat");
            })),
            LogoutError::NoIat
        );
        assert_eq!(
            check(with(|c| {
                c.insert("iat".into(), json!(NOW + 3600));
            })),
            LogoutError::Token(TokenError::NotYet)
        );
        assert_eq!(
            check(with(|c| {
                c.insert("exp".into(), json!(NOW - 3600));
            })),
            LogoutError::Token(TokenError::Expired)
        );
        assert_eq!(
            check(with(|c| {
                c.remove("events");
            })),
            LogoutError::NoEvent
        );
        assert_eq!(
            check(with(|c| {
                c.insert("events".into(), json!({"http://example.org/other": {}}));
            })),
            LogoutError::NoEvent
        );
        // An ID token (it has a nonce) is not a logout token.
        assert_eq!(
            check(with(|c| {
                c.insert("nonce".into(), json!("n1"));
            })),
            LogoutError::Nonce
        );
        assert_eq!(
            check(with(|c| {
                c.remove("sub");
                c.remove("sid");
            })),
            LogoutError::NoSubject
        );
    }
}

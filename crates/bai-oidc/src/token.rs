//! An ID token (a JWS, compact form) checked without I/O: its signature against a key of the
//! provider's JWKS (RS256, or ES256), then the claims OpenID Connect Core §3.1.3.7 asks for —
//! `iss` is the provider's, `aud` holds our client (and `azp` is ours when set), `exp` has
//! not passed, `nonce` is the login's.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature;
use serde::Deserialize;
use serde_json::{Map, Value};

/// How far clocks may disagree, seconds.
pub const LEEWAY: i64 = 60;

/// Why an ID token is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("the ID token is malformed: {0}")]
    Malformed(&'static str),
    #[error("the ID token is signed with {0}, which bai does not accept (RS256, ES256)")]
    Algorithm(String),
    #[error("the provider has no key {} for the ID token", .0.as_deref().unwrap_or("(no kid)"))]
    UnknownKey(Option<String>),
    #[error("the ID token's signature is wrong")]
    Signature,
    #[error("the ID token is from another issuer")]
    Issuer,
    #[error("the ID token is for another client")]
    Audience,
    #[error("the ID token has expired")]
    Expired,
    #[error("the ID token is not valid yet")]
    NotYet,
    #[error("the ID token is not for this login (nonce)")]
    Nonce,
}

/// One key of a JWKS (RFC 7517); the fields bai reads.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Jwk {
    pub kty: String,
    #[serde(default)]
    pub kid: Option<String>,
    #[serde(default)]
    pub alg: Option<String>,
    #[serde(default, rename = "use")]
    pub usage: Option<String>,
    #[serde(default)]
    pub n: Option<String>,
    #[serde(default)]
    pub e: Option<String>,
    #[serde(default)]
    pub crv: Option<String>,
    #[serde(default)]
    pub x: Option<String>,
    #[serde(default)]
    pub y: Option<String>,
}

/// The provider's public keys (`jwks_uri`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Jwks {
    pub keys: Vec<Jwk>,
}

/// What the token must say.
#[derive(Debug, Clone)]
pub struct Expect<'a> {
    pub issuer: &'a str,
    pub client_id: &'a str,
    pub nonce: &'a str,
    /// Seconds since the epoch.
    pub now: i64,
}

#[derive(Deserialize)]
struct Header {
    alg: String,
    #[serde(default)]
    kid: Option<String>,
}

/// The `kid` a token's header names (to know whether the JWKS must be fetched again).
pub fn kid(token: &str) -> Result<Option<String>, TokenError> {
    Ok(header(token)?.kid)
}

fn header(token: &str) -> Result<Header, TokenError> {
    let h = token
        .split('.')
        .next()
        .ok_or(TokenError::Malformed("no header"))?;
    let bytes = URL_SAFE_NO_PAD
        .decode(h)
        .map_err(|_| TokenError::Malformed("the header is not base64url"))?;
    serde_json::from_slice(&bytes).map_err(|_| TokenError::Malformed("the header is not JSON"))
}

/// The keys of `jwks` that may have signed a token with this header.
fn candidates<'a>(jwks: &'a Jwks, alg: &str, kid: Option<&str>) -> Vec<&'a Jwk> {
    let kty = if alg.starts_with("ES") { "EC" } else { "RSA" };
    jwks.keys
        .iter()
        .filter(|k| k.kty == kty)
        .filter(|k| k.usage.as_deref().is_none_or(|u| u == "sig"))
        .filter(|k| k.alg.as_deref().is_none_or(|a| a == alg))
        .filter(|k| match kid {
            Some(kid) => k.kid.as_deref() == Some(kid),
            None => true,
        })
        .collect()
}

fn b64(s: Option<&String>) -> Result<Vec<u8>, TokenError> {
    URL_SAFE_NO_PAD
        .decode(s.ok_or(TokenError::Malformed("a key lacks a field"))?)
        .map_err(|_| TokenError::Malformed("a key is not base64url"))
}

fn signed_by(key: &Jwk, alg: &str, message: &[u8], sig: &[u8]) -> Result<bool, TokenError> {
    Ok(match alg {
        "RS256" => {
            let (n, e) = (b64(key.n.as_ref())?, b64(key.e.as_ref())?);
            signature::RsaPublicKeyComponents { n: &n, e: &e }
                .verify(&signature::RSA_PKCS1_2048_8192_SHA256, message, sig)
                .is_ok()
        }
        "ES256" => {
            if key.crv.as_deref() != Some("P-256") {
                return Ok(false);
            }
            let (x, y) = (b64(key.x.as_ref())?, b64(key.y.as_ref())?);
            let mut point = Vec::with_capacity(65);
            point.push(4u8);
            point.extend_from_slice(&x);
            point.extend_from_slice(&y);
            signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
                .verify(message, sig)
                .is_ok()
        }
        other => return Err(TokenError::Algorithm(other.to_string())),
    })
}

/// The token's claims once its signature and claims are checked.
pub fn verify(token: &str, jwks: &Jwks, expect: &Expect) -> Result<Map<String, Value>, TokenError> {
    let claims = verify_signature(token, jwks)?;
    check_claims(&claims, expect)?;
    Ok(claims)
}

/// The token's claims once its signature is checked against `jwks` (RS256 or ES256 only),
/// and nothing else: the caller checks the claims ([`check_claims`], or a logout token's).
pub fn verify_signature(token: &str, jwks: &Jwks) -> Result<Map<String, Value>, TokenError> {
    let mut parts = token.split('.');
    let (Some(h), Some(p), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenError::Malformed("not three parts"));
    };
    let head = header(token)?;
    if !matches!(head.alg.as_str(), "RS256" | "ES256") {
        // `none` and the HMAC ones (keyed with the client secret) above all.
        return Err(TokenError::Algorithm(head.alg));
    }
    let keys = candidates(jwks, &head.alg, head.kid.as_deref());
    if keys.is_empty() {
        return Err(TokenError::UnknownKey(head.kid));
    }
    let sig = URL_SAFE_NO_PAD
        .decode(s)
        .map_err(|_| TokenError::Malformed("the signature is not base64url"))?;
    let message = format!("{h}.{p}");
    let mut ok = false;
    for k in keys {
        if signed_by(k, &head.alg, message.as_bytes(), &sig)? {
            ok = true;
            break;
        }
    }
    if !ok {
        return Err(TokenError::Signature);
    }
    let payload = URL_SAFE_NO_PAD
        .decode(p)
        .map_err(|_| TokenError::Malformed("the payload is not base64url"))?;
    let claims: Map<String, Value> = serde_json::from_slice(&payload)
        .map_err(|_| TokenError::Malformed("the payload is not a JSON object"))?;
    Ok(claims)
}

/// `aud` holds `client_id`, and `azp`, when there, is it (required when `aud` has several).
pub(crate) fn for_client(claims: &Map<String, Value>, client_id: &str) -> bool {
    let auds: Vec<&str> = match claims.get("aud") {
        Some(Value::String(a)) => vec![a.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => return false,
    };
    auds.contains(&client_id)
        && match claims.get("azp").and_then(Value::as_str) {
            Some(azp) => azp == client_id,
            None => auds.len() == 1,
        }
}

/// The claim checks of OpenID Connect Core §3.1.3.7 (after the signature's).
pub fn check_claims(claims: &Map<String, Value>, expect: &Expect) -> Result<(), TokenError> {
    if claims.get("iss").and_then(Value::as_str) != Some(expect.issuer) {
        return Err(TokenError::Issuer);
    }
    if !for_client(claims, expect.client_id) {
        return Err(TokenError::Audience);
    }
    let exp = claims
        .get("exp")
        .and_then(Value::as_i64)
        .ok_or(TokenError::Malformed("no exp"))?;
    if exp + LEEWAY <= expect.now {
        return Err(TokenError::Expired);
    }
    if let Some(nbf) = claims.get("nbf").and_then(Value::as_i64)
        && nbf - LEEWAY > expect.now
    {
        return Err(TokenError::NotYet);
    }
    if let Some(iat) = claims.get("iat").and_then(Value::as_i64)
        && iat - LEEWAY > expect.now
    {
        return Err(TokenError::NotYet);
    }
    if claims.get("nonce").and_then(Value::as_str) != Some(expect.nonce) {
        return Err(TokenError::Nonce);
    }
    if claims
        .get("sub")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err(TokenError::Malformed("no sub"));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use ring::rand::SystemRandom;
    use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
    use serde_json::json;

    pub(crate) struct Key {
        pair: EcdsaKeyPair,
        kid: String,
    }

    impl Key {
        pub(crate) fn new(kid: &str) -> Key {
            let rng = SystemRandom::new();
            let pkcs8 =
                EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
            let pair =
                EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
                    .unwrap();
            Key {
                pair,
                kid: kid.into(),
            }
        }
        pub(crate) fn jwk(&self) -> Jwk {
            let p = self.pair.public_key().as_ref();
            Jwk {
                kty: "EC".into(),
                kid: Some(self.kid.clone()),
                crv: Some("P-256".into()),
                x: Some(URL_SAFE_NO_PAD.encode(&p[1..33])),
                y: Some(URL_SAFE_NO_PAD.encode(&p[33..65])),
                usage: Some("sig".into()),
                ..Default::default()
            }
        }
        pub(crate) fn sign(&self, claims: &Value) -> String {
            let h = URL_SAFE_NO_PAD
                .encode(json!({"alg": "ES256", "kid": self.kid, "typ": "JWT"}).to_string());
            let p = URL_SAFE_NO_PAD.encode(claims.to_string());
            let m = format!("{h}.{p}");
            let s = self.pair.sign(&SystemRandom::new(), m.as_bytes()).unwrap();
            format!("{m}.{}", URL_SAFE_NO_PAD.encode(s.as_ref()))
        }
    }

    const NOW: i64 = 1_800_000_000;

    fn claims() -> Value {
        json!({"iss": "https://sso.example.org", "aud": "bai", "sub": "u1", "nonce": "n1",
               "exp": NOW + 300, "iat": NOW, "email": "ada@example.org"})
    }

    fn expect() -> Expect<'static> {
        Expect {
            issuer: "https://sso.example.org",
            client_id: "bai",
            nonce: "n1",
            now: NOW,
        }
    }

    fn with(change: impl FnOnce(&mut Map<String, Value>)) -> Value {
        let mut c = claims();
        change(c.as_object_mut().unwrap());
        c
    }

    #[test]
    fn a_good_token_passes_and_the_kid_picks_the_key() {
        let (k1, k2) = (Key::new("k1"), Key::new("k2"));
        let jwks = Jwks {
            keys: vec![k1.jwk(), k2.jwk()],
        };
        for k in [&k1, &k2] {
            let c = verify(&k.sign(&claims()), &jwks, &expect()).unwrap();
            assert_eq!(c["email"], "ada@example.org");
        }
        assert_eq!(kid(&k2.sign(&claims())).unwrap().as_deref(), Some("k2"));
        // A rotated key the JWKS does not have yet.
        let k3 = Key::new("k3");
        assert_eq!(
            verify(&k3.sign(&claims()), &jwks, &expect()).unwrap_err(),
            TokenError::UnknownKey(Some("k3".into()))
        );
    }

    #[test]
    fn forged_tokens_are_refused() {
        let (k1, evil) = (Key::new("k1"), Key::new("k1"));
        let jwks = Jwks {
            keys: vec![k1.jwk()],
        };
        // Signed by another key with the same kid.
        assert_eq!(
            verify(&evil.sign(&claims()), &jwks, &expect()).unwrap_err(),
            TokenError::Signature
        );
        // The payload changed after signing.
        let good = k1.sign(&claims());
        let parts: Vec<&str> = good.split('.').collect();
        let other = URL_SAFE_NO_PAD.encode(
            with(|c| {
                c.insert("sub".into(), json!("root"));
            })
            .to_string(),
        );
        let tampered = format!("{}.{other}.{}", parts[0], parts[2]);
        assert_eq!(
            verify(&tampered, &jwks, &expect()).unwrap_err(),
            TokenError::Signature
        );
        // alg none and HS256 are never accepted.
        for alg in ["none", "HS256"] {
            let h = URL_SAFE_NO_PAD.encode(json!({"alg": alg, "kid": "k1"}).to_string());
            let t = format!("{h}.{}.", parts[1]);
            assert_eq!(
                verify(&t, &jwks, &expect()).unwrap_err(),
                TokenError::Algorithm(alg.into())
            );
        }
        assert!(matches!(
            verify("a.b", &jwks, &expect()).unwrap_err(),
            TokenError::Malformed(_)
        ));
    }

    #[test]
    fn claims_are_checked() {
        let k = Key::new("k1");
        let jwks = Jwks {
            keys: vec![k.jwk()],
        };
        let refused = |c: Value| verify(&k.sign(&c), &jwks, &expect()).unwrap_err();
        assert_eq!(
            refused(with(|c| {
                c.insert("iss".into(), json!("https://evil.example"));
            })),
            TokenError::Issuer
        );
        assert_eq!(
            refused(with(|c| {
                c.insert("aud".into(), json!("other-client"));
            })),
            TokenError::Audience
        );
        assert_eq!(
            refused(with(|c| {
                c.insert("aud".into(), json!(["other", "bai"]));
            })),
            TokenError::Audience,
            "several audiences and no azp"
        );
        assert_eq!(
            refused(with(|c| {
                c.insert("aud".into(), json!(["other", "bai"]));
                c.insert("azp".into(), json!("other"));
            })),
            TokenError::Audience
        );
        let ok = with(|c| {
            c.insert("aud".into(), json!(["other", "bai"]));
            c.insert("azp".into(), json!("bai"));
        });
        assert!(verify(&k.sign(&ok), &jwks, &expect()).is_ok());
        assert_eq!(
            refused(with(|c| {
                c.insert("exp".into(), json!(NOW - LEEWAY));
            })),
            TokenError::Expired
        );
        assert_eq!(
            refused(with(|c| {
                c.insert("iat".into(), json!(NOW + 3600));
            })),
            TokenError::NotYet
        );
        assert_eq!(
            refused(with(|c| {
                c.insert("nonce".into(), json!("n2"));
            })),
            TokenError::Nonce
        );
        assert_eq!(
            refused(with(|c| {
                c.remove("nonce");
            })),
            TokenError::Nonce
        );
        assert!(matches!(
            refused(with(|c| {
                c.remove("exp");
            })),
            TokenError::Malformed(_)
        ));
    }
}

//! Logins under way: each has a `state` (the key), a `nonce` (bound into the ID token), a
//! PKCE verifier (its S256 challenge goes to the provider) and a browser binding (a random
//! value in a short-lived cookie, so a callback only finishes the login of the browser that
//! began it). They are kept here, server-side, for a few minutes and used once: a replayed
//! callback finds nothing.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a login may take at the provider.
pub const LIFETIME: Duration = Duration::from_secs(600);
/// At most this many logins under way (the oldest are dropped first).
const MOST: usize = 10_000;

/// Why a callback does not belong to a login under way.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlowError {
    #[error("the callback has no state")]
    NoState,
    #[error("the state is unknown or was already used")]
    UnknownState,
    #[error("the login took too long")]
    Expired,
    #[error("the login was begun by another browser")]
    OtherBrowser,
}

/// A login under way.
#[derive(Clone)]
pub struct Pending {
    pub nonce: String,
    pub verifier: String,
    pub redirect_uri: String,
    binding: String,
    at: Instant,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

impl Pending {
    /// The PKCE challenge (S256) of the verifier.
    pub fn challenge(&self) -> String {
        challenge(&self.verifier)
    }
}

/// A login just begun: what goes to the provider and into the browser's cookie.
#[derive(Debug, Clone)]
pub struct Begun {
    pub state: String,
    pub binding: String,
    pub pending: Pending,
}

/// 32 random bytes, base64url: a state, a nonce, a PKCE verifier (43 characters, as RFC 7636
/// asks) or a browser binding.
pub fn random_token() -> String {
    let mut b = [0u8; 32];
    rand::rng().fill_bytes(&mut b);
    URL_SAFE_NO_PAD.encode(b)
}

/// RFC 7636's S256: base64url(SHA-256(verifier)).
pub fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// The logins under way.
#[derive(Default)]
pub struct Flows {
    open: Mutex<HashMap<String, Pending>>,
}

impl Flows {
    /// A new login whose callback comes to `redirect_uri`.
    pub fn begin(&self, redirect_uri: &str) -> Begun {
        self.begin_at(redirect_uri, Instant::now())
    }

    fn begin_at(&self, redirect_uri: &str, now: Instant) -> Begun {
        let pending = Pending {
            nonce: random_token(),
            verifier: random_token(),
            redirect_uri: redirect_uri.to_string(),
            binding: random_token(),
            at: now,
        };
        let state = random_token();
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        open.retain(|_, p| now.saturating_duration_since(p.at) < LIFETIME);
        while open.len() >= MOST {
            let Some(oldest) = open
                .iter()
                .min_by_key(|(_, p)| p.at)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            open.remove(&oldest);
        }
        open.insert(state.clone(), pending.clone());
        Begun {
            state,
            binding: pending.binding.clone(),
            pending,
        }
    }

    /// The login `state` names, taken (a second callback with it finds nothing), if the
    /// browser's `binding` cookie is the one it was begun with and it is not too old.
    pub fn finish(&self, state: Option<&str>, binding: Option<&str>) -> Result<Pending, FlowError> {
        self.finish_at(state, binding, Instant::now())
    }

    fn finish_at(
        &self,
        state: Option<&str>,
        binding: Option<&str>,
        now: Instant,
    ) -> Result<Pending, FlowError> {
        let state = state.filter(|s| !s.is_empty()).ok_or(FlowError::NoState)?;
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let p = open.get(state).ok_or(FlowError::UnknownState)?;
        // Another browser's callback (a link planted by someone else) does not use up the
        // login of the browser that began it.
        if binding.is_none_or(|b| !same(b, &p.binding)) {
            return Err(FlowError::OtherBrowser);
        }
        let p = open.remove(state).ok_or(FlowError::UnknownState)?;
        if now.saturating_duration_since(p.at) >= LIFETIME {
            return Err(FlowError::Expired);
        }
        Ok(p)
    }

    /// How many logins are under way.
    pub fn len(&self) -> usize {
        self.open.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Compares in time that does not depend on where the strings differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_s256_is_rfc_7636() {
        // RFC 7636, appendix B.
        assert_eq!(
            challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let v = random_token();
        assert_eq!(v.len(), 43);
        assert_ne!(v, random_token());
    }

    #[test]
    fn a_state_is_used_once_by_its_browser() {
        let f = Flows::default();
        let b = f.begin("http://127.0.0.1/server/oidc/callback");
        assert_eq!(b.pending.challenge(), challenge(&b.pending.verifier));
        assert_eq!(
            f.finish(Some("forged"), Some(&b.binding)).unwrap_err(),
            FlowError::UnknownState
        );
        assert_eq!(
            f.finish(None, Some(&b.binding)).unwrap_err(),
            FlowError::NoState
        );
        // Another browser (no cookie, another cookie) does not use it up.
        assert_eq!(
            f.finish(Some(&b.state), None).unwrap_err(),
            FlowError::OtherBrowser
        );
        assert_eq!(
            f.finish(Some(&b.state), Some("other")).unwrap_err(),
            FlowError::OtherBrowser
        );
        let p = f.finish(Some(&b.state), Some(&b.binding)).unwrap();
        assert_eq!(p.nonce, b.pending.nonce);
        // A replay finds nothing.
        assert_eq!(
            f.finish(Some(&b.state), Some(&b.binding)).unwrap_err(),
            FlowError::UnknownState
        );
        assert!(f.is_empty());
    }

    #[test]
    fn old_logins_expire() {
        let f = Flows::default();
        let start = Instant::now();
        let b = f.begin_at("http://127.0.0.1/cb", start);
        assert_eq!(
            f.finish_at(Some(&b.state), Some(&b.binding), start + LIFETIME)
                .unwrap_err(),
            FlowError::Expired
        );
        // Expired ones are swept when the next begins.
        f.begin_at("http://127.0.0.1/cb", start);
        f.begin_at(
            "http://127.0.0.1/cb",
            start + LIFETIME + Duration::from_secs(1),
        );
        assert_eq!(f.len(), 1);
    }
}

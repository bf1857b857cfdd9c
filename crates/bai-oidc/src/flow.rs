//! Logins under way: each has a `state` (the key), a `nonce` (bound into the ID token), a
//! PKCE verifier (its S256 challenge goes to the provider) and a browser binding (a random
//! value in a short-lived cookie, so a callback only finishes the login of the browser that
//! began it). The manager keeps them server-side, in its store (`oidc_logins`, so any
//! manager on the database may take the callback, and a restart forgets none), for a few
//! minutes, and takes each once: a replayed callback finds nothing.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// How long a login may take at the provider.
pub const LIFETIME: Duration = Duration::from_secs(600);
/// At most this many logins under way are kept (the oldest are dropped first): anonymous
/// `/login` starts cannot grow the store without bound.
pub const MOST: usize = 10_000;

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

/// A login under way: what the callback needs of it.
#[derive(Clone, PartialEq, Eq)]
pub struct Pending {
    pub nonce: String,
    pub verifier: String,
    pub redirect_uri: String,
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

/// A login just begun: what goes to the provider, into the browser's cookie (`binding`) and
/// into the store (the state, the binding's hash and the pending login).
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

/// What the store keeps of a browser binding: its SHA-256 (the cookie's value itself is
/// never stored; the store compares hashes, so its comparison's timing tells nothing).
pub fn binding_hash(binding: &str) -> String {
    challenge(binding)
}

/// A new login whose callback comes to `redirect_uri`: fresh state, nonce, verifier and
/// binding. The caller keeps it (the store) and takes it back once at the callback.
pub fn begin(redirect_uri: &str) -> Begun {
    Begun {
        state: random_token(),
        binding: random_token(),
        pending: Pending {
            nonce: random_token(),
            verifier: random_token(),
            redirect_uri: redirect_uri.to_string(),
        },
    }
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
    fn every_login_is_new() {
        let a = begin("http://127.0.0.1/server/oidc/callback");
        let b = begin("http://127.0.0.1/server/oidc/callback");
        assert_ne!(a.state, b.state);
        assert_ne!(a.binding, b.binding);
        assert_ne!(a.pending.nonce, b.pending.nonce);
        assert_ne!(a.pending.verifier, b.pending.verifier);
        assert_eq!(a.pending.challenge(), challenge(&a.pending.verifier));
        assert_ne!(binding_hash(&a.binding), a.binding);
        assert_eq!(binding_hash(&a.binding), binding_hash(&a.binding));
    }
}

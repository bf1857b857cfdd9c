//! Web sessions: the cookie a login opens, its idle limit, and the password hashes.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use axum::http::{HeaderMap, header};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The session cookie.
pub const COOKIE: &str = "bai_web";
/// The header that state-changing cookie requests must carry.
pub const CSRF_HEADER: &str = "x-bai-web";
/// How long a web session lasts without use.
const IDLE: Duration = Duration::from_secs(12 * 3600);

/// argon2id with OWASP's 7 MiB / 5 passes / 1 lane, as strong as the crate's default
/// (19 MiB, 2 passes) by their table but with a third of the memory, which the allocator keeps
/// after every hash: baid's resident memory stays small. Verification reads the parameters from
/// each stored hash, so hashes made with other parameters still verify.
fn argon2() -> argon2::Argon2<'static> {
    let params = argon2::Params::new(7 * 1024, 5, 1, None).unwrap_or_default();
    argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params)
}

/// An argon2id PHC string for `password`.
pub fn hash_password(password: &str) -> Result<String, String> {
    let salt = SaltString::encode_b64(&rand::random::<[u8; 16]>()).map_err(|e| e.to_string())?;
    argon2()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}

pub fn verify_password(password: &str, phc: &str) -> bool {
    PasswordHash::new(phc).is_ok_and(|h| argon2().verify_password(password.as_bytes(), &h).is_ok())
}

/// Where a web session came from when an OpenID provider vouched for it: the person at
/// the provider (`sub`) and the provider's session (`sid`, when its ID token had one). A
/// back-channel logout names them ([`WebSessions::close_from`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub sub: String,
    pub sid: Option<String>,
}

#[derive(Debug)]
struct Entry {
    access_key: String,
    at: Instant,
    origin: Option<Origin>,
}

/// Logged-in browsers: cookie value → (access key, last use, where the login came from).
#[derive(Debug, Default)]
pub struct WebSessions(Mutex<HashMap<String, Entry>>);

impl WebSessions {
    pub fn open(&self, access_key: &str) -> String {
        self.open_from(access_key, None)
    }

    /// A web session of `access_key` that `origin` (an OpenID provider's login) vouched for.
    pub fn open_from(&self, access_key: &str, origin: Option<Origin>) -> String {
        let token = hex::encode(rand::random::<[u8; 32]>());
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.retain(|_, e| e.at.elapsed() < IDLE);
        map.insert(
            token.clone(),
            Entry {
                access_key: access_key.to_string(),
                at: Instant::now(),
                origin,
            },
        );
        token
    }

    pub fn touch(&self, token: &str) -> Option<String> {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match map.get_mut(token) {
            Some(e) if e.at.elapsed() < IDLE => {
                e.at = Instant::now();
                Some(e.access_key.clone())
            }
            Some(_) => {
                map.remove(token);
                None
            }
            None => None,
        }
    }

    pub fn close(&self, token: &str) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(token);
    }

    /// Ends the web sessions a back-channel logout names: with a `sid`, those of that
    /// provider session (and of `sub`, when given too); with only a `sub`, every one of that
    /// person's that the provider vouched for. The access keys of those ended.
    pub fn close_from(&self, sub: Option<&str>, sid: Option<&str>) -> Vec<String> {
        let named = |o: &Origin| match (sub, sid) {
            (_, Some(sid)) => o.sid.as_deref() == Some(sid) && sub.is_none_or(|s| s == o.sub),
            (Some(sub), None) => o.sub == sub,
            (None, None) => false,
        };
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let ended: Vec<String> = map
            .iter()
            .filter(|(_, e)| e.origin.as_ref().is_some_and(named))
            .map(|(t, _)| t.clone())
            .collect();
        ended
            .iter()
            .filter_map(|t| map.remove(t))
            .map(|e| e.access_key)
            .collect()
    }
}

/// The value of cookie `name`, if the request carries it.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(sub: &str, sid: Option<&str>) -> Option<Origin> {
        Some(Origin {
            sub: sub.into(),
            sid: sid.map(str::to_string),
        })
    }

    #[test]
    fn a_back_channel_logout_ends_the_sessions_it_names() {
        let w = WebSessions::default();
        let local = w.open("AKLOCAL");
        let a1 = w.open_from("AKADA", from("ada", Some("s1")));
        let a2 = w.open_from("AKADA", from("ada", Some("s2")));
        let b = w.open_from("AKBOB", from("bob", Some("s3")));
        // A sid: that provider session only (and not when the sub is another's).
        assert!(w.close_from(Some("bob"), Some("s1")).is_empty());
        assert_eq!(w.close_from(None, Some("s1")), ["AKADA"]);
        assert!(w.touch(&a1).is_none());
        assert!(w.touch(&a2).is_some());
        // A sub alone: every one of that person's from the provider.
        w.open_from("AKADA", from("ada", None));
        assert_eq!(w.close_from(Some("ada"), None).len(), 2);
        assert!(w.touch(&a2).is_none());
        assert!(w.close_from(None, None).is_empty());
        // Others, and logins the provider did not vouch for, stay.
        assert!(w.touch(&b).is_some());
        assert!(w.touch(&local).is_some());
    }
}

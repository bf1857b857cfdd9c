//! Logged-in browsers (issue 60): the web sessions behind the `bai_web` cookie, kept in the
//! store ([`bai_store::WebSessionRow`]: the SHA-256 of the cookie's token, never the token)
//! so that a login outlives a restart of `baid up` and a failover to another manager.
//!
//! What stays as it was: a session unused for [`IDLE`] (12 hours) is refused; a logout
//! removes it; a back-channel logout removes those of the provider session (`issuer`,
//! `sid`) or person (`issuer`, `sub`) it names; a disabled user or keypair is refused at use
//! (the caller checks the keypair on every request). New: each access key keeps at most
//! [`MOST_PER_KEY`] sessions (its least recently used go first), and the expired ones are
//! swept at every login and every hour ([`WebSessions::spawn_sweeper`]), so nobody can fill
//! the table.
//!
//! The request path stays cheap. Every web-UI request checks its cookie, but the store is
//! asked (and the last use written) at most once per [`REFRESH`] (60 s) for each cookie:
//! between, a small cache in this manager answers. Idle expiry therefore counts from a
//! last use up to a minute old, which against 12 hours changes nothing a person notices.
//!
//! Why the cache cannot undo a logout served elsewhere: it lives in the manager's state,
//! which exists only while this process leads. A manager builds it after winning the
//! lease and, when it loses the lease, starts its whole process again (`baid`'s `lead`
//! module) and stands by, relaying every request to the leader; so whenever it leads again
//! its cache starts empty, and a logout or back-channel logout that another manager served
//! meanwhile is seen in the store. A logout served here removes the cache's entry at once.
//! And no entry is trusted longer than [`REFRESH`]: even a deposed manager still serving
//! until it steps down (at most the lease's TTL) would trust a removed session no longer.

use bai_store::{Store, StoreError, WebOrigin, WebSessionRow};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a web session lasts without use.
pub const IDLE: Duration = Duration::from_secs(12 * 3600);
/// How long the store's word on a session is trusted before it is asked again (and the
/// session's last use written).
pub const REFRESH: Duration = Duration::from_secs(60);
/// The most web sessions one access key keeps (a browser each).
pub const MOST_PER_KEY: usize = 64;
/// Past this many cached sessions, a miss first drops those no longer trusted.
const PRUNE_ABOVE: usize = 256;

/// Where a web session came from when an OpenID provider vouched for it: the provider
/// (`issuer`), the person there (`sub`) and the provider's session (`sid`, when its ID
/// token had one). A back-channel logout names them ([`WebSessions::close_from`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub issuer: String,
    pub sub: String,
    pub sid: Option<String>,
}

/// What the store said of a session, and when.
#[derive(Debug)]
struct Seen {
    access_key: String,
    at: Instant,
}

/// Logged-in browsers: the store's web sessions, with a short cache of the ones in use.
pub struct WebSessions {
    store: Arc<Store>,
    refresh: Duration,
    /// Token hash → what the store said of it.
    seen: Mutex<HashMap<String, Seen>>,
}

impl std::fmt::Debug for WebSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSessions")
            .field("refresh", &self.refresh)
            .finish_non_exhaustive()
    }
}

/// The SHA-256 (hex) of a cookie's token: what the store keeps.
fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

impl WebSessions {
    pub fn new(store: Arc<Store>) -> WebSessions {
        WebSessions::with_refresh(store, REFRESH)
    }

    /// With another [`REFRESH`] (a test's zero: the store is asked every time).
    pub fn with_refresh(store: Arc<Store>, refresh: Duration) -> WebSessions {
        WebSessions {
            store,
            refresh,
            seen: Mutex::new(HashMap::new()),
        }
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, HashMap<String, Seen>> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new web session of `access_key`: the cookie's token.
    pub fn open(&self, access_key: &str) -> Result<String, StoreError> {
        self.open_from(access_key, None)
    }

    /// A web session of `access_key` that `origin` (an OpenID provider's login) vouched for.
    pub fn open_from(
        &self,
        access_key: &str,
        origin: Option<Origin>,
    ) -> Result<String, StoreError> {
        let token = hex::encode(rand::random::<[u8; 32]>());
        let row = WebSessionRow {
            token_hash: hash(&token),
            access_key: access_key.to_string(),
            origin: origin.map(|o| WebOrigin {
                issuer: o.issuer,
                sub: o.sub,
                sid: o.sid,
            }),
        };
        self.store.web_session_open(&row, IDLE, MOST_PER_KEY)?;
        Ok(token)
    }

    /// The access key of the live session of `token`, its use noted. `None` when there is
    /// none (never opened, logged out, idle too long, or the store cannot be read now).
    pub fn touch(&self, token: &str) -> Option<String> {
        let h = hash(token);
        if let Some(s) = self.seen().get(&h)
            && s.at.elapsed() < self.refresh
        {
            return Some(s.access_key.clone());
        }
        let live = match self.store.web_session_touch(&h, IDLE) {
            Ok(live) => live,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read a web session from the store");
                None
            }
        };
        let mut seen = self.seen();
        match &live {
            Some(ak) => {
                if seen.len() >= PRUNE_ABOVE {
                    let refresh = self.refresh;
                    seen.retain(|_, s| s.at.elapsed() < refresh);
                }
                seen.insert(
                    h,
                    Seen {
                        access_key: ak.clone(),
                        at: Instant::now(),
                    },
                );
            }
            None => {
                seen.remove(&h);
            }
        }
        live
    }

    /// Removes the sessions idle past [`IDLE`] now and every hour, for as long as the
    /// manager runs (logins sweep them too).
    pub fn spawn_sweeper(&self) {
        let store = self.store.clone();
        crate::hourly::spawn("web session sweep", move || {
            match store.web_sessions_sweep(IDLE) {
                Ok(0) => {}
                Ok(n) => tracing::info!(sessions = n, "idle web sessions swept"),
                Err(e) => tracing::warn!(error = %e, "could not sweep the idle web sessions"),
            }
        });
    }

    /// Ends the session of `token` (a logout).
    pub fn close(&self, token: &str) -> Result<(), StoreError> {
        let h = hash(token);
        self.seen().remove(&h);
        self.store.web_session_close(&h)?;
        Ok(())
    }

    /// Ends the web sessions a back-channel logout of `issuer` names: with a `sid`, those
    /// of that provider session (and of `sub`, when given too); with only a `sub`, every
    /// one of that person's that the provider vouched for. The access keys of those ended.
    pub fn close_from(
        &self,
        issuer: &str,
        sub: Option<&str>,
        sid: Option<&str>,
    ) -> Result<Vec<String>, StoreError> {
        let ended = self.store.web_sessions_close_from(issuer, sub, sid)?;
        let mut seen = self.seen();
        Ok(ended
            .into_iter()
            .map(|e| {
                seen.remove(&e.token_hash);
                e.access_key
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const OP: &str = "https://sso.example.org";

    fn from(sub: &str, sid: Option<&str>) -> Option<Origin> {
        Some(Origin {
            issuer: OP.into(),
            sub: sub.into(),
            sid: sid.map(str::to_string),
        })
    }

    fn store() -> Arc<Store> {
        Arc::new(Store::open_for_tests().unwrap())
    }

    #[test]
    fn sessions_open_touch_close_and_only_hashes_are_stored() {
        let store = store();
        let w = WebSessions::new(store.clone());
        let t = w.open("AK1").unwrap();
        assert_eq!(w.touch(&t).as_deref(), Some("AK1"));
        // The store holds the token's hash, which opens nothing itself.
        assert!(store.web_session_touch(&t, IDLE).unwrap().is_none());
        assert_eq!(w.touch(&hash(&t)), None);
        w.close(&t).unwrap();
        assert_eq!(w.touch(&t), None);
        assert_eq!(w.touch("nonsense"), None);
        assert_eq!(store.web_sessions_kept().unwrap(), 0);
    }

    #[test]
    fn a_back_channel_logout_ends_the_sessions_it_names_cached_or_not() {
        let w = WebSessions::new(store());
        let local = w.open("AKLOCAL").unwrap();
        let a1 = w.open_from("AKADA", from("ada", Some("s1"))).unwrap();
        let a2 = w.open_from("AKADA", from("ada", Some("s2"))).unwrap();
        let b = w.open_from("AKBOB", from("bob", Some("s3"))).unwrap();
        // In the cache: the logout must take them out of it too.
        for t in [&local, &a1, &a2, &b] {
            assert!(w.touch(t).is_some());
        }
        assert!(
            w.close_from(OP, Some("bob"), Some("s1"))
                .unwrap()
                .is_empty()
        );
        assert!(
            w.close_from("https://other", None, Some("s1"))
                .unwrap()
                .is_empty()
        );
        assert_eq!(w.close_from(OP, None, Some("s1")).unwrap(), ["AKADA"]);
        assert!(w.touch(&a1).is_none());
        assert!(w.touch(&a2).is_some());
        w.open_from("AKADA", from("ada", None)).unwrap();
        assert_eq!(w.close_from(OP, Some("ada"), None).unwrap().len(), 2);
        assert!(w.touch(&a2).is_none());
        assert!(w.close_from(OP, None, None).unwrap().is_empty());
        assert!(w.touch(&b).is_some());
        assert!(w.touch(&local).is_some());
    }

    #[test]
    fn a_logout_served_by_another_manager_holds_once_the_cache_asks_again() {
        // Two managers on one store: `a` led and cached the session; `b` served its logout.
        let store = store();
        let a = WebSessions::with_refresh(store.clone(), Duration::ZERO);
        let t = a.open("AK1").unwrap();
        assert!(a.touch(&t).is_some());
        let b = WebSessions::new(store.clone());
        assert!(b.touch(&t).is_some());
        b.close(&t).unwrap();
        // `a`'s word from the store is no longer trusted: it asks, and finds it gone.
        assert_eq!(a.touch(&t), None);
        // A manager that leads again starts with an empty cache: it asks the store too.
        assert_eq!(WebSessions::new(store).touch(&t), None);
    }

    #[test]
    fn a_login_outlives_its_manager() {
        let store = store();
        let t = WebSessions::new(store.clone()).open("AK1").unwrap();
        assert_eq!(WebSessions::new(store).touch(&t).as_deref(), Some("AK1"));
    }
}

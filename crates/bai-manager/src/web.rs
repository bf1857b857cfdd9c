//! The web UI's side of the server: email + password login (argon2 hashes) that opens a
//! cookie session, so the browser never holds a secret key; and the UI's static files.
//!
//! `POST /server/login` `{"username": EMAIL, "password"}` → `{"authenticated": true, "data":
//! {…}}` with an HttpOnly, SameSite=Strict cookie; `POST /server/logout`; `GET /server/me`.
//! A request with the cookie and no signature is the logged-in user's; state-changing ones must
//! also carry `X-BAI-Web: 1` (a header no other site can make a browser send).

use crate::auth::Caller;
use crate::state::Manager;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use bai_core::Problem;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
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

/// Logged-in browsers: cookie value → (access key, last use).
#[derive(Debug, Default)]
pub struct WebSessions(Mutex<HashMap<String, (String, Instant)>>);

impl WebSessions {
    fn open(&self, access_key: &str) -> String {
        let token = hex::encode(rand::random::<[u8; 32]>());
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.retain(|_, (_, t)| t.elapsed() < IDLE);
        map.insert(token.clone(), (access_key.to_string(), Instant::now()));
        token
    }

    fn touch(&self, token: &str) -> Option<String> {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match map.get_mut(token) {
            Some((ak, t)) if t.elapsed() < IDLE => {
                *t = Instant::now();
                Some(ak.clone())
            }
            Some(_) => {
                map.remove(token);
                None
            }
            None => None,
        }
    }

    fn close(&self, token: &str) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(token);
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

/// The caller of a cookie request, if it carries a live web session. `Err` when it does but
/// a state-changing request lacks the CSRF header.
pub fn cookie_caller(
    m: &Manager,
    method: &Method,
    headers: &HeaderMap,
) -> Option<Result<Caller, Problem>> {
    let token = cookie(headers, COOKIE)?;
    let ak = m.web_sessions.touch(&token)?;
    if !matches!(*method, Method::GET | Method::HEAD) && !headers.contains_key(CSRF_HEADER) {
        return Some(Err(Problem::forbidden(
            "a browser request that changes something must carry the X-BAI-Web header",
        )));
    }
    let kp = m
        .store
        .keypair(&ak)
        .ok()
        .flatten()
        .filter(|k| k.is_active)?;
    Some(Ok(Caller {
        access_key: kp.access_key,
        user_id: kp.user_id,
        email: kp.email,
        is_admin: kp.is_admin,
    }))
}

fn me_json(c: &Caller) -> Value {
    json!({
        "email": c.email,
        "access_key": c.access_key,
        "is_admin": c.is_admin,
        "role": if c.is_admin { "superadmin" } else { "user" },
    })
}

/// `POST /server/login`.
pub async fn login(State(m): State<Arc<Manager>>, body: axum::body::Bytes) -> Response {
    let b: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let email = b
        .get("username")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim();
    let password = b.get("password").and_then(Value::as_str).unwrap_or("");
    let refuse = |why: &str| {
        (
            StatusCode::UNAUTHORIZED,
            Json(json!({"authenticated": false, "data": {"details": why}})),
        )
            .into_response()
    };
    if email.is_empty() || password.is_empty() {
        return refuse("Enter your email and password.");
    }
    let found = m.store.login_of(email).ok().flatten();
    // Verify against a dummy hash for unknown users too, so timing tells nothing.
    let ok = match &found {
        Some((hash, _)) => verify_password(password, hash),
        None => {
            let _ = verify_password(password, DUMMY_HASH);
            false
        }
    };
    let Some((_, kp)) = found.filter(|_| ok) else {
        tracing::info!(%email, "web login refused");
        return refuse("The email or the password is wrong.");
    };
    let token = m.web_sessions.open(&kp.access_key);
    let caller = Caller {
        access_key: kp.access_key,
        user_id: kp.user_id,
        email: kp.email,
        is_admin: kp.is_admin,
    };
    tracing::info!(email = %caller.email, "web login");
    let mut r = Json(json!({"authenticated": true, "data": me_json(&caller)})).into_response();
    if let Ok(v) = HeaderValue::from_str(&format!(
        "{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"
    )) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

/// An argon2 hash of a random password, compared against when the email is unknown.
const DUMMY_HASH: &str = "$argon2id$v=19$m=7168,t=5,p=1$c29tZXNhbHRzb21lc2FsdA$2qzX3fQnDFX0VqvX3kQ2Gm3rQOVVnHfDrWfN6I5ZgVg";

/// `POST /server/logout`.
pub async fn logout(State(m): State<Arc<Manager>>, headers: HeaderMap) -> Response {
    if let Some(t) = cookie(&headers, COOKIE) {
        m.web_sessions.close(&t);
    }
    let mut r = Json(json!({"authenticated": false})).into_response();
    r.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_static("bai_web=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"),
    );
    r
}

/// `GET /server/me`: who is logged in (401 when nobody).
pub async fn me(State(m): State<Arc<Manager>>, headers: HeaderMap) -> Response {
    match cookie_caller(&m, &Method::GET, &headers) {
        Some(Ok(c)) => Json(me_json(&c)).into_response(),
        _ => crate::error::ApiError(Problem::unauthorized("not logged in")).into_response(),
    }
}

/// Where the built UI lives: `BAI_WEB_DIR`, else `web/dist` of the source tree baid was
/// built in, else `share/bai/web` next to the binary's prefix.
pub fn web_dir() -> Option<PathBuf> {
    if let Ok(d) = std::env::var("BAI_WEB_DIR") {
        return Some(PathBuf::from(d));
    }
    let exe = std::env::current_exe().ok()?;
    let mut candidates = Vec::new();
    // target/<profile>/baid → the repository's web/dist
    if let Some(repo) = exe.parent().and_then(Path::parent).and_then(Path::parent) {
        candidates.push(repo.join("web/dist"));
    }
    if let Some(prefix) = exe.parent().and_then(Path::parent) {
        candidates.push(prefix.join("share/bai/web"));
    }
    candidates
        .into_iter()
        .find(|d| d.join("index.html").is_file())
}

fn content_type(p: &Path) -> &'static str {
    match p.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "application/javascript",
        "css" => "text/css",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "json" => "application/json",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

/// Whether a request is a browser asking for a page.
pub fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/html"))
}

/// Serves the UI: files under `/assets/…`, and `index.html` for every page a browser asks for
/// (the UI routes on the client). `None` when the request is not for the UI.
pub async fn ui_file(uri: &Uri, headers: &HeaderMap) -> Option<Response> {
    let dir = web_dir()?;
    let path = uri.path();
    let rel = path.trim_start_matches('/');
    let file = if rel.starts_with("assets/") || rel == "favicon.svg" {
        let safe = bai_core::vpath::confine(rel).ok()?;
        dir.join(safe)
    } else if wants_html(headers) {
        dir.join("index.html")
    } else {
        return None;
    };
    let bytes = tokio::fs::read(&file).await.ok()?;
    let mut r = Response::new(Body::from(bytes));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(&file)),
    );
    let cache = if rel.starts_with("assets/") {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_hash_and_verify() {
        let h = hash_password("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &h));
        assert!(!verify_password("wrong", &h));
        assert!(!verify_password("x", "not a hash"));
        assert!(!verify_password("x", DUMMY_HASH));
        // Our parameters, the dummy's too (unknown emails take as long as known ones).
        assert!(h.starts_with("$argon2id$v=19$m=7168,t=5,p=1$"), "{h}");
        assert!(DUMMY_HASH.starts_with("$argon2id$v=19$m=7168,t=5,p=1$"));
        // A hash made with other parameters still verifies by its own.
        let salt = SaltString::encode_b64(b"0123456789abcdef").unwrap();
        let old = argon2::Argon2::default()
            .hash_password(b"old password", &salt)
            .unwrap()
            .to_string();
        assert!(old.contains("m=19456"));
        assert!(verify_password("old password", &old));
        assert!(!verify_password("other", &old));
    }

    #[test]
    fn web_sessions_open_touch_close() {
        let s = WebSessions::default();
        let t = s.open("AK1");
        assert_eq!(s.touch(&t).as_deref(), Some("AK1"));
        s.close(&t);
        assert_eq!(s.touch(&t), None);
        assert_eq!(s.touch("nonsense"), None);
    }

    #[test]
    fn cookies_and_html_requests() {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, HeaderValue::from_static("a=1; bai_web=tok"));
        h.insert(header::ACCEPT, HeaderValue::from_static("text/html,*/*"));
        assert_eq!(cookie(&h, COOKIE).as_deref(), Some("tok"));
        assert!(wants_html(&h));
        assert!(!wants_html(&HeaderMap::new()));
    }
}

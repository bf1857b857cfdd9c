//! `POST /server/login|logout`, `GET /server/me`, and the caller of a cookie request.

use super::sessions::{COOKIE, CSRF_HEADER, cookie, verify_password};
use crate::identity::Caller;
use crate::state::Manager;
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bai_core::Problem;
use serde_json::{Value, json};
use std::sync::Arc;

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
pub(super) const DUMMY_HASH: &str = "$argon2id$v=19$m=7168,t=5,p=1$c29tZXNhbHRzb21lc2FsdA$2qzX3fQnDFX0VqvX3kQ2Gm3rQOVVnHfDrWfN6I5ZgVg";

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

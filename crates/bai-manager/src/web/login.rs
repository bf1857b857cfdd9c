//! `POST /server/login|logout`, `GET /server/me`, and the caller of a cookie request.

use super::sessions::{COOKIE, CSRF_HEADER, cookie, verify_password};
use crate::state::Manager;
use axum::Json;
use axum::extract::{ConnectInfo, State};
use axum::http::{Extensions, HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bai_api::sessions::{
    LoginRefusal, LoginRefusalData, LoginReply, LoginRequest, LogoutReply, Me, WebRole,
};
use bai_core::Problem;
use bai_ground::identity::Caller;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// The caller of a cookie request, if it carries a live web session. `Err` when it does but
/// a state-changing request lacks the CSRF header.
pub fn cookie_caller(
    m: &Manager,
    method: &Method,
    headers: &HeaderMap,
) -> Option<Result<Caller, Problem>> {
    cookie_keypair(m, method, headers).map(|r| r.map(Caller::from))
}

/// [`cookie_caller`], answering the caller's whole keypair.
pub fn cookie_keypair(
    m: &Manager,
    method: &Method,
    headers: &HeaderMap,
) -> Option<Result<bai_store::KeypairRow, Problem>> {
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
        .filter(|k| k.is_active && k.user_active)?;
    Some(Ok(kp))
}

fn me_of(c: &Caller) -> Me {
    Me {
        email: c.email.clone(),
        access_key: c.access_key.clone(),
        is_admin: c.is_admin,
        role: if c.is_admin {
            WebRole::Superadmin
        } else {
            WebRole::User
        },
    }
}

/// The key the per-client login throttle counts a request's failures by: the client's IP
/// address (an IPv6 one by its /64, what one host usually holds), when the server was told
/// it (`axum::extract::ConnectInfo`).
pub(super) fn client_of(ext: &Extensions) -> Option<String> {
    let ip = ext.get::<ConnectInfo<SocketAddr>>()?.0.ip();
    Some(match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    })
}

/// The wait before `client` may try to log in again, if it is throttled.
pub(super) fn client_wait(m: &Manager, client: Option<&str>) -> Option<u64> {
    let wait = m
        .client_logins
        .wait(client?, bai_ground::guard::now_secs())?;
    tracing::info!(
        client,
        "web login throttled: too many refused logins from this address"
    );
    bai_ground::audit::record(
        &m.store,
        client.unwrap_or("-"),
        None,
        "login",
        "web",
        Err("throttled (client)"),
    );
    Some(wait)
}

/// Counts a refused login (a 400, 401 or 403 answer) against `client`.
pub(super) fn count_client(m: &Manager, client: Option<&str>, r: &Response) {
    if let Some(c) = client
        && matches!(r.status().as_u16(), 400 | 401 | 403)
    {
        m.client_logins.failed(c, bai_ground::guard::now_secs());
    }
}

/// `POST /server/login`: refused logins from one client address are throttled whatever
/// names they give ([`Manager::client_logins`]), as those of one name are.
pub async fn login(
    State(m): State<Arc<Manager>>,
    headers: HeaderMap,
    ext: Extensions,
    body: axum::body::Bytes,
) -> Response {
    let client = client_of(&ext);
    if let Some(wait) = client_wait(&m, client.as_deref()) {
        return throttled(
            wait,
            "Too many refused logins from this address: try again in {} minutes.",
        );
    }
    let r = login_checked(m.clone(), headers, body).await;
    count_client(&m, client.as_deref(), &r);
    r
}

/// A 429 login refusal; `{}` in `words` is the minutes to wait.
fn throttled(wait: u64, words: &str) -> Response {
    let mut r = (
        StatusCode::TOO_MANY_REQUESTS,
        Json(LoginRefusal {
            authenticated: false,
            data: LoginRefusalData {
                details: words.replace("{}", &wait.div_ceil(60).to_string()),
            },
        }),
    )
        .into_response();
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(wait));
    r
}

async fn login_checked(m: Arc<Manager>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    // The official client encodes the body over plain HTTP (`X-BackendAI-Encoded: true`).
    let encoded = headers
        .get("x-backendai-encoded")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let body = if encoded {
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let scheme = m.config.api_scheme();
        let endpoints = [format!("{scheme}://{host}"), format!("{scheme}://{host}/")];
        match super::encoded::decode(&body, &endpoints) {
            Ok(plain) => axum::body::Bytes::from(plain),
            Err(why) => {
                return (
                    StatusCode::BAD_REQUEST,
                    Json(Problem::invalid(format!(
                        "the login body cannot be read: {why}"
                    ))),
                )
                    .into_response();
            }
        }
    } else {
        body
    };
    // A body that is not a login request is one without an email and a password.
    let b: LoginRequest = serde_json::from_slice(&body).unwrap_or(LoginRequest {
        username: String::new(),
        password: String::new(),
    });
    let email = b.username.trim();
    let password = b.password.as_str();
    if email.is_empty() || password.is_empty() {
        return refusal("Enter your email and password.");
    }
    let now = bai_ground::guard::now_secs();
    if let Some(wait) = m.logins.wait(email, now) {
        tracing::info!(%email, "web login throttled");
        bai_ground::audit::record(&m.store, email, None, "login", "web", Err("throttled"));
        return throttled(
            wait,
            "Too many wrong passwords for this email: try again in {} minutes.",
        );
    }
    let found = m.store.login_of(email).ok().flatten();
    // A name that is no local account with a password is the directory's, when there is one
    // (local accounts, the superadmin's above all, never depend on it).
    if found.is_none()
        && let Some(dir) = m.directory.get()
    {
        return directory_login(&m, dir, email, password, now).await;
    }
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
        m.logins.failed(email, now);
        bai_ground::audit::record(
            &m.store,
            email,
            None,
            "login",
            "web",
            Err("wrong email or password"),
        );
        return refusal(if m.directory.get().is_some() {
            super::directory::WRONG
        } else {
            "The email or the password is wrong."
        });
    };
    m.logins.succeeded(email);
    logged_in(&m, kp, "web")
}

/// A login checked by the site's directory ([`super::directory`]): refusals count towards
/// the throttle like wrong local passwords; a directory that cannot be asked is a 503.
async fn directory_login(
    m: &Manager,
    dir: &bai_ldap::Directory,
    name: &str,
    password: &str,
    now: f64,
) -> Response {
    match super::directory::login(&m.store, dir, name, password).await {
        super::directory::Outcome::In(kp) => {
            m.logins.succeeded(name);
            logged_in(m, *kp, "web:directory")
        }
        super::directory::Outcome::Refused(why) => {
            tracing::info!(user = %name, "directory login refused");
            m.logins.failed(name, now);
            bai_ground::audit::record(&m.store, name, None, "login", "web:directory", Err(why));
            refusal(why)
        }
        super::directory::Outcome::Unavailable(why) => {
            tracing::warn!(user = %name, reason = %why, "directory login: the directory cannot be used");
            bai_ground::audit::record(
                &m.store,
                name,
                None,
                "login",
                "web:directory",
                Err("directory unavailable"),
            );
            crate::error::ApiError(Problem::new(
                503,
                "directory-unavailable",
                "Directory unavailable",
                "The site's directory (LDAP) cannot be reached now, so directory accounts cannot log in; local bai accounts still can.",
            ))
            .into_response()
        }
    }
}

/// A 401 login refusal in the web UI's shape.
fn refusal(why: &str) -> Response {
    (
        StatusCode::UNAUTHORIZED,
        Json(LoginRefusal {
            authenticated: false,
            data: LoginRefusalData {
                details: why.to_string(),
            },
        }),
    )
        .into_response()
}

/// A web session opened for `kp`: the reply and its cookie.
fn logged_in(m: &Manager, kp: bai_store::KeypairRow, via: &str) -> Response {
    let (caller, cookie) = match open_session(m, kp, via, None) {
        Ok(opened) => opened,
        Err(e) => return unkept(e),
    };
    let mut r = Json(LoginReply {
        authenticated: true,
        data: me_of(&caller),
    })
    .into_response();
    if let Some(v) = cookie {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

/// A web session opened for `kp` (logged and audited as a login `via`): who it is and the
/// `Set-Cookie` value that carries it — the same for every way of logging in.
/// `origin`: the OpenID provider's login it came from (a back-channel logout may end it).
/// `Err` when the store cannot keep the session now (nothing was logged in).
pub(super) fn open_session(
    m: &Manager,
    kp: bai_store::KeypairRow,
    via: &str,
    origin: Option<bai_ground::browsers::Origin>,
) -> Result<(Caller, Option<HeaderValue>), bai_store::StoreError> {
    let token = m.web_sessions.open_from(&kp.access_key, origin)?;
    let caller = Caller::from(kp);
    tracing::info!(email = %caller.email, via, "web login");
    bai_ground::audit::record(
        &m.store,
        &caller.email,
        Some(&caller.access_key),
        "login",
        via,
        Ok(()),
    );
    let cookie = HeaderValue::from_str(&format!(
        "{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict{}",
        secure(m)
    ))
    .ok();
    Ok((caller, cookie))
}

/// The answer to a login or logout that the store cannot keep now (503 when the database
/// cannot be reached, as every store failure answers).
fn unkept(e: bai_store::StoreError) -> Response {
    crate::error::ApiError::from(e).into_response()
}

/// An argon2 hash of a random password, compared against when the email is unknown.
pub(super) const DUMMY_HASH: &str = "$argon2id$v=19$m=7168,t=5,p=1$c29tZXNhbHRzb21lc2FsdA$2qzX3fQnDFX0VqvX3kQ2Gm3rQOVVnHfDrWfN6I5ZgVg";

/// `POST /server/logout`.
pub async fn logout(State(m): State<Arc<Manager>>, headers: HeaderMap) -> Response {
    if let Some(t) = cookie(&headers, COOKIE)
        && let Err(e) = m.web_sessions.close(&t)
    {
        // Still logged in: saying otherwise would leave a session the person thinks ended.
        return unkept(e);
    }
    let mut r = Json(LogoutReply {
        authenticated: false,
    })
    .into_response();
    if let Ok(v) = HeaderValue::from_str(&format!(
        "{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0{}",
        secure(&m)
    )) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

/// The cookie attribute that keeps it off plain HTTP, when the API is served over HTTPS.
pub(super) fn secure(m: &Manager) -> &'static str {
    if m.config.tls { "; Secure" } else { "" }
}

/// `GET /server/me`: who is logged in (401 when nobody).
pub async fn me(State(m): State<Arc<Manager>>, headers: HeaderMap) -> Response {
    match cookie_caller(&m, &Method::GET, &headers) {
        Some(Ok(c)) => Json(me_of(&c)).into_response(),
        _ => crate::error::ApiError(Problem::unauthorized("not logged in")).into_response(),
    }
}

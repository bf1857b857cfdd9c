//! The web login through the site's OpenID provider (`baid up --oidc-issuer …`, issue 60):
//! `GET /server/oidc/login` sends the browser to the provider (authorization code, PKCE
//! S256, `state` and `nonce` kept server-side, the browser bound by a short-lived cookie);
//! `GET /server/oidc/callback` takes the login back, exchanges the code, checks the ID token
//! ([`bai_oidc`]) and opens bai's web session exactly as a password login does, then sends
//! the browser to the UI. The account is made or brought in line by [`super::external`].
//!
//! A refusal is a page for a browser (or a JSON problem for anything else), an audit line,
//! never a 500; no code, token or secret is logged.

use super::external::{self, External, OIDC_SETTING};
use super::login::{client_of, client_wait, count_client, open_session, secure};
use super::sessions::cookie;
use crate::state::Manager;
use axum::Json;
use axum::extract::{Query, State};
use axum::http::{Extensions, HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bai_api::sessions::{LoginOptions, OidcOption};
use bai_core::Problem;
use bai_oidc::{FlowError, Identity, OidcError, Pending, Provider};
use bai_store::OidcTake;
use std::collections::HashMap;
use std::sync::Arc;

/// The cookie that binds a login under way to the browser that began it. `SameSite=Lax`:
/// the provider's redirect back is a top-level navigation from another site.
const BINDING: &str = "bai_oidc";
pub const LOGIN_PATH: &str = "/server/oidc/login";
pub const CALLBACK_PATH: &str = "/server/oidc/callback";
/// The audit log's target of these logins.
pub(super) const VIA: &str = "web:oidc";

/// `GET /server/login-options`: what the login page offers.
pub async fn options(State(m): State<Arc<Manager>>, headers: HeaderMap) -> Json<LoginOptions> {
    Json(LoginOptions {
        directory: m.directory.get().is_some(),
        oidc: m.oidc.get().map(|p| OidcOption {
            name: p.config().name.clone(),
            login_url: LOGIN_PATH.into(),
            logout_url: p.end_session_url(Some(&format!("{}/", origin(&m, &headers)))),
        }),
    })
}

/// `{scheme}://{Host}` of this request.
fn origin(m: &Manager, headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("localhost");
    format!("{}://{host}", m.config.api_scheme())
}

fn redirect_uri(m: &Manager, p: &Provider, headers: &HeaderMap) -> String {
    p.config()
        .redirect_uri
        .clone()
        .unwrap_or_else(|| format!("{}{CALLBACK_PATH}", origin(m, headers)))
}

/// `GET /server/oidc/login`: to the provider.
pub async fn login(State(m): State<Arc<Manager>>, headers: HeaderMap) -> Response {
    let Some(p) = m.oidc.get() else {
        return not_configured();
    };
    match p.begin(&redirect_uri(&m, p, &headers)).await {
        Ok((url, begun)) => {
            let row = bai_store::OidcLoginRow {
                state: begun.state.clone(),
                binding_hash: bai_oidc::flow::binding_hash(&begun.binding),
                nonce: begun.pending.nonce.clone(),
                verifier: begun.pending.verifier.clone(),
                redirect_uri: begun.pending.redirect_uri.clone(),
            };
            if let Err(e) =
                m.store
                    .oidc_login_put(&row, bai_oidc::flow::LIFETIME, bai_oidc::flow::MOST)
            {
                tracing::error!(error = %e, "OpenID login: the login under way cannot be kept");
                return refused(&m, &headers, "-", &Refusal::database());
            }
            let mut r = see_other(&url);
            if let Ok(v) = HeaderValue::from_str(&format!(
                "{BINDING}={}; Path=/server/oidc; HttpOnly; SameSite=Lax; Max-Age={}{}",
                begun.binding,
                bai_oidc::flow::LIFETIME.as_secs(),
                secure(&m)
            )) {
                r.headers_mut().insert(header::SET_COOKIE, v);
            }
            r
        }
        Err(e) => {
            tracing::warn!(reason = %e, "OpenID login: the provider cannot be used");
            refused(&m, &headers, "-", &Refusal::unavailable())
        }
    }
}

/// `GET /server/oidc/callback?code&state` (or `?error&state`): back from the provider.
/// Refused callbacks — a forged or replayed state as much as a refused account — count
/// towards the throttle of the client's address, which a password login shares.
pub async fn callback(
    State(m): State<Arc<Manager>>,
    headers: HeaderMap,
    ext: Extensions,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let client = client_of(&ext);
    if let Some(wait) = client_wait(&m, client.as_deref()) {
        let why = Refusal {
            status: 429,
            slug: "too-many-logins",
            title: "Too many logins",
            msg: format!(
                "Too many refused logins from this address: try again in {} minutes.",
                wait.div_ceil(60)
            ),
        };
        return refused(&m, &headers, "-", &why);
    }
    let r = callback_checked(&m, &headers, q).await;
    count_client(&m, client.as_deref(), &r);
    r
}

async fn callback_checked(
    m: &Arc<Manager>,
    headers: &HeaderMap,
    q: HashMap<String, String>,
) -> Response {
    let (m, headers) = (m.clone(), headers.clone());
    let Some(p) = m.oidc.get() else {
        return not_configured();
    };
    let binding = cookie(&headers, BINDING);
    let login = match take_login(&m, q.get("state").map(String::as_str), binding.as_deref()) {
        Ok(Ok(l)) => l,
        Ok(Err(e)) => {
            tracing::info!(reason = %e, "OpenID login: a callback of no login under way");
            return refused(&m, &headers, "-", &Refusal::state(&e));
        }
        Err(e) => {
            tracing::error!(error = %e, "OpenID login: the logins under way cannot be read");
            return refused(&m, &headers, "-", &Refusal::database());
        }
    };
    // RFC 9207: an `iss` in the answer is the provider's (no mix-up with another one).
    if let Some(iss) = q.get("iss")
        && !p.issued_by(iss).await
    {
        let why = Refusal::bad("The answer comes from another OpenID provider (iss).");
        return refused(&m, &headers, "-", &why);
    }
    if let Some(error) = q.get("error") {
        // The provider said no (the user cancelled, or may not use this client).
        let why = Refusal {
            status: 401,
            slug: "oidc-refused",
            title: "Login refused by the provider",
            msg: format!(
                "The OpenID provider did not log you in ({}): try again, or ask the site's administrators.",
                short(error)
            ),
        };
        return refused(&m, &headers, "-", &why);
    }
    let Some(code) = q.get("code").filter(|c| !c.is_empty()) else {
        let why = Refusal::bad("The provider's answer has no authorization code.");
        return refused(&m, &headers, "-", &why);
    };
    let who = match p.finish(code, &login).await {
        Ok(who) => who,
        Err(e) => {
            let why = match &e {
                OidcError::Unavailable(reason) => {
                    tracing::warn!(%reason, "OpenID login: the provider cannot be used");
                    Refusal::unavailable()
                }
                OidcError::Refused { error } => Refusal {
                    status: 401,
                    slug: "oidc-refused",
                    title: "Login refused by the provider",
                    msg: format!(
                        "The OpenID provider refused to complete the login ({}): start it again.",
                        short(error)
                    ),
                },
                OidcError::Token(t) => Refusal {
                    status: 401,
                    slug: "oidc-token",
                    title: "ID token refused",
                    msg: format!("The provider's answer cannot be trusted: {t}."),
                },
                OidcError::NoEmail => Refusal {
                    status: 401,
                    slug: "oidc-no-email",
                    title: "No email address",
                    msg: "The provider gave no email address for you, which bai needs: ask the site's administrators.".into(),
                },
            };
            tracing::info!(reason = %e, "OpenID login refused");
            return refused(&m, &headers, "-", &why);
        }
    };
    let email = who.email.clone();
    let now = bai_ground::guard::now_secs();
    if let Some(wait) = m.logins.wait(&email, now) {
        let why = Refusal {
            status: 429,
            slug: "too-many-logins",
            title: "Too many logins",
            msg: format!(
                "Too many refused logins for this email: try again in {} minutes.",
                wait.div_ceil(60)
            ),
        };
        return refused(&m, &headers, &email, &why);
    }
    let account = account_of(p, &who);
    match external::provision(&m.store, &account) {
        Ok(Ok(kp)) => {
            m.logins.succeeded(&email);
            let origin = bai_ground::browsers::Origin {
                issuer: who.issuer.clone(),
                sub: who.subject.clone(),
                sid: who.sid.clone(),
            };
            let session = match open_session(&m, kp, VIA, Some(origin)) {
                Ok((_, session)) => session,
                Err(e) => {
                    tracing::error!(error = %e, "the web session of an OpenID login cannot be kept");
                    let why = Refusal {
                        status: 503,
                        slug: "database-unavailable",
                        title: "Database unavailable",
                        msg: "bai cannot keep your login now: try again in a moment.".into(),
                    };
                    return refused(&m, &headers, &email, &why);
                }
            };
            let mut r = see_other("/");
            if let Some(v) = session {
                r.headers_mut().append(header::SET_COOKIE, v);
            }
            clear_binding(&m, &mut r);
            r
        }
        Ok(Err(why)) => {
            m.logins.failed(&email, now);
            let why = Refusal {
                status: 403,
                slug: "oidc-account",
                title: "Login refused",
                msg: why.to_string(),
            };
            refused(&m, &headers, &email, &why)
        }
        Err(e) => {
            tracing::error!(error = %e, "the account of an OpenID user cannot be written");
            let why = Refusal {
                status: 503,
                slug: "database-unavailable",
                title: "Database unavailable",
                msg: "bai cannot write your account now: try again in a moment.".into(),
            };
            refused(&m, &headers, &email, &why)
        }
    }
}

/// The login `state` names, taken from the store (once), if the browser's `binding` cookie
/// is the one it was begun with and it is not too old.
fn take_login(
    m: &Manager,
    state: Option<&str>,
    binding: Option<&str>,
) -> Result<Result<Pending, FlowError>, bai_store::StoreError> {
    let Some(state) = state.filter(|s| !s.is_empty()) else {
        return Ok(Err(FlowError::NoState));
    };
    // Without its cookie, the hash of nothing: never a binding's.
    let hash = binding.map_or_else(String::new, bai_oidc::flow::binding_hash);
    Ok(match m.store.oidc_login_take(state, &hash)? {
        OidcTake::Taken(row) => Ok(Pending {
            nonce: row.nonce,
            verifier: row.verifier,
            redirect_uri: row.redirect_uri,
        }),
        OidcTake::Expired => Err(FlowError::Expired),
        OidcTake::Unknown => Err(FlowError::UnknownState),
        OidcTake::OtherBrowser => Err(FlowError::OtherBrowser),
    })
}

/// The account the provider vouches for, by the group mapping.
fn account_of(p: &Provider, who: &Identity) -> External {
    let c = p.config();
    External {
        marker: (OIDC_SETTING, format!("{}#{}", who.issuer, who.subject)),
        made_by: "the site's OpenID provider",
        uid: who.username.clone().filter(|u| !u.contains('@')),
        email: who.email.clone(),
        full_name: who.name.clone(),
        is_admin: c.is_admin(&who.groups),
        projects: c.projects(&who.groups),
    }
}

/// A refusal: its status, problem type and words.
struct Refusal {
    status: u16,
    slug: &'static str,
    title: &'static str,
    msg: String,
}

impl Refusal {
    fn state(e: &FlowError) -> Refusal {
        let msg = match e {
            FlowError::Expired => "The login took too long: start it again.",
            FlowError::OtherBrowser => {
                "This login was begun in another browser (or its cookie is gone): start it again here."
            }
            FlowError::NoState | FlowError::UnknownState => {
                "This login is unknown or was already used (the state does not match one begun here): start it again."
            }
        };
        Refusal {
            status: 400,
            slug: "oidc-state",
            title: "Login not recognised",
            msg: msg.into(),
        }
    }

    fn unavailable() -> Refusal {
        Refusal {
            status: 503,
            slug: "oidc-unavailable",
            title: "OpenID provider unavailable",
            msg: "The site's OpenID provider cannot be reached now: try again later; local bai accounts can still log in with a password.".into(),
        }
    }

    fn database() -> Refusal {
        Refusal {
            status: 503,
            slug: "database-unavailable",
            title: "Database unavailable",
            msg: "bai cannot keep or read your login now: try again in a moment.".into(),
        }
    }

    fn bad(msg: &str) -> Refusal {
        Refusal {
            status: 400,
            slug: "oidc-callback",
            title: "Bad login callback",
            msg: msg.into(),
        }
    }
}

/// An error code of the provider's, cut short and to safe characters (it goes in a page).
fn short(code: &str) -> String {
    code.chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .take(64)
        .collect()
}

/// The refusal audited, as a page for a browser or a JSON problem.
fn refused(m: &Manager, headers: &HeaderMap, actor: &str, why: &Refusal) -> Response {
    bai_ground::audit::record(&m.store, actor, None, "login", VIA, Err(why.slug));
    let status = StatusCode::from_u16(why.status).unwrap_or(StatusCode::BAD_REQUEST);
    // The browser's binding cookie stays: a forged callback must not end its own login.
    if super::wants_html(headers) {
        (
            status,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            page(why.title, &why.msg),
        )
            .into_response()
    } else {
        crate::error::ApiError(Problem::new(
            why.status,
            why.slug,
            why.title,
            why.msg.clone(),
        ))
        .into_response()
    }
}

pub(super) fn not_configured() -> Response {
    crate::error::ApiError(Problem::new(
        404,
        "oidc-not-configured",
        "No OpenID provider",
        "This bai has no OpenID provider (baid up --oidc-issuer): log in with an email and a password.",
    ))
    .into_response()
}

fn see_other(to: &str) -> Response {
    let mut r = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(to) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

fn clear_binding(m: &Manager, r: &mut Response) {
    if let Ok(v) = HeaderValue::from_str(&format!(
        "{BINDING}=; Path=/server/oidc; HttpOnly; SameSite=Lax; Max-Age=0{}",
        secure(m)
    )) {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
}

/// A small page with the refusal and a way back to the login page.
fn page(title: &str, msg: &str) -> String {
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{t} — bai</title></head>\
         <body style=\"font-family:sans-serif;max-width:40em;margin:4em auto\">\
         <h1>{t}</h1><p id=\"msg\">{m}</p><p><a href=\"/\">Back to the login page</a></p>\
         </body></html>",
        t = esc(title),
        m = esc(msg)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_escape_and_codes_are_cut() {
        let p = page("T", "<script>x</script> & \"y\"");
        assert!(p.contains("&lt;script&gt;x&lt;/script&gt; &amp; &quot;y&quot;"));
        assert_eq!(short("access_denied<b>"), "access_deniedb");
        assert_eq!(short(&"x".repeat(100)).len(), 64);
    }
}

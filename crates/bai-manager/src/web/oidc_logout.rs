//! OpenID Connect Back-Channel Logout 1.0 (issue 60): `POST /server/oidc/backchannel-logout`
//! with the form field `logout_token`, which the provider sends when a person's session there
//! ends (its logout page, an administrator ending the session). The token is checked as an ID
//! token is — its signature against the provider's JWKS (fetched again for a key bai does not
//! know, at most every 30 s for these), `iss`, `aud`, `iat` — and must carry the
//! back-channel logout event, no `nonce`, and a `sid` and/or a `sub` ([`bai_oidc::logout`]).
//! Then every bai web session that came from that provider session (`sid`, remembered at the
//! login), or with only a `sub` every web session of that person through the provider, ends:
//! removed from the store (with the provider's issuer), so on every manager, after any
//! failover or restart.
//!
//! A bad token is `400` with a JSON problem and an audit line (`logout`, target `web:oidc`),
//! never a 500; the token itself is never logged. The answer carries `Cache-Control:
//! no-store`, as the spec asks.

use super::oidc::{VIA, not_configured};
use crate::state::Manager;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bai_core::Problem;
use std::sync::Arc;

/// `POST /server/oidc/backchannel-logout` (`application/x-www-form-urlencoded`).
pub async fn backchannel_logout(State(m): State<Arc<Manager>>, body: Bytes) -> Response {
    let Some(p) = m.oidc.get() else {
        return not_configured();
    };
    let token = form_urlencoded::parse(&body)
        .find(|(k, _)| k == "logout_token")
        .map(|(_, v)| v.into_owned())
        .filter(|t| !t.is_empty());
    let Some(token) = token else {
        return refused(
            &m,
            400,
            "oidc-logout-token",
            "The request has no logout_token.",
        );
    };
    let logout = match p.check_logout(&token).await {
        Ok(Ok(l)) => l,
        Ok(Err(e)) => {
            // The reason may quote the token's `kid`, which its sender chose: cut short.
            let reason: String = e.to_string().chars().take(200).collect();
            tracing::info!(%reason, "OpenID back-channel logout refused");
            let msg = format!("The logout token is refused: {reason}.");
            return refused(&m, 400, "oidc-logout-token", &msg);
        }
        Err(e) => {
            tracing::warn!(reason = %e, "OpenID back-channel logout: the provider cannot be used");
            let msg = "bai cannot fetch the OpenID provider's keys to check the logout token now: send it again later.";
            return refused(&m, 503, "oidc-unavailable", msg);
        }
    };
    let ended = match m.web_sessions.close_from(
        &p.config().issuer,
        logout.sub.as_deref(),
        logout.sid.as_deref(),
    ) {
        Ok(ended) => ended,
        Err(e) => {
            tracing::error!(error = %e, "OpenID back-channel logout: the store cannot end the sessions now");
            let msg = "bai cannot end the web sessions now (its database does not answer): send the logout again later.";
            return refused(&m, 503, "database-unavailable", msg);
        }
    };
    // Who it was, for the audit log: the account of an ended session, else the subject.
    let actor = ended
        .first()
        .and_then(|ak| m.store.keypair(ak).ok().flatten())
        .map(|kp| kp.email)
        .or_else(|| logout.sub.clone())
        .unwrap_or_else(|| "-".into());
    tracing::info!(
        ended = ended.len(),
        "OpenID back-channel logout: the provider ended a session"
    );
    bai_ground::audit::record(&m.store, &actor, None, "logout", VIA, Ok(()));
    no_store(StatusCode::OK.into_response())
}

fn refused(m: &Manager, status: u16, slug: &str, msg: &str) -> Response {
    bai_ground::audit::record(&m.store, "-", None, "logout", VIA, Err(slug));
    let title = match (status, slug) {
        (400, _) => "Logout token refused",
        (_, "database-unavailable") => "Database unavailable",
        _ => "OpenID provider unavailable",
    };
    no_store(crate::error::ApiError(Problem::new(status, slug, title, msg)).into_response())
}

fn no_store(mut r: Response) -> Response {
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

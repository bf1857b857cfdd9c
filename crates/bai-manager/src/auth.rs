//! Request authentication: the Backend.AI keypair HMAC signature (wire contract §2.3),
//! a ±15 minute clock window, and the caller's identity for authorization.

use crate::error::ApiError;
use crate::state::Manager;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bai_core::Problem;
use bai_core::sign::{SignInput, media_type_of, parse_authorization, sign, signatures_match};
use std::sync::Arc;

pub use bai_ground::identity::Caller;

pub const CLOCK_WINDOW_SECS: i64 = 15 * 60;

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// Parses the Date header: ISO-8601 with offset (naive = UTC), or RFC 2822.
pub fn parse_date(s: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .or_else(|| {
            chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f")
                .ok()
                .map(|n| n.and_utc().fixed_offset())
        })
        .or_else(|| chrono::DateTime::parse_from_rfc2822(s).ok())
}

/// Checks the signature of a request; returns the caller.
pub fn verify(
    m: &Manager,
    method: &str,
    path_and_query: &str,
    headers: &HeaderMap,
) -> Result<Caller, Problem> {
    verify_keypair(m, method, path_and_query, headers).map(Caller::from)
}

/// [`verify`], answering the caller's whole keypair (its rate limit too).
pub fn verify_keypair(
    m: &Manager,
    method: &str,
    path_and_query: &str,
    headers: &HeaderMap,
) -> Result<bai_store::KeypairRow, Problem> {
    let auth = header(headers, "authorization").ok_or_else(|| {
        Problem::unauthorized(
            "this API needs a signed request: set BACKEND_ACCESS_KEY and BACKEND_SECRET_KEY",
        )
    })?;
    let cred = parse_authorization(auth)
        .ok_or_else(|| Problem::unauthorized("malformed Authorization header: expected `BackendAI signMethod=HMAC-SHA256, credential=AK:SIG`"))?;
    if cred.hash != "sha256" {
        return Err(Problem::unauthorized(format!(
            "unsupported signature hash {:?}: use HMAC-SHA256",
            cred.hash
        )));
    }
    let raw_date = header(headers, "date")
        .or_else(|| header(headers, "x-backendai-date"))
        .or_else(|| header(headers, "x-sorna-date"))
        .ok_or_else(|| Problem::unauthorized("the request has no Date header"))?;
    let date = parse_date(raw_date).ok_or_else(|| {
        Problem::unauthorized(format!("cannot parse the Date header {raw_date:?}"))
    })?;
    let skew = (chrono::Utc::now() - date.with_timezone(&chrono::Utc))
        .num_seconds()
        .abs();
    if skew > CLOCK_WINDOW_SECS {
        return Err(Problem::unauthorized(format!(
            "the request's Date is {skew}s away from the server clock (at most {CLOCK_WINDOW_SECS}s allowed): check your clock"
        )));
    }
    let kp = m
        .store
        .keypair(&cred.access_key)?
        .ok_or_else(|| Problem::unauthorized("unknown or inactive access key"))?;
    let host = header(headers, "host").unwrap_or("");
    let version = header(headers, "x-backendai-version").unwrap_or(bai_core::API_VERSION);
    let media = media_type_of(header(headers, "content-type"));
    let ymd = date.format("%Y%m%d").to_string();
    let mut hosts = vec![host.to_string()];
    if !host.contains(':') {
        hosts.push(format!("{host}:80"));
        hosts.push(format!("{host}:443"));
    }
    let ok = hosts.iter().any(|h| {
        let expected = sign(
            &kp.secret_key,
            &SignInput {
                method,
                path_and_query,
                date: raw_date,
                date_ymd: &ymd,
                host: h,
                media_type: &media,
                api_version: version,
            },
        );
        signatures_match(&expected, &cred.signature)
    });
    if !ok {
        return Err(Problem::unauthorized(
            "signature mismatch: check BACKEND_SECRET_KEY and that BACKEND_ENDPOINT matches the server address",
        ));
    }
    // Said only to whoever holds the secret: the keypair is theirs.
    if !kp.user_active {
        return Err(Problem::unauthorized(
            "the account of this keypair is deactivated (by an administrator, or because the site's directory no longer has it): ask the site's administrators",
        ));
    }
    if !kp.is_active {
        return Err(Problem::unauthorized(
            "this keypair is revoked: make or use another one (web UI: Settings → My keypair)",
        ));
    }
    Ok(kp)
}

/// In a request's extensions when its [`Caller`] signed it with the keypair's secret (HMAC),
/// not when a web session's cookie stands for the signature: who already holds the secret.
#[derive(Debug, Clone, Copy)]
pub struct Signed;

/// Axum middleware: verifies the signature and stores the [`Caller`] in the request.
pub async fn authenticate(State(m): State<Arc<Manager>>, mut req: Request, next: Next) -> Response {
    let pq = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| req.uri().path().to_string());
    // A browser of the web UI: its session cookie stands for the signature.
    let cookie = if req.headers().contains_key("authorization") {
        None
    } else {
        crate::web::cookie_keypair(&m, req.method(), req.headers())
    };
    let signed = cookie.is_none();
    let result =
        cookie.unwrap_or_else(|| verify_keypair(&m, req.method().as_str(), &pq, req.headers()));
    let kp = match result {
        Ok(kp) => kp,
        Err(p) => {
            tracing::info!(path = %req.uri().path(), reason = %p.msg, "rejected request");
            return ApiError(p).into_response();
        }
    };
    let verdict = m
        .rate
        .check(&kp.access_key, kp.rate_limit, bai_ground::guard::now_secs());
    let mut r = if verdict.allowed {
        let caller = Caller::from(kp);
        let method = req.method().clone();
        let route = req
            .extensions()
            .get::<axum::extract::MatchedPath>()
            .map(|p| p.as_str().to_string())
            .unwrap_or_default();
        let path = req.uri().path().to_string();
        req.extensions_mut().insert(caller.clone());
        if signed {
            req.extensions_mut().insert(Signed);
        }
        let r = next.run(req).await;
        // GraphQL records its mutations itself (its queries change nothing).
        if bai_ground::audit::changes(&method) && route != "/admin/gql" {
            bai_ground::audit::record_request(
                &m.store,
                &caller,
                method.as_str(),
                &route,
                &path,
                r.status().as_u16(),
                r.extensions().get::<bai_ground::audit::AuditTarget>(),
            );
        }
        r
    } else {
        tracing::info!(access_key = %kp.access_key, "rate limit reached");
        let mut r = ApiError(Problem::new(
            429,
            "too-many-requests",
            "Too many API requests.",
            format!(
                "this keypair may make {} requests per {} minutes; try again in {}s",
                verdict.limit,
                bai_ground::guard::WINDOW_SECS / 60,
                verdict.retry_after
            ),
        ))
        .into_response();
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(verdict.retry_after));
        r
    };
    if verdict.limit > 0 {
        let h = r.headers_mut();
        h.insert("x-ratelimit-limit", HeaderValue::from(verdict.limit));
        h.insert(
            "x-ratelimit-remaining",
            HeaderValue::from(verdict.remaining),
        );
        h.insert(
            "x-ratelimit-window",
            HeaderValue::from(bai_ground::guard::WINDOW_SECS),
        );
    }
    r
}

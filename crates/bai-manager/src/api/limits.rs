//! Request body limits. Every API body is small JSON (or a small multipart form) except the
//! file data of an upload, so the default limit is small and only the routes that carry
//! file data raise it. A body over the limit is refused with a 413 JSON problem.

use crate::error::ApiError;
use axum::extract::DefaultBodyLimit;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use bai_core::Problem;

/// The most a JSON (or GraphQL, or login form) body may hold: a session creation with a
/// large bootstrap script is far below it.
pub const JSON_BODY_LIMIT: usize = 4 << 20;

/// The most one request carrying file data may hold (`/session/{reference}/upload`).
pub const FILE_BODY_LIMIT: usize = 1 << 30;

/// The default limit, for every route.
pub fn json_only() -> DefaultBodyLimit {
    DefaultBodyLimit::max(JSON_BODY_LIMIT)
}

/// The limit of a route that carries file data.
pub fn file_data() -> DefaultBodyLimit {
    DefaultBodyLimit::max(FILE_BODY_LIMIT)
}

/// The problem of a body over the limit.
pub fn too_large() -> Problem {
    Problem::new(
        413,
        "request-too-large",
        "Request body too large.",
        format!(
            "the request body is larger than this endpoint accepts (at most {} MiB for JSON); send files with a folder upload (request-upload) or the session's upload",
            JSON_BODY_LIMIT >> 20
        ),
    )
}

/// Answer mapping of the API routes: an error axum makes itself (a body over the limit, a
/// query or body that does not parse, a method the route does not take, a WebSocket route
/// called without the upgrade) is plain text; it leaves as a JSON problem like every other
/// API error, with axum's words as `msg`. Errors that are already JSON, and every other
/// answer, pass unchanged.
pub async fn plain_errors_as_problems(resp: Response) -> Response {
    let status = resp.status();
    if !status.is_client_error() {
        return resp;
    }
    let ct = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if ct.contains("json") || ct.starts_with("text/html") || ct.starts_with("text/event-stream") {
        return resp;
    }
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return ApiError(too_large()).into_response();
    }
    let text = axum::body::to_bytes(resp.into_body(), 64 << 10)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let p = match status {
        StatusCode::METHOD_NOT_ALLOWED => Problem::new(
            405,
            "method-not-allowed",
            "Method not allowed.",
            "this route does not take that method (see docs/openapi.json)",
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => Problem::new(
            415,
            "unsupported-media-type",
            "Unsupported media type.",
            if text.is_empty() {
                "this route does not take a body of that Content-Type".to_string()
            } else {
                text
            },
        ),
        s => {
            let msg = if text.is_empty() {
                s.canonical_reason().unwrap_or("bad request").to_string()
            } else {
                text
            };
            let mut p = Problem::invalid(msg);
            p.status = s.as_u16();
            p
        }
    };
    ApiError(p).into_response()
}

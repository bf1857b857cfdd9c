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

/// Answer mapping of the API routes: axum refuses a body over the limit with a plain-text
/// 413; it leaves as a JSON problem like every other API error. A 413 that is already JSON
/// (e.g. a folder quota problem) passes unchanged.
pub async fn too_large_as_problem(resp: Response) -> Response {
    if resp.status() != StatusCode::PAYLOAD_TOO_LARGE {
        return resp;
    }
    let is_json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.contains("json"));
    if is_json {
        return resp;
    }
    ApiError(too_large()).into_response()
}

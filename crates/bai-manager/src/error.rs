//! API errors: every failure leaves as a JSON problem with `type`, `title` and `msg`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bai_core::Problem;

/// A [`Problem`] that axum can return.
#[derive(Debug)]
pub struct ApiError(pub Problem);

impl From<Problem> for ApiError {
    fn from(p: Problem) -> Self {
        ApiError(p)
    }
}

impl From<bai_store::StoreError> for ApiError {
    fn from(e: bai_store::StoreError) -> Self {
        ApiError(e.into())
    }
}

impl From<bai_core::agent::AgentError> for ApiError {
    fn from(e: bai_core::agent::AgentError) -> Self {
        ApiError(e.into())
    }
}

/// A task of the server's own that panicked or was cancelled: its failure (500).
impl From<tokio::task::JoinError> for ApiError {
    fn from(e: tokio::task::JoinError) -> Self {
        ApiError(Problem::internal(format!(
            "a task of the server failed: {e}"
        )))
    }
}

/// A response the server could not build (a header it made is invalid): its failure (500).
impl From<axum::http::Error> for ApiError {
    fn from(e: axum::http::Error) -> Self {
        ApiError(Problem::internal(format!("cannot build the response: {e}")))
    }
}

/// A file of the server's own it could not read (the client's own refusals are mapped
/// where they happen): its failure (500).
impl From<std::io::Error> for ApiError {
    fn from(e: std::io::Error) -> Self {
        ApiError(Problem::internal(e.to_string()))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.0.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, axum::Json(self.0)).into_response()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

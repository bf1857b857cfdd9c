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

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.0.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, axum::Json(self.0)).into_response()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

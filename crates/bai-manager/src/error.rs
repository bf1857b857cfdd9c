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
        ApiError(store_problem(e))
    }
}

/// The problem a store failure answers: 507 when the disk holding the database is full
/// (the change was rolled back, nothing is lost, and it works again once space is freed),
/// else 500.
pub fn store_problem(e: bai_store::StoreError) -> Problem {
    tracing::error!(error = %e, "database error");
    if e.is_disk_full() {
        return disk_full();
    }
    Problem::internal(format!("database error: {e}"))
}

/// 507: the server's disk is full.
pub fn disk_full() -> Problem {
    Problem::new(
        507,
        "insufficient-storage",
        "The server is out of disk space.",
        "the disk holding bai's data is full, so nothing was changed; an administrator must free space",
    )
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.0.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, axum::Json(self.0)).into_response()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

//! Users as administrators look them up.

use crate::error::ApiResult;
use crate::state::Manager;
use axum::Json;
use axum::extract::{Path, State};
use bai_api::resources::UserKeypair;
use bai_core::Problem;
use std::sync::Arc;

/// `GET /admin/users/{email}` (administrators): the user's access key, for "assign a session
/// owner" in the launcher.
pub async fn user_by_email(
    State(m): State<Arc<Manager>>,
    Path(email): Path<String>,
) -> ApiResult<Json<UserKeypair>> {
    let kp = m
        .store
        .keypair_by_email(&email)?
        .ok_or_else(|| Problem::not_found("user", format!("no user with email {email:?}")))?;
    Ok(Json(UserKeypair {
        email: kp.email,
        access_key: kp.access_key,
        is_admin: kp.is_admin,
    }))
}

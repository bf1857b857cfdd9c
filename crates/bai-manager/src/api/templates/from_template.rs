//! `POST /session/_/create-from-template`: a `POST /session` request made of a template's
//! values with the call's on top (`bai_api::sessions::TemplateCall` makes it).

use super::visible_template;
use crate::api::session::create_answer;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::{Extension, Json};
use bai_api::sessions::{TaskTemplate, TemplateCall};
use bai_core::Problem;
use bai_ground::audit::AuditTarget;
use std::sync::Arc;

pub async fn create_from_template(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<(
    StatusCode,
    Extension<AuditTarget>,
    Json<bai_api::sessions::CreateReply>,
)> {
    let call = TemplateCall::read(&body)?;
    let id = call.template_id.clone();
    let row = visible_template(&m, &caller, &id)?;
    let template: TaskTemplate = serde_json::from_str(&row.template)
        .map_err(|e| Problem::internal(format!("stored template {id} does not read: {e}")))?;
    let body = call.create_body(&template, row.project.as_deref(), &row.domain_name)?;
    create_answer(&m, &caller, &headers, &body).await
}

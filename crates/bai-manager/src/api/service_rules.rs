//! Auto-scaling rules of a service through bai's REST API (`/services/{id}/rules`) and the
//! autoscaler's decisions (`/services/{id}/decisions`); Backend.AI's GraphQL for rules
//! (`gql::rules`) shares the rule functions here.

use super::services::visible_service;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::Extension;
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use bai_api::services::{Decision, DecisionList, Rule, RuleFields, RuleList, Success};
use bai_core::Problem;
use bai_serving::autoscale;
use bai_store::EndpointRow;
use std::sync::Arc;
use uuid::Uuid;

/// `GET /services/{id}/rules`.
pub async fn rules(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<RuleList>> {
    let e = visible_service(&m, &caller, &id)?;
    let rules = m
        .store
        .rules_of(e.id)?
        .iter()
        .map(autoscale::input::from_row)
        .collect::<Result<_, _>>()?;
    Ok(Json(RuleList { rules }))
}

/// Creates a rule of a service from its fields (REST body or GraphQL `props`).
pub fn create_rule(m: &Manager, e: &EndpointRow, fields: &RuleFields) -> Result<Rule, Problem> {
    let mut rule = autoscale::input::blank();
    super::rule_input::apply(&mut rule, fields)?;
    let text = Problem::json_text(&rule)?;
    rule.created_at = m.store.insert_rule(rule.id, e.id, &text)?;
    tracing::info!(service = %e.id, rule = %rule.id, "auto-scaling rule created");
    Ok(rule)
}

/// Changes a rule's fields; returns it and its service.
pub fn modify_rule(
    m: &Manager,
    caller: &Caller,
    id: &str,
    fields: &RuleFields,
) -> Result<(Rule, EndpointRow), Problem> {
    let (row, e) = rule_of(m, caller, id)?;
    let mut rule = autoscale::input::from_row(&row)?;
    super::rule_input::apply(&mut rule, fields)?;
    let text = Problem::json_text(&rule)?;
    m.store.update_rule(row.id, &text)?;
    Ok((rule, e))
}

/// A rule the caller may see (through its service), by id.
pub fn rule_of(
    m: &Manager,
    caller: &Caller,
    id: &str,
) -> Result<(bai_store::RuleRow, EndpointRow), Problem> {
    let not_found = || {
        Problem::not_found(
            "rule",
            format!("no auto-scaling rule {id:?} is visible to you"),
        )
    };
    let rid = Uuid::parse_str(id.trim()).map_err(|_| not_found())?;
    let row = m.store.rule(rid)?.ok_or_else(not_found)?;
    let e = visible_service(m, caller, &row.endpoint_id.to_string()).map_err(|_| not_found())?;
    Ok((row, e))
}

/// `POST /services/{id}/rules`.
pub async fn add_rule(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Rule>)> {
    let e = visible_service(&m, &caller, &id)?;
    let fields = bai_api::services::RuleFields::read_body(&body)?;
    let rule = create_rule(&m, &e, &fields)?;
    Ok((StatusCode::CREATED, Json(rule)))
}

/// `PATCH /services/{id}/rules/{rule}`.
pub async fn change_rule(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path((id, rule)): Path<(String, String)>,
    body: Bytes,
) -> ApiResult<Json<Rule>> {
    let e = visible_service(&m, &caller, &id)?;
    let fields = bai_api::services::RuleFields::read_body(&body)?;
    // The rule must be this service's before anything of it changes.
    let (_, owner) = rule_of(&m, &caller, &rule)?;
    if owner.id != e.id {
        return Err(Problem::not_found("rule", "the rule belongs to another service").into());
    }
    let (rule, _) = modify_rule(&m, &caller, &rule, &fields)?;
    Ok(Json(rule))
}

/// `DELETE /services/{id}/rules/{rule}`.
pub async fn delete_rule(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path((id, rule)): Path<(String, String)>,
) -> ApiResult<Json<Success>> {
    let e = visible_service(&m, &caller, &id)?;
    let (row, owner) = rule_of(&m, &caller, &rule)?;
    if owner.id != e.id {
        return Err(Problem::not_found("rule", "the rule belongs to another service").into());
    }
    m.store.delete_rule(row.id)?;
    Ok(Json(Success { success: true }))
}

/// `GET /services/{id}/decisions`: the autoscaler's decisions, newest first.
pub async fn decisions(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<DecisionList>> {
    let e = visible_service(&m, &caller, &id)?;
    let decisions = m
        .store
        .decisions_of(e.id, 200)?
        .into_iter()
        .filter_map(|(id, at, text)| Decision::from_stored(id, at, &text))
        .collect();
    Ok(Json(DecisionList { decisions }))
}

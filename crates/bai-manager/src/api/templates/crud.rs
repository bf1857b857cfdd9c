//! Storing, listing, showing, replacing and deleting session templates.

use super::payload::{items, name_of};
use super::visible_template;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use bai_api::sessions::{
    CreateTemplates, TaskTemplate, TemplateCreated, TemplateDone, TemplateInfo, TemplateListItem,
    UpdateTemplate,
};
use bai_core::Problem;
use bai_store::TemplateRow;
use std::collections::HashMap;
use std::sync::Arc;

fn stored(t: &TemplateRow) -> Result<TaskTemplate, Problem> {
    serde_json::from_str(&t.template)
        .map_err(|e| Problem::internal(format!("stored template {} does not read: {e}", t.id)))
}

/// `POST /template/session`: stores every template of the payload for the caller (or, for
/// an administrator, the keypair `owner_access_key` names) in a project they belong to.
pub async fn create(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> ApiResult<Json<Vec<TemplateCreated>>> {
    let req: CreateTemplates = crate::api::typed_body(&body)?;
    let (access_key, user_id) =
        caller.owner(&m.store, req.owner_access_key.as_deref(), "store templates")?;
    let project = req.group.unwrap_or_else(|| "default".into());
    if !m.store.project_exists(&project)? {
        return Err(Problem::invalid(format!("project {project:?} does not exist")).into());
    }
    if !m.store.is_member(&access_key, &project)? {
        return Err(Problem::forbidden(format!(
            "the templates' owner is not a member of project {project:?}"
        ))
        .into());
    }
    let domain_name = req.domain.unwrap_or_else(|| "default".into());
    let list = items(&req.payload, &m.agents.accel_slots())?;
    let mut out = Vec::with_capacity(list.len());
    for it in &list {
        let row = TemplateRow {
            id: uuid::Uuid::new_v4().simple().to_string(),
            name: name_of(it).to_string(),
            user_id: user_id.clone(),
            access_key: access_key.clone(),
            project: Some(project.clone()),
            domain_name: domain_name.clone(),
            template: Problem::json_text(&it.template)?,
            created_at: String::new(),
        };
        m.store.insert_template(&row)?;
        out.push(TemplateCreated {
            id: row.id,
            user: user_id.clone(),
        });
    }
    Ok(Json(out))
}

/// `GET /template/session`: the caller's templates; with `all` (query or JSON body),
/// everyone's (administrators only).
pub async fn list(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Query(q): Query<HashMap<String, String>>,
    body: Bytes,
) -> ApiResult<Json<Vec<TemplateListItem>>> {
    let b = bai_api::body::Fields::read(&body)?;
    let all = match b.flag("all") {
        Some(v) => v,
        _ => q
            .get("all")
            .is_some_and(|v| matches!(v.as_str(), "1" | "true" | "yes")),
    };
    if all && !caller.is_admin {
        return Err(Problem::forbidden("only administrators can list everyone's templates").into());
    }
    let rows = m
        .store
        .templates((!all).then_some(caller.user_id.as_str()))?;
    let project_ids: HashMap<String, String> = m
        .store
        .project_rows(None)?
        .into_iter()
        .map(|p| (p.name, p.id))
        .collect();
    let mut emails: HashMap<String, Option<String>> = HashMap::new();
    let mut out = Vec::with_capacity(rows.len());
    for t in rows {
        if !emails.contains_key(&t.user_id) {
            let email = m.store.user_by_id(&t.user_id)?.map(|u| u.email);
            emails.insert(t.user_id.clone(), email);
        }
        out.push(TemplateListItem {
            template: stored(&t)?,
            is_owner: t.user_id == caller.user_id,
            user_email: emails.get(&t.user_id).cloned().flatten(),
            group: t.project.as_ref().and_then(|p| project_ids.get(p).cloned()),
            group_name: t.project,
            name: t.name,
            id: t.id,
            created_at: t.created_at,
            user: t.user_id,
            domain_name: t.domain_name,
            kind: "task".into(),
        });
    }
    Ok(Json(out))
}

/// `GET /template/session/{id}`: the template and whose it is; `?format=yaml` as YAML text.
pub async fn get(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> ApiResult<Response> {
    let yaml = match q.get("format").map(String::as_str) {
        None | Some("json") => false,
        Some("yaml") => true,
        Some(other) => {
            return Err(
                Problem::invalid(format!("format {other:?} is unknown: use json or yaml")).into(),
            );
        }
    };
    let t = visible_template(&m, &caller, &id)?;
    let group_id = match &t.project {
        Some(p) => m
            .store
            .project_rows(None)?
            .into_iter()
            .find(|r| &r.name == p)
            .map(|r| r.id),
        None => None,
    };
    let info = TemplateInfo {
        template: stored(&t)?,
        name: t.name,
        user_uuid: t.user_id,
        group_id,
        domain_name: t.domain_name,
    };
    if yaml {
        let text = serde_yaml::to_string(&info)
            .map_err(|e| Problem::internal(format!("cannot write the template as YAML: {e}")))?;
        return Ok(([(axum::http::header::CONTENT_TYPE, "text/yaml")], text).into_response());
    }
    Ok(Json(info).into_response())
}

/// `PUT /template/session/{id}`: replaces the template with the payload's one item.
pub async fn put(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<TemplateDone>> {
    let t = visible_template(&m, &caller, &id)?;
    let req: UpdateTemplate = crate::api::typed_body(&body)?;
    let list = items(&req.payload, &m.agents.accel_slots())?;
    let [it] = list.as_slice() else {
        return Err(Problem::invalid(format!(
            "the payload holds {} templates; a template is replaced by exactly one",
            list.len()
        ))
        .into());
    };
    let text = Problem::json_text(&it.template)?;
    m.store.update_template(&t.id, name_of(it), &text)?;
    Ok(Json(TemplateDone { success: true }))
}

/// `DELETE /template/session/{id}`.
pub async fn delete(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<TemplateDone>> {
    let t = visible_template(&m, &caller, &id)?;
    m.store.delete_template(&t.id)?;
    Ok(Json(TemplateDone { success: true }))
}

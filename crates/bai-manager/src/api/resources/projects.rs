//! Projects: the caller's listing and the administrators' management of projects and
//! their members.

use super::{check_name, existing_project, typed_body};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use bai_api::resources::{
    CreatedProject, Membership, MembershipChange, NewProject, Project, ProjectList,
};
use bai_core::Problem;
use std::sync::Arc;

/// `GET /projects`: the caller's projects (administrators: every project).
pub async fn list_projects(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
) -> ApiResult<Json<ProjectList>> {
    let me = m
        .store
        .keypair(&caller.access_key)?
        .map(|k| k.email)
        .unwrap_or_default();
    let projects = m
        .store
        .projects()?
        .into_iter()
        .filter(|(_, _, members)| caller.is_admin || members.contains(&me))
        .map(|(name, description, members)| Project {
            name,
            description,
            members,
        })
        .collect();
    Ok(Json(ProjectList { projects }))
}

/// `POST /admin/projects`: `{"name", "description"}`.
pub async fn create_project(
    State(m): State<Arc<Manager>>,
    body: axum::body::Bytes,
) -> ApiResult<(StatusCode, Json<CreatedProject>)> {
    let NewProject { name, description } = typed_body(&body)?;
    check_name("project", &name)?;
    let description = description.unwrap_or_default();
    if !m.store.create_project(&name, &description)? {
        return Err(Problem::conflict(
            "project-exists",
            "The project exists.",
            format!("project {name:?} already exists"),
        )
        .into());
    }
    Ok((
        StatusCode::CREATED,
        Json(CreatedProject { name, description }),
    ))
}

pub async fn delete_project(
    State(m): State<Arc<Manager>>,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
    if name == "default" {
        return Err(Problem::invalid("the default project cannot be deleted").into());
    }
    let folders = m.store.project_vfolder_count(&name)?;
    if folders > 0 {
        return Err(Problem::conflict(
            "project-has-folders",
            "The project owns data folders.",
            format!("project {name:?} owns {folders} data folder(s); delete them first"),
        )
        .into());
    }
    if !m.store.delete_project(&name)? {
        return Err(Problem::not_found("project", format!("no project {name:?}")).into());
    }
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /admin/projects/{name}/members`: `{"email": E, "member": bool}`.
pub async fn project_member(
    State(m): State<Arc<Manager>>,
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<Json<Membership>> {
    let MembershipChange { email, member } = typed_body(&body)?;
    existing_project(&m, &name)?;
    let kp = m
        .store
        .keypair_by_email(&email)?
        .ok_or_else(|| Problem::not_found("user", format!("no user with email {email:?}")))?;
    let member = member.unwrap_or(true);
    m.store.set_project_member(&name, &kp.user_id, member)?;
    Ok(Json(Membership {
        project: name,
        email,
        member,
    }))
}

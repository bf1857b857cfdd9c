//! Shares of folders: a project folder's members given their own permission (`share`), shares
//! ended (`unshare`, `leave`), and the shares of the folders the caller manages listed and
//! set one by one (`/folders/_/shared`).

use super::{managed_folder, typed_body, visible_folder};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use bai_api::folders::{
    Leave, Share, ShareEntry, ShareList, Shared, SharedTo, Unshare, Unshared, UpdateShare,
};
use bai_core::Problem;
use bai_store::{UserInfo, VFolderRow};
use std::collections::HashMap;
use std::sync::Arc;

fn user_of(m: &Manager, email: &str) -> ApiResult<UserInfo> {
    Ok(m.store
        .user_by_email(email)?
        .ok_or_else(|| Problem::not_found("user", format!("no user has the email {email:?}")))?)
}

fn not_shared(v: &VFolderRow) -> Problem {
    Problem::not_found(
        "vfolder-share",
        format!("data folder {:?} is not shared with that user", v.name),
    )
}

/// `POST /folders/{id}/share`: each member named gets `permission` on the project folder in
/// place of the folder's own (administrators).
pub async fn share(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Shared>)> {
    let req: Share = typed_body(&body)?;
    let v = managed_folder(&m, &caller, &id)?;
    let Some(project) = &v.project else {
        return Err(Problem::invalid(format!(
            "data folder {:?} is yours: invite users to it instead (only project folders are \
             shared directly)",
            v.name
        ))
        .into());
    };
    if req.emails.is_empty() {
        return Err(Problem::invalid("name at least one member to share with (emails)").into());
    }
    let mut users = Vec::with_capacity(req.emails.len());
    for email in &req.emails {
        let u = user_of(&m, email)?;
        if !m.store.project_member_ids(project)?.contains(&u.id) {
            return Err(Problem::invalid(format!(
                "{email} is not a member of project {project:?}; add them to it first"
            ))
            .into());
        }
        users.push(u);
    }
    for u in &users {
        m.store.share_vfolder(v.id, &u.id, req.permission)?;
    }
    Ok((
        StatusCode::CREATED,
        Json(Shared {
            shared_emails: users.into_iter().map(|u| u.email).collect(),
        }),
    ))
}

/// `DELETE /folders/{id}/unshare`: the named users' shares end (project folders:
/// administrators; user folders: their owner).
pub async fn unshare(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Unshared>> {
    let req: Unshare = typed_body(&body)?;
    let v = managed_folder(&m, &caller, &id)?;
    let mut done = Vec::new();
    for email in &req.emails {
        let u = user_of(&m, email)?;
        if m.store.unshare_vfolder(v.id, &u.id)? {
            done.push(u.email);
        }
    }
    Ok(Json(Unshared {
        unshared_emails: done,
    }))
}

/// `POST /folders/{id}/leave`: the caller leaves a user folder shared with them; the owner
/// (with `shared_user_uuid`) takes it from that user.
pub async fn leave(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<bai_api::folders::sharing::Ok>> {
    let req: Leave = typed_body(&body)?;
    let v = visible_folder(&m, &caller, &id)?;
    let who = match req.shared_user_uuid.as_deref() {
        Some(u) if u != caller.user_id => {
            managed_folder(&m, &caller, &id)?;
            u.to_string()
        }
        _ => {
            if v.project.is_some() || v.user_id == caller.user_id {
                return Err(Problem::invalid(format!(
                    "data folder {:?} is not shared with you: only a folder another user shared \
                     with you can be left",
                    v.name
                ))
                .into());
            }
            caller.user_id.clone()
        }
    };
    if !m.store.unshare_vfolder(v.id, &who)? {
        return Err(not_shared(&v).into());
    }
    Ok(Json(Default::default()))
}

/// The folders whose shares the caller manages: their own user folders, and (administrators)
/// project folders.
fn managed(m: &Manager, caller: &Caller) -> ApiResult<Vec<VFolderRow>> {
    Ok(m.store
        .visible_vfolders(&caller.user_id, caller.is_admin)?
        .into_iter()
        .filter(|v| match &v.project {
            Some(_) => caller.is_admin,
            None => v.user_id == caller.user_id,
        })
        .collect())
}

/// `GET /folders/_/shared` (`?vfolder_id=`): the shares of the folders the caller manages.
pub async fn shared(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Query(q): Query<HashMap<String, String>>,
) -> ApiResult<Json<ShareList>> {
    let folders = match q.get("vfolder_id") {
        Some(id) => vec![managed_folder(&m, &caller, id)?],
        None => managed(&m, &caller)?,
    };
    let mut shared = Vec::new();
    for v in folders {
        let status = super::folder_view(&m, &v, &caller.user_id).status;
        let (owner, kind) = match &v.project {
            Some(p) => (p.clone(), bai_api::folders::Ownership::Group),
            None => (v.user_id.clone(), bai_api::folders::Ownership::User),
        };
        for s in m.store.vfolder_shares(v.id)? {
            shared.push(ShareEntry {
                vfolder_id: v.id.simple().to_string(),
                vfolder_name: v.name.clone(),
                status,
                owner: owner.clone(),
                kind,
                shared_to: SharedTo {
                    uuid: s.user_id,
                    email: s.email,
                },
                perm: s.permission,
            });
        }
    }
    Ok(Json(ShareList { shared }))
}

/// `POST /folders/_/shared`: sets one user's share (`perm: null` ends it). A user folder's
/// share must exist already (invitations make them); a project folder's member may be given
/// one.
pub async fn update_shared(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> ApiResult<Json<bai_api::folders::sharing::Ok>> {
    let req: UpdateShare = typed_body(&body)?;
    let v = managed_folder(&m, &caller, &req.vfolder)?;
    let has = m
        .store
        .vfolder_shares(v.id)?
        .iter()
        .any(|s| s.user_id == req.user);
    match req.perm {
        None => {
            if !m.store.unshare_vfolder(v.id, &req.user)? {
                return Err(not_shared(&v).into());
            }
        }
        Some(p) => {
            let allowed = match &v.project {
                Some(project) => m.store.project_member_ids(project)?.contains(&req.user),
                None => has,
            };
            if !allowed {
                return Err(Problem::invalid(format!(
                    "data folder {:?} is not shared with user {:?}: invite them (user \
                     folders) or make them a member of its project",
                    v.name, req.user
                ))
                .into());
            }
            m.store.share_vfolder(v.id, &req.user, p)?;
        }
    }
    Ok(Json(Default::default()))
}

//! Invitations to a user's own folder: its owner invites users by email with a permission;
//! an invitee accepts (the folder is then shared with them) or rejects, and the owner may
//! cancel or change a pending one. Only the invitee sees an invitation to them and only the
//! inviter one they sent; anyone else is answered 404, as if it did not exist.

use super::{managed_folder, own_folder, typed_body};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use bai_api::folders::{
    Invitation, InvitationRef, Invitations, Invite, Invited, Skipped, UpdateInvitation,
};
use bai_core::Problem;
use bai_store::{AcceptRefusal, InvitationRow, invitation_state};
use std::sync::Arc;

fn not_found(id: &str) -> Problem {
    Problem::not_found(
        "vfolder-invitation",
        format!("no pending invitation {id:?} is yours"),
    )
}

fn wire(i: InvitationRow) -> Invitation {
    Invitation {
        id: i.id,
        inviter: i.inviter_email.clone(),
        inviter_user_email: i.inviter_email,
        invitee_user_email: i.invitee_email,
        mount_permission: i.permission,
        perm: i.permission,
        created_at: i.created_at,
        modified_at: i.modified_at,
        vfolder_id: i.vfolder_id.simple().to_string(),
        vfolder_name: i.vfolder_name,
        status: i.state.clone(),
        state: i.state,
    }
}

/// `POST /folders/{id}/invite`: invites each email to the caller's own folder. Invitees who
/// have it already, or a pending invitation to it, are skipped and named; an email of no user
/// refuses the whole request.
pub async fn invite(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Invited>)> {
    let req: Invite = typed_body(&body)?;
    // Only a folder of one's own is offered: any other (one shared with the caller included)
    // is not found among theirs.
    let v = own_folder(&m, &caller, &id)?;
    if v.project.is_none() && v.user_id != caller.user_id {
        return Err(Problem::not_found(
            "vfolder",
            format!(
                "data folder {:?} is shared with you, not yours: only its owner invites users to it",
                v.name
            ),
        )
        .into());
    }
    let v = managed_folder(&m, &caller, &id)?;
    if v.project.is_some() {
        return Err(Problem::invalid(format!(
            "project folder {:?} is shared with its project's members; give a member their own \
             permission with share instead",
            v.name
        ))
        .into());
    }
    if v.name.starts_with('.') {
        return Err(Problem::forbidden(format!(
            "automount folder {:?} (a name starting with '.') cannot be shared",
            v.name
        ))
        .into());
    }
    if req.user_ids.is_empty() {
        return Err(Problem::invalid("name at least one user to invite (user_ids)").into());
    }
    let mut invitees = Vec::with_capacity(req.user_ids.len());
    for email in &req.user_ids {
        let u = m.store.user_by_email(email)?.ok_or_else(|| {
            Problem::not_found("user", format!("no user has the email {email:?}"))
        })?;
        if u.id == caller.user_id {
            return Err(Problem::invalid("you cannot invite yourself to your own folder").into());
        }
        invitees.push(u);
    }
    let mut invited = Invited {
        invited_ids: Vec::new(),
        skipped: Vec::new(),
    };
    for u in invitees {
        let reason = if m.store.folder_access(&u.id, &v)?.is_some() {
            Some("already shared")
        } else if m.store.has_pending_invitation(v.id, &u.id)? {
            Some("already invited")
        } else {
            None
        };
        match reason {
            Some(r) => invited.skipped.push(Skipped {
                email: u.email,
                reason: r.into(),
            }),
            None => invited.invited_ids.push(m.store.insert_invitation(
                v.id,
                &caller.user_id,
                &u.id,
                req.perm,
            )?),
        }
    }
    Ok((StatusCode::CREATED, Json(invited)))
}

/// `GET /folders/invitations/list`: the caller's pending invitations.
pub async fn list(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
) -> ApiResult<Json<Invitations>> {
    let rows = m.store.pending_invitations(&caller.user_id, true)?;
    Ok(Json(Invitations {
        invitations: rows.into_iter().map(wire).collect(),
    }))
}

/// `GET /folders/invitations/list-sent`: the pending invitations the caller sent.
pub async fn list_sent(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
) -> ApiResult<Json<Invitations>> {
    let rows = m.store.pending_invitations(&caller.user_id, false)?;
    Ok(Json(Invitations {
        invitations: rows.into_iter().map(wire).collect(),
    }))
}

/// `POST /folders/invitations/accept`: the folder is shared with the invitee.
pub async fn accept(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> ApiResult<Json<bai_api::folders::sharing::Ok>> {
    let InvitationRef { inv_id } = typed_body(&body)?;
    match m.store.accept_invitation(&inv_id, &caller.user_id)? {
        Ok(()) => Ok(Json(Default::default())),
        Err(AcceptRefusal::NotPending) => Err(not_found(&inv_id).into()),
        Err(AcceptRefusal::NameTaken(name)) => Err(Problem::conflict(
            "vfolder-exists",
            "The folder exists.",
            format!(
                "you already have a data folder named {name:?}; rename yours, then accept again"
            ),
        )
        .into()),
    }
}

/// A pending invitation the caller sent or received.
fn pending(m: &Manager, caller: &Caller, id: &str) -> ApiResult<InvitationRow> {
    match m.store.invitation(id)? {
        Some(i)
            if i.state == invitation_state::PENDING
                && (i.invitee_id == caller.user_id || i.inviter_id == caller.user_id) =>
        {
            Ok(i)
        }
        _ => Err(not_found(id).into()),
    }
}

/// `DELETE /folders/invitations/delete`: the invitee rejects it, or the inviter cancels it.
pub async fn delete(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> ApiResult<Json<bai_api::folders::sharing::Ok>> {
    let InvitationRef { inv_id } = typed_body(&body)?;
    let i = pending(&m, &caller, &inv_id)?;
    let state = if i.invitee_id == caller.user_id {
        invitation_state::REJECTED
    } else {
        invitation_state::CANCELED
    };
    if !m.store.close_invitation(&inv_id, state)? {
        return Err(not_found(&inv_id).into());
    }
    Ok(Json(Default::default()))
}

/// `POST /folders/invitations/update/{inv_id}`: the inviter changes the permission offered.
pub async fn update(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(inv_id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<bai_api::folders::sharing::Ok>> {
    let UpdateInvitation { perm } = typed_body(&body)?;
    let i = pending(&m, &caller, &inv_id)?;
    if i.inviter_id != caller.user_id {
        return Err(not_found(&inv_id).into());
    }
    if !m.store.set_invitation_permission(&inv_id, perm)? {
        return Err(not_found(&inv_id).into());
    }
    Ok(Json(Default::default()))
}

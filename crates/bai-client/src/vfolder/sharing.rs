//! Sharing folders: invitations, project-folder shares, leaving, and clones.

use super::{body, folder_path, typed};
use crate::{Client, ClientError, encode};
use bai_api::folders::{
    CloneFolder, Cloned, Invitation, InvitationRef, Invitations, Invite, Invited, Leave,
    Permission, Share, ShareEntry, ShareList, Shared, Unshare, Unshared,
};
use reqwest::Method;

impl Client {
    /// Invites users (by email) to the caller's folder `id`.
    pub async fn invite_to_vfolder(
        &self,
        id: &str,
        perm: Permission,
        emails: &[String],
    ) -> Result<Invited, ClientError> {
        let b = body(&Invite {
            perm,
            user_ids: emails.to_vec(),
        })?;
        typed(
            self.send_json(Method::POST, &folder_path(id, "/invite"), Some(&b))
                .await?,
        )
    }

    /// Pending invitations to the caller, or (`sent`) from them.
    pub async fn vfolder_invitations(&self, sent: bool) -> Result<Vec<Invitation>, ClientError> {
        let p = if sent {
            "/folders/invitations/list-sent"
        } else {
            "/folders/invitations/list"
        };
        let list: Invitations = typed(self.send_json(Method::GET, p, None).await?)?;
        Ok(list.invitations)
    }

    pub async fn accept_invitation(&self, inv_id: &str) -> Result<(), ClientError> {
        let b = body(&InvitationRef {
            inv_id: inv_id.to_string(),
        })?;
        self.send_json(Method::POST, "/folders/invitations/accept", Some(&b))
            .await
            .map(|_| ())
    }

    /// Rejects an invitation to the caller, or cancels one they sent.
    pub async fn delete_invitation(&self, inv_id: &str) -> Result<(), ClientError> {
        let b = body(&InvitationRef {
            inv_id: inv_id.to_string(),
        })?;
        self.send_json(Method::DELETE, "/folders/invitations/delete", Some(&b))
            .await
            .map(|_| ())
    }

    /// Gives project members their own permission on the project folder `id`.
    pub async fn share_vfolder(
        &self,
        id: &str,
        permission: Permission,
        emails: &[String],
    ) -> Result<Vec<String>, ClientError> {
        let b = body(&Share {
            permission,
            emails: emails.to_vec(),
        })?;
        let r: Shared = typed(
            self.send_json(Method::POST, &folder_path(id, "/share"), Some(&b))
                .await?,
        )?;
        Ok(r.shared_emails)
    }

    /// Ends the named users' shares of folder `id`.
    pub async fn unshare_vfolder(
        &self,
        id: &str,
        emails: &[String],
    ) -> Result<Vec<String>, ClientError> {
        let b = body(&Unshare {
            emails: emails.to_vec(),
        })?;
        let r: Unshared = typed(
            self.send_json(Method::DELETE, &folder_path(id, "/unshare"), Some(&b))
                .await?,
        )?;
        Ok(r.unshared_emails)
    }

    /// Leaves a folder shared with the caller.
    pub async fn leave_vfolder(&self, id: &str) -> Result<(), ClientError> {
        let b = body(&Leave::default())?;
        self.send_json(Method::POST, &folder_path(id, "/leave"), Some(&b))
            .await
            .map(|_| ())
    }

    /// The shares of the folders the caller manages (`id`: of that folder only).
    pub async fn vfolder_shares(&self, id: Option<&str>) -> Result<Vec<ShareEntry>, ClientError> {
        let p = match id {
            Some(id) => format!("/folders/_/shared?{}", encode::query(&[("vfolder_id", id)])),
            None => "/folders/_/shared".to_string(),
        };
        let r: ShareList = typed(self.send_json(Method::GET, &p, None).await?)?;
        Ok(r.shared)
    }

    /// Clones folder `id` into a new folder of the caller's; the copy runs as a background
    /// task (`Cloned::bgtask_id`).
    pub async fn clone_vfolder(
        &self,
        id: &str,
        target_name: &str,
        target_host: Option<&str>,
    ) -> Result<Cloned, ClientError> {
        let b = body(&CloneFolder {
            target_name: target_name.to_string(),
            target_host: target_host.map(str::to_string),
            usage_mode: None,
            permission: None,
            cloneable: None,
        })?;
        typed(
            self.send_json(Method::POST, &folder_path(id, "/clone"), Some(&b))
                .await?,
        )
    }
}

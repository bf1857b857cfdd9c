//! Sharing data folders: shares (a user's access to a folder that is not theirs, with a
//! permission) and invitations (a folder's owner offers a share; the invitee accepts or
//! rejects it, or the owner cancels it).
//!
//! A user folder is seen by its owner and by the users it is shared with. A project folder is
//! seen by its project's members; a share of one overrides the folder's permission for that
//! member only.

use crate::db::{OptionalExtension, params};
use crate::{Result, Store, now_str};
use bai_core::FolderPermission;
use uuid::Uuid;

use crate::VFolderRow;

/// One share: who, with what permission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareRow {
    pub vfolder_id: Uuid,
    pub user_id: String,
    pub email: String,
    pub permission: FolderPermission,
    pub created_at: String,
}

/// An invitation's state.
pub mod invitation_state {
    pub const PENDING: &str = "pending";
    pub const ACCEPTED: &str = "accepted";
    pub const REJECTED: &str = "rejected";
    pub const CANCELED: &str = "canceled";
}

/// An invitation with the names the listings show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvitationRow {
    pub id: String,
    pub vfolder_id: Uuid,
    pub vfolder_name: String,
    pub inviter_id: String,
    pub inviter_email: String,
    pub invitee_id: String,
    pub invitee_email: String,
    pub permission: FolderPermission,
    pub state: String,
    pub created_at: String,
    pub modified_at: Option<String>,
}

/// Why [`Store::accept_invitation`] did not make a share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AcceptRefusal {
    /// No pending invitation of this id for this invitee.
    NotPending,
    /// The invitee sees another folder of the same name.
    NameTaken(String),
}

fn perm(s: String) -> FolderPermission {
    FolderPermission::parse(&s).unwrap_or(FolderPermission::ReadOnly)
}

fn uuid_of(s: String) -> crate::db::Result<Uuid> {
    Uuid::parse_str(&s).map_err(|e| crate::db::Error::Conversion {
        column: 0,
        detail: e.to_string(),
    })
}

const INVITATION: &str = "SELECT i.id, i.vfolder_id, COALESCE(v.name, ''), i.inviter_id,
        COALESCE(a.email, ''), i.invitee_id, COALESCE(b.email, ''), i.permission, i.state,
        i.created_at, i.modified_at
    FROM vfolder_invitations i
    LEFT JOIN vfolders v ON v.id = i.vfolder_id
    LEFT JOIN users a ON a.id = i.inviter_id
    LEFT JOIN users b ON b.id = i.invitee_id";

fn invitation_row(r: &crate::db::Row<'_>) -> crate::db::Result<InvitationRow> {
    Ok(InvitationRow {
        id: r.get(0)?,
        vfolder_id: uuid_of(r.get(1)?)?,
        vfolder_name: r.get(2)?,
        inviter_id: r.get(3)?,
        inviter_email: r.get(4)?,
        invitee_id: r.get(5)?,
        invitee_email: r.get(6)?,
        permission: perm(r.get(7)?),
        state: r.get(8)?,
        created_at: r.get(9)?,
        modified_at: r.get(10)?,
    })
}

impl Store {
    /// What the user may do with the folder's files (None: they cannot see it). A share
    /// overrides the folder's permission.
    pub fn folder_access(&self, user_id: &str, v: &VFolderRow) -> Result<Option<FolderPermission>> {
        let conn = self.read();
        let share: Option<String> = conn
            .query_row(
                "SELECT permission FROM vfolder_shares WHERE vfolder_id = ?1 AND user_id = ?2",
                [&v.id.to_string(), user_id],
                |r| r.get(0),
            )
            .optional()?;
        Ok(match &v.project {
            None if v.user_id == user_id => Some(v.permission),
            None => share.map(perm),
            Some(p) => {
                let member = conn
                    .query_row(
                        "SELECT 1 FROM project_members WHERE project = ?1 AND user_id = ?2",
                        [p, user_id],
                        |_| Ok(()),
                    )
                    .optional()?
                    .is_some();
                member.then(|| share.map(perm).unwrap_or(v.permission))
            }
        })
    }

    /// Shares the folder with the user (or changes the share's permission).
    pub fn share_vfolder(&self, id: Uuid, user_id: &str, p: FolderPermission) -> Result<()> {
        self.conn().execute(
            "INSERT INTO vfolder_shares(vfolder_id, user_id, permission, created_at)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(vfolder_id, user_id) DO UPDATE SET permission = excluded.permission",
            params![id.to_string(), user_id, p.as_str(), now_str()],
        )?;
        Ok(())
    }

    /// Ends a share; false when there was none.
    pub fn unshare_vfolder(&self, id: Uuid, user_id: &str) -> Result<bool> {
        Ok(self.conn().execute(
            "DELETE FROM vfolder_shares WHERE vfolder_id = ?1 AND user_id = ?2",
            params![id.to_string(), user_id],
        )? == 1)
    }

    /// The folder's shares, by email.
    pub fn vfolder_shares(&self, id: Uuid) -> Result<Vec<ShareRow>> {
        let conn = self.read();
        let mut st = conn.prepare(
            "SELECT s.user_id, COALESCE(u.email, ''), s.permission, s.created_at
             FROM vfolder_shares s LEFT JOIN users u ON u.id = s.user_id
             WHERE s.vfolder_id = ?1 ORDER BY u.email",
        )?;
        let rows = st.query_map([id.to_string()], |r| {
            Ok(ShareRow {
                vfolder_id: id,
                user_id: r.get(0)?,
                email: r.get(1)?,
                permission: perm(r.get(2)?),
                created_at: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }

    /// Stores a pending invitation; returns its id.
    pub fn insert_invitation(
        &self,
        vfolder_id: Uuid,
        inviter_id: &str,
        invitee_id: &str,
        p: FolderPermission,
    ) -> Result<String> {
        let id = Uuid::new_v4().to_string();
        self.conn().execute(
            "INSERT INTO vfolder_invitations(id, vfolder_id, inviter_id, invitee_id, permission,
                state, created_at) VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6)",
            params![
                id,
                vfolder_id.to_string(),
                inviter_id,
                invitee_id,
                p.as_str(),
                now_str()
            ],
        )?;
        Ok(id)
    }

    pub fn invitation(&self, id: &str) -> Result<Option<InvitationRow>> {
        Ok(self
            .read()
            .query_row(
                &format!("{INVITATION} WHERE i.id = ?1"),
                [id],
                invitation_row,
            )
            .optional()?)
    }

    /// Pending invitations to (`received`) or from the user, oldest first.
    pub fn pending_invitations(&self, user_id: &str, received: bool) -> Result<Vec<InvitationRow>> {
        let who = if received { "invitee_id" } else { "inviter_id" };
        let conn = self.read();
        let mut st = conn.prepare(&format!(
            "{INVITATION} WHERE i.{who} = ?1 AND i.state = 'pending' ORDER BY i.created_at, i.id"
        ))?;
        let rows = st.query_map([user_id], invitation_row)?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }

    /// Whether the folder has a pending invitation for the user.
    pub fn has_pending_invitation(&self, vfolder_id: Uuid, invitee_id: &str) -> Result<bool> {
        Ok(self
            .read()
            .query_row(
                "SELECT 1 FROM vfolder_invitations
                 WHERE vfolder_id = ?1 AND invitee_id = ?2 AND state = 'pending'",
                params![vfolder_id.to_string(), invitee_id],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// Ends a pending invitation (`rejected` or `canceled`); false when it is not pending.
    pub fn close_invitation(&self, id: &str, state: &str) -> Result<bool> {
        Ok(self.conn().execute(
            "UPDATE vfolder_invitations SET state = ?2, modified_at = ?3
             WHERE id = ?1 AND state = 'pending'",
            params![id, state, now_str()],
        )? == 1)
    }

    /// Changes a pending invitation's permission; false when it is not pending.
    pub fn set_invitation_permission(&self, id: &str, p: FolderPermission) -> Result<bool> {
        Ok(self.conn().execute(
            "UPDATE vfolder_invitations SET permission = ?2, modified_at = ?3
             WHERE id = ?1 AND state = 'pending'",
            params![id, p.as_str(), now_str()],
        )? == 1)
    }

    /// Accepts a pending invitation of `invitee_id` and makes its share, at once.
    pub fn accept_invitation(
        &self,
        id: &str,
        invitee_id: &str,
    ) -> Result<std::result::Result<(), AcceptRefusal>> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let found: Option<(String, String, String)> = tx
            .query_row(
                "SELECT i.vfolder_id, i.permission, v.name FROM vfolder_invitations i
                 JOIN vfolders v ON v.id = i.vfolder_id
                 WHERE i.id = ?1 AND i.invitee_id = ?2 AND i.state = 'pending'",
                [id, invitee_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let Some((vfolder_id, permission, name)) = found else {
            return Ok(Err(AcceptRefusal::NotPending));
        };
        let taken: i64 = tx.query_row(
            "SELECT COUNT(*) FROM vfolders WHERE name = ?1 AND project IS NULL AND (user_id = ?2
                OR id IN (SELECT vfolder_id FROM vfolder_shares WHERE user_id = ?2))",
            [&name, invitee_id],
            |r| r.get(0),
        )?;
        if taken > 0 {
            return Ok(Err(AcceptRefusal::NameTaken(name)));
        }
        tx.execute(
            "UPDATE vfolder_invitations SET state = 'accepted', modified_at = ?2 WHERE id = ?1",
            params![id, now_str()],
        )?;
        tx.execute(
            "INSERT INTO vfolder_shares(vfolder_id, user_id, permission, created_at)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(vfolder_id, user_id) DO UPDATE SET permission = excluded.permission",
            params![vfolder_id, invitee_id, permission, now_str()],
        )?;
        tx.commit()?;
        Ok(Ok(()))
    }
}

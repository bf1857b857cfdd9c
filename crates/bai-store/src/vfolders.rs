//! Data folders (vfolders): names, owners, permissions. Their files live on a storage host.

use crate::db::{OptionalExtension, params};
use crate::{Result, Store, now_str};
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VFolderRow {
    pub id: Uuid,
    pub name: String,
    /// Storage host, e.g. `local:volume1`.
    pub host: String,
    /// The owning user; for a project folder, the user who created it.
    pub user_id: String,
    /// The owning project, for a project folder; None for a user folder.
    pub project: Option<String>,
    pub permission: bai_core::FolderPermission,
    pub usage_mode: String,
    pub status: String,
    /// Size limit in bytes (a filesystem of its own), or none.
    pub quota_bytes: Option<u64>,
    pub created_at: String,
}

/// The status of a folder in its owner's trash.
pub use bai_core::permission::FOLDER_TRASHED as TRASHED;

/// The status of a folder a clone is filling.
pub const CLONING: &str = "cloning";

impl VFolderRow {
    pub fn is_trashed(&self) -> bool {
        self.status == TRASHED
    }
}

const COLS: &str =
    "id, name, host, user_id, permission, usage_mode, status, created_at, quota_bytes, project";

/// Folders `?1` (a user id) may see: their own user folders, user folders shared with them
/// (accepted invitations), their projects' folders, and every project folder when `?2` (an
/// administrator) is true.
const VISIBLE: &str = "(project IS NULL AND user_id = ?1)
    OR (project IS NULL AND id IN (SELECT vfolder_id FROM vfolder_shares WHERE user_id = ?1))
    OR (?2 = 1 AND project IS NOT NULL)
    OR project IN (SELECT project FROM project_members WHERE user_id = ?1)";

fn row(r: &crate::db::Row<'_>) -> crate::db::Result<(String, VFolderRow)> {
    let id: String = r.get(0)?;
    Ok((
        id,
        VFolderRow {
            id: Uuid::nil(),
            name: r.get(1)?,
            host: r.get(2)?,
            user_id: r.get(3)?,
            permission: {
                let p: String = r.get(4)?;
                bai_core::FolderPermission::parse(&p)
                    .unwrap_or(bai_core::FolderPermission::ReadOnly)
            },
            usage_mode: r.get(5)?,
            status: r.get(6)?,
            created_at: r.get(7)?,
            quota_bytes: r.get::<_, Option<i64>>(8)?.map(|q| q.max(0) as u64),
            project: r.get(9)?,
        },
    ))
}

fn with_id((id, mut v): (String, VFolderRow)) -> Result<VFolderRow> {
    v.id = Uuid::parse_str(&id).map_err(|e| crate::sessions::corrupt("vfolders.id", e))?;
    Ok(v)
}

impl Store {
    /// Creates a folder; false when its owner (user or project) already has one of that name.
    pub fn insert_vfolder(&self, v: &VFolderRow) -> Result<bool> {
        Ok(self.conn().execute(
            "INSERT INTO vfolders(id, name, host, user_id, permission, usage_mode, status,
                created_at, quota_bytes, project)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT DO NOTHING",
            params![
                v.id.to_string(),
                v.name,
                v.host,
                v.user_id,
                v.permission.as_str(),
                v.usage_mode,
                v.status,
                now_str(),
                v.quota_bytes.map(|q| q as i64),
                v.project
            ],
        )? == 1)
    }

    pub fn vfolder(&self, id: Uuid) -> Result<Option<VFolderRow>> {
        self.read()
            .query_row(
                &format!("SELECT {COLS} FROM vfolders WHERE id = ?1"),
                [id.to_string()],
                row,
            )
            .optional()?
            .map(with_id)
            .transpose()
    }

    /// The user's own (user) folder of this name.
    pub fn vfolder_by_name(&self, user_id: &str, name: &str) -> Result<Option<VFolderRow>> {
        self.read()
            .query_row(
                &format!(
                    "SELECT {COLS} FROM vfolders WHERE user_id = ?1 AND name = ?2 AND project IS NULL"
                ),
                [user_id, name],
                row,
            )
            .optional()?
            .map(with_id)
            .transpose()
    }

    /// The folder of this name the user may see (`all_projects`: every project's, for
    /// administrators): their own first, then projects' (by project name).
    pub fn visible_vfolder_by_name(
        &self,
        user_id: &str,
        name: &str,
        all_projects: bool,
    ) -> Result<Option<VFolderRow>> {
        self.read()
            .query_row(
                &format!(
                    "SELECT {COLS} FROM vfolders WHERE name = ?3 AND ({VISIBLE})
                     ORDER BY project IS NOT NULL, user_id != ?1, project LIMIT 1"
                ),
                params![user_id, all_projects, name],
                row,
            )
            .optional()?
            .map(with_id)
            .transpose()
    }

    /// Whether the user may see the folder: it is theirs, shared with them, or their
    /// project's.
    pub fn can_see_vfolder(&self, user_id: &str, v: &VFolderRow) -> Result<bool> {
        Ok(self.folder_access(user_id, v)?.is_some())
    }

    /// The folders a user may see (own, then projects'), by name; `all_projects` as above.
    pub fn visible_vfolders(&self, user_id: &str, all_projects: bool) -> Result<Vec<VFolderRow>> {
        let conn = self.read();
        let mut st = conn.prepare(&format!(
            "SELECT {COLS} FROM vfolders WHERE {VISIBLE} ORDER BY project IS NOT NULL, name"
        ))?;
        let rows = st.query_map(params![user_id, all_projects], row)?;
        rows.map(|r| with_id(r?)).collect()
    }

    /// Folders owned by a project.
    pub fn project_vfolder_count(&self, project: &str) -> Result<i64> {
        Ok(self.read().query_row(
            "SELECT COUNT(*) FROM vfolders WHERE project = ?1",
            [project],
            |r| r.get(0),
        )?)
    }

    /// A user's folders (None: everyone's), by name.
    pub fn vfolders(&self, user_id: Option<&str>) -> Result<Vec<VFolderRow>> {
        let conn = self.read();
        let mut st = conn.prepare(&format!(
            "SELECT {COLS} FROM vfolders WHERE ?1 IS NULL OR user_id = ?1 ORDER BY name"
        ))?;
        let rows = st.query_map([user_id], row)?;
        rows.map(|r| with_id(r?)).collect()
    }

    /// Renames; false when the owner already has a folder with the new name.
    pub fn rename_vfolder(&self, id: Uuid, new_name: &str) -> Result<bool> {
        let conn = self.conn();
        Ok(conn.execute(
            // A name another folder of the same owner (user or project) holds is refused
            // (the unique indexes), as a no-op: nothing is renamed.
            "UPDATE vfolders SET name = ?2 WHERE id = ?1 AND NOT EXISTS (
                SELECT 1 FROM vfolders o, vfolders me WHERE me.id = ?1 AND o.name = ?2
                  AND o.id != me.id
                  AND ((me.project IS NULL AND o.project IS NULL AND o.user_id = me.user_id)
                    OR (me.project IS NOT NULL AND o.project = me.project)))",
            params![id.to_string(), new_name],
        )? == 1)
    }

    /// Moves a folder to the trash (`delete-pending`) or back (`ready`); false when it is not
    /// in the other state.
    pub fn set_vfolder_trashed(&self, id: Uuid, trashed: bool) -> Result<bool> {
        let (to, from) = if trashed {
            (TRASHED, "ready")
        } else {
            ("ready", TRASHED)
        };
        Ok(self.conn().execute(
            "UPDATE vfolders SET status = ?2 WHERE id = ?1 AND status = ?3",
            params![id.to_string(), to, from],
        )? == 1)
    }

    /// Deletes a folder with its shares and invitations.
    pub fn delete_vfolder(&self, id: Uuid) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let id = id.to_string();
        tx.execute("DELETE FROM vfolder_shares WHERE vfolder_id = ?1", [&id])?;
        tx.execute(
            "DELETE FROM vfolder_invitations WHERE vfolder_id = ?1",
            [&id],
        )?;
        let n = tx.execute("DELETE FROM vfolders WHERE id = ?1", [&id])?;
        tx.commit()?;
        Ok(n == 1)
    }

    /// Moves a folder from one status to another; false when it is not in `from`.
    pub fn set_vfolder_status(&self, id: Uuid, from: &str, to: &str) -> Result<bool> {
        Ok(self.conn().execute(
            "UPDATE vfolders SET status = ?3 WHERE id = ?1 AND status = ?2",
            params![id.to_string(), from, to],
        )? == 1)
    }

    /// Live sessions that mount the folder.
    pub fn sessions_mounting(&self, id: Uuid) -> Result<i64> {
        Ok(self.read().query_row(
            &format!(
                "SELECT COUNT(*) FROM sessions WHERE status IN ({})
                    AND mounts LIKE '%' || ?1 || '%'",
                crate::projects::live_sql()
            ),
            [id.to_string()],
            |r| r.get(0),
        )?)
    }
}

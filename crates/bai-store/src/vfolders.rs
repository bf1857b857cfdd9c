//! Data folders (vfolders): names, owners, permissions. Their files live on a storage host.

use crate::{Result, Store, now_str};
use rusqlite::{OptionalExtension, params};
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VFolderRow {
    pub id: Uuid,
    pub name: String,
    /// Storage host, e.g. `local:volume1`.
    pub host: String,
    /// The owning user.
    pub user_id: String,
    /// `rw` or `ro`.
    pub permission: String,
    pub usage_mode: String,
    pub status: String,
    /// Size limit in bytes (a filesystem of its own), or none.
    pub quota_bytes: Option<u64>,
    pub created_at: String,
}

const COLS: &str =
    "id, name, host, user_id, permission, usage_mode, status, created_at, quota_bytes";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(String, VFolderRow)> {
    let id: String = r.get(0)?;
    Ok((
        id,
        VFolderRow {
            id: Uuid::nil(),
            name: r.get(1)?,
            host: r.get(2)?,
            user_id: r.get(3)?,
            permission: r.get(4)?,
            usage_mode: r.get(5)?,
            status: r.get(6)?,
            created_at: r.get(7)?,
            quota_bytes: r.get::<_, Option<i64>>(8)?.map(|q| q.max(0) as u64),
        },
    ))
}

fn with_id((id, mut v): (String, VFolderRow)) -> Result<VFolderRow> {
    v.id = Uuid::parse_str(&id).map_err(|e| crate::sessions::corrupt("vfolders.id", e))?;
    Ok(v)
}

impl Store {
    /// Creates a folder; false when the owner already has one with this name.
    pub fn insert_vfolder(&self, v: &VFolderRow) -> Result<bool> {
        Ok(self.conn().execute(
            "INSERT OR IGNORE INTO vfolders(id, name, host, user_id, permission, usage_mode, status,
                created_at, quota_bytes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                v.id.to_string(),
                v.name,
                v.host,
                v.user_id,
                v.permission,
                v.usage_mode,
                v.status,
                now_str(),
                v.quota_bytes.map(|q| q as i64)
            ],
        )? == 1)
    }

    pub fn vfolder(&self, id: Uuid) -> Result<Option<VFolderRow>> {
        self.conn()
            .query_row(
                &format!("SELECT {COLS} FROM vfolders WHERE id = ?1"),
                [id.to_string()],
                row,
            )
            .optional()?
            .map(with_id)
            .transpose()
    }

    pub fn vfolder_by_name(&self, user_id: &str, name: &str) -> Result<Option<VFolderRow>> {
        self.conn()
            .query_row(
                &format!("SELECT {COLS} FROM vfolders WHERE user_id = ?1 AND name = ?2"),
                [user_id, name],
                row,
            )
            .optional()?
            .map(with_id)
            .transpose()
    }

    /// A user's folders (None: everyone's), by name.
    pub fn vfolders(&self, user_id: Option<&str>) -> Result<Vec<VFolderRow>> {
        let conn = self.conn();
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
            "UPDATE OR IGNORE vfolders SET name = ?2 WHERE id = ?1",
            params![id.to_string(), new_name],
        )? == 1)
    }

    pub fn delete_vfolder(&self, id: Uuid) -> Result<bool> {
        Ok(self
            .conn()
            .execute("DELETE FROM vfolders WHERE id = ?1", [id.to_string()])?
            == 1)
    }

    /// Live sessions that mount the folder.
    pub fn sessions_mounting(&self, id: Uuid) -> Result<i64> {
        Ok(self.conn().query_row(
            "SELECT COUNT(*) FROM sessions WHERE status NOT IN ('TERMINATED', 'CANCELLED')
                AND mounts LIKE '%' || ?1 || '%'",
            [id.to_string()],
            |r| r.get(0),
        )?)
    }
}

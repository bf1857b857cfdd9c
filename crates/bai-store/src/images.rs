//! The image catalogue's own records: images users made from their sessions (owner, name, the
//! agent that holds them) and images an admin forgot (hidden from lists and launches until an
//! agent's image of that reference is committed again).

use crate::db::{OptionalExtension, params};
use crate::{Result, Store, now_str};
use uuid::Uuid;

/// An image made from a session (convert to image).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomizedImageRow {
    pub id: Uuid,
    /// The image's reference, `repository:tag`.
    pub reference: String,
    /// The name its owner gave it.
    pub name: String,
    pub owner_user_id: String,
    pub owner_email: String,
    /// The image the session was started from.
    pub base_image: String,
    /// The agent whose engine holds it.
    pub agent_id: String,
    pub size_bytes: u64,
    pub created_at: String,
}

const COLS: &str =
    "id, reference, name, owner_user_id, owner_email, base_image, agent_id, size_bytes, created_at";

fn row(r: &crate::db::Row<'_>) -> crate::db::Result<(String, CustomizedImageRow)> {
    Ok((
        r.get(0)?,
        CustomizedImageRow {
            id: Uuid::nil(),
            reference: r.get(1)?,
            name: r.get(2)?,
            owner_user_id: r.get(3)?,
            owner_email: r.get(4)?,
            base_image: r.get(5)?,
            agent_id: r.get(6)?,
            size_bytes: r.get::<_, i64>(7)?.max(0) as u64,
            created_at: r.get(8)?,
        },
    ))
}

fn with_id((id, mut row): (String, CustomizedImageRow)) -> Result<CustomizedImageRow> {
    row.id =
        Uuid::parse_str(&id).map_err(|e| crate::sessions::corrupt("customized_images.id", e))?;
    Ok(row)
}

impl Store {
    /// Records a customized image, replacing the record of the same reference.
    pub fn put_customized_image(&self, img: &CustomizedImageRow) -> Result<()> {
        let conn = self.conn();
        conn.execute(
            &format!(
                "INSERT INTO customized_images({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT(reference) DO UPDATE SET id = excluded.id, name = excluded.name,
                   owner_user_id = excluded.owner_user_id, owner_email = excluded.owner_email,
                   base_image = excluded.base_image, agent_id = excluded.agent_id,
                   size_bytes = excluded.size_bytes, created_at = excluded.created_at"
            ),
            params![
                img.id.to_string(),
                img.reference,
                img.name,
                img.owner_user_id,
                img.owner_email,
                img.base_image,
                img.agent_id,
                i64::try_from(img.size_bytes).unwrap_or(i64::MAX),
                if img.created_at.is_empty() {
                    now_str()
                } else {
                    img.created_at.clone()
                },
            ],
        )?;
        conn.execute(
            "DELETE FROM forgotten_images WHERE reference = ?1",
            [&img.reference],
        )?;
        Ok(())
    }

    /// Every customized image, oldest first.
    pub fn customized_images(&self) -> Result<Vec<CustomizedImageRow>> {
        let conn = self.read();
        let mut st = conn.prepare(&format!(
            "SELECT {COLS} FROM customized_images ORDER BY created_at, reference"
        ))?;
        let rows = st.query_map([], row)?;
        rows.collect::<crate::db::Result<Vec<_>>>()?
            .into_iter()
            .map(with_id)
            .collect()
    }

    pub fn customized_image(&self, id: Uuid) -> Result<Option<CustomizedImageRow>> {
        self.read()
            .query_row(
                &format!("SELECT {COLS} FROM customized_images WHERE id = ?1"),
                [id.to_string()],
                row,
            )
            .optional()?
            .map(with_id)
            .transpose()
    }

    /// A user's image of that name, if any (a second convert with the name replaces it).
    pub fn customized_image_named(
        &self,
        owner_user_id: &str,
        name: &str,
    ) -> Result<Option<CustomizedImageRow>> {
        self.read()
            .query_row(
                &format!(
                    "SELECT {COLS} FROM customized_images WHERE owner_user_id = ?1 AND name = ?2"
                ),
                [owner_user_id, name],
                row,
            )
            .optional()?
            .map(with_id)
            .transpose()
    }

    pub fn count_customized_images(&self, owner_user_id: &str) -> Result<u64> {
        let n: i64 = self.read().query_row(
            "SELECT COUNT(*) FROM customized_images WHERE owner_user_id = ?1",
            [owner_user_id],
            |r| r.get(0),
        )?;
        Ok(n.max(0) as u64)
    }

    pub fn delete_customized_image(&self, id: Uuid) -> Result<bool> {
        Ok(self.conn().execute(
            "DELETE FROM customized_images WHERE id = ?1",
            [id.to_string()],
        )? > 0)
    }

    /// Hides an image reference from the catalogue and from launches.
    pub fn forget_image(&self, reference: &str) -> Result<()> {
        self.conn().execute(
            "INSERT INTO forgotten_images(reference, forgotten_at) VALUES (?1, ?2)
             ON CONFLICT(reference) DO NOTHING",
            params![reference, now_str()],
        )?;
        Ok(())
    }

    pub fn forgotten_images(&self) -> Result<Vec<String>> {
        let conn = self.read();
        let mut st = conn.prepare("SELECT reference FROM forgotten_images ORDER BY reference")?;
        let rows = st.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }
}

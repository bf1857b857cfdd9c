//! Session templates: a stored session request (Backend.AI's task template, kept as its JSON
//! text) owned by a user, that sessions are created from.

use crate::db::{OptionalExtension, params};
use crate::{Result, Store, now_str};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateRow {
    /// A UUID in simple (hex) form, as Backend.AI shows template ids.
    pub id: String,
    pub name: String,
    /// The owning user.
    pub user_id: String,
    /// The keypair it was created for (sessions made from it by its owner run under it).
    pub access_key: String,
    /// The project it was created in, if any.
    pub project: Option<String>,
    pub domain_name: String,
    /// The template itself, as JSON text.
    pub template: String,
    pub created_at: String,
}

const COLUMNS: &str = "id, name, user_id, access_key, project, domain_name, template, created_at";

fn template_row(r: &crate::db::Row<'_>) -> crate::db::Result<TemplateRow> {
    Ok(TemplateRow {
        id: r.get(0)?,
        name: r.get(1)?,
        user_id: r.get(2)?,
        access_key: r.get(3)?,
        project: r.get(4)?,
        domain_name: r.get(5)?,
        template: r.get(6)?,
        created_at: r.get(7)?,
    })
}

impl Store {
    /// Stores a new template; `created_at` is set here.
    pub fn insert_template(&self, t: &TemplateRow) -> Result<()> {
        self.conn().execute(
            &format!("INSERT INTO session_templates({COLUMNS}) VALUES (?1,?2,?3,?4,?5,?6,?7,?8)"),
            params![
                t.id,
                t.name,
                t.user_id,
                t.access_key,
                t.project,
                t.domain_name,
                t.template,
                now_str()
            ],
        )?;
        Ok(())
    }

    pub fn template(&self, id: &str) -> Result<Option<TemplateRow>> {
        Ok(self
            .read()
            .query_row(
                &format!("SELECT {COLUMNS} FROM session_templates WHERE id = ?1"),
                [id],
                template_row,
            )
            .optional()?)
    }

    /// The templates of one user (`Some`), or everyone's (`None`), oldest first.
    pub fn templates(&self, user_id: Option<&str>) -> Result<Vec<TemplateRow>> {
        let conn = self.read();
        let mut st = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM session_templates WHERE ?1 IS NULL OR user_id = ?1
             ORDER BY created_at, id"
        ))?;
        let rows = st.query_map([user_id], template_row)?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }

    /// Replaces a template's name and body; false when there is no such template.
    pub fn update_template(&self, id: &str, name: &str, template: &str) -> Result<bool> {
        Ok(self.conn().execute(
            "UPDATE session_templates SET name = ?2, template = ?3 WHERE id = ?1",
            params![id, name, template],
        )? == 1)
    }

    /// Deletes a template; false when there is no such template.
    pub fn delete_template(&self, id: &str) -> Result<bool> {
        Ok(self
            .conn()
            .execute("DELETE FROM session_templates WHERE id = ?1", [id])?
            == 1)
    }
}

//! Projects (Backend.AI's groups): their members, and the fields Backend.AI's admin GraphQL
//! shows (id, domain, activity, resource slots, folder hosts).

use crate::db::{OptionalExtension, params};
use crate::{Result, Store, now_str};

/// A project as Backend.AI's `Group` type shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRow {
    pub id: String,
    pub name: String,
    pub description: String,
    pub is_active: bool,
    pub domain_name: String,
    /// JSON text of the project's resource slots (`{}`: no limit).
    pub total_resource_slots: String,
    /// JSON text: host → permissions.
    pub allowed_vfolder_hosts: String,
    pub integration_id: Option<String>,
    pub created_at: String,
}

impl ProjectRow {
    pub fn new(name: &str) -> ProjectRow {
        ProjectRow {
            id: uuid::Uuid::new_v4().to_string(),
            name: name.to_string(),
            description: String::new(),
            is_active: true,
            domain_name: "default".into(),
            total_resource_slots: "{}".into(),
            allowed_vfolder_hosts: "{}".into(),
            integration_id: None,
            created_at: String::new(),
        }
    }
}

const COLUMNS: &str = "id, name, description, is_active, domain_name, total_resource_slots, \
    allowed_vfolder_hosts, integration_id, created_at";

fn project_row(r: &crate::db::Row<'_>) -> crate::db::Result<ProjectRow> {
    Ok(ProjectRow {
        id: r.get(0)?,
        name: r.get(1)?,
        description: r.get(2)?,
        is_active: r.get(3)?,
        domain_name: r.get(4)?,
        total_resource_slots: r.get(5)?,
        allowed_vfolder_hosts: r.get(6)?,
        integration_id: r.get(7)?,
        created_at: r.get(8)?,
    })
}

/// Every status but the ended ones, for SQL: `status IN (live)` is read through the index by
/// status, where `NOT IN (ended)` would read every session ever run.
pub(crate) fn live_sql() -> String {
    use bai_core::status::SessionStatus;
    let live: Vec<SessionStatus> = SessionStatus::ALL
        .into_iter()
        .filter(|s| !SessionStatus::LIST_DEAD.contains(s))
        .collect();
    crate::sessions::status_list(&live)
}

/// Why [`Store::purge_project`] refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PurgeRefusal {
    /// Sessions that have not ended remain.
    Sessions(i64),
    /// Services (model endpoints) remain.
    Services(i64),
    /// Project folders remain.
    Folders(i64),
}

impl Store {
    /// Every project with its members' emails.
    pub fn projects(&self) -> Result<Vec<(String, String, Vec<String>)>> {
        let conn = self.read();
        let mut st = conn.prepare("SELECT name, description FROM projects ORDER BY name")?;
        let names: Vec<(String, String)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<crate::db::Result<_>>()?;
        let mut m = conn.prepare(
            "SELECT u.email FROM project_members pm JOIN users u ON u.id = pm.user_id
             WHERE pm.project = ?1 ORDER BY u.email",
        )?;
        let mut out = Vec::new();
        for (name, desc) in names {
            let members: Vec<String> = m
                .query_map([&name], |r| r.get(0))?
                .collect::<crate::db::Result<_>>()?;
            out.push((name, desc, members));
        }
        Ok(out)
    }

    /// Creates a project; false when it exists.
    pub fn create_project(&self, name: &str, description: &str) -> Result<bool> {
        let mut p = ProjectRow::new(name);
        p.description = description.to_string();
        self.insert_project(&p)
    }

    pub fn delete_project(&self, name: &str) -> Result<bool> {
        Ok(self
            .conn()
            .execute("DELETE FROM projects WHERE name = ?1", [name])?
            == 1)
    }

    pub fn set_project_member(&self, project: &str, user_id: &str, member: bool) -> Result<()> {
        let conn = self.conn();
        if member {
            conn.execute(
                "INSERT INTO project_members(project, user_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                [project, user_id],
            )?;
        } else {
            conn.execute(
                "DELETE FROM project_members WHERE project = ?1 AND user_id = ?2",
                [project, user_id],
            )?;
        }
        Ok(())
    }

    /// Whether the keypair's user is a member of `project`.
    pub fn is_member(&self, access_key: &str, project: &str) -> Result<bool> {
        Ok(self
            .read()
            .query_row(
                "SELECT 1 FROM project_members pm JOIN keypairs k ON k.user_id = pm.user_id
                 WHERE k.access_key = ?1 AND pm.project = ?2",
                [access_key, project],
                |_| Ok(true),
            )
            .optional()?
            .unwrap_or(false))
    }

    pub fn project_exists(&self, name: &str) -> Result<bool> {
        Ok(self
            .read()
            .query_row("SELECT 1 FROM projects WHERE name = ?1", [name], |_| {
                Ok(true)
            })
            .optional()?
            .unwrap_or(false))
    }

    /// Every project (optionally of one domain), by name.
    pub fn project_rows(&self, domain: Option<&str>) -> Result<Vec<ProjectRow>> {
        let conn = self.read();
        let mut st = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM projects WHERE (?1 IS NULL OR domain_name = ?1) ORDER BY name"
        ))?;
        let rows = st.query_map([domain], project_row)?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }

    /// A project by its id.
    pub fn project_by_id(&self, id: &str) -> Result<Option<ProjectRow>> {
        Ok(self
            .read()
            .query_row(
                &format!("SELECT {COLUMNS} FROM projects WHERE id = ?1"),
                [id],
                project_row,
            )
            .optional()?)
    }

    /// Creates a project with every field; false when the name is taken.
    pub fn insert_project(&self, p: &ProjectRow) -> Result<bool> {
        Ok(self.conn().execute(
            "INSERT INTO projects(id, name, description, is_active, domain_name,
                total_resource_slots, allowed_vfolder_hosts, integration_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT DO NOTHING",
            params![
                p.id,
                p.name,
                p.description,
                p.is_active,
                p.domain_name,
                p.total_resource_slots,
                p.allowed_vfolder_hosts,
                p.integration_id,
                now_str()
            ],
        )? == 1)
    }

    /// Writes a project's fields back by id (a rename carries its members, resource-group
    /// openings and folders with it). False when there is no such project.
    pub fn update_project(&self, p: &ProjectRow) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let Some(old) = tx
            .query_row("SELECT name FROM projects WHERE id = ?1", [&p.id], |r| {
                r.get::<_, String>(0)
            })
            .optional()?
        else {
            return Ok(false);
        };
        if old != p.name {
            tx.execute(
                "INSERT INTO projects(name, created_at) VALUES (?1, ?2)",
                params![p.name, now_str()],
            )?;
            for sql in [
                "UPDATE project_members SET project = ?2 WHERE project = ?1",
                "UPDATE resource_group_projects SET project = ?2 WHERE project = ?1",
                "UPDATE vfolders SET project = ?2 WHERE project = ?1",
            ] {
                tx.execute(sql, [&old, &p.name])?;
            }
            tx.execute("DELETE FROM projects WHERE name = ?1", [&old])?;
        }
        tx.execute(
            "UPDATE projects SET id = ?1, description = ?3, is_active = ?4, domain_name = ?5,
                total_resource_slots = ?6, allowed_vfolder_hosts = ?7, integration_id = ?8
             WHERE name = ?2",
            params![
                p.id,
                p.name,
                p.description,
                p.is_active,
                p.domain_name,
                p.total_resource_slots,
                p.allowed_vfolder_hosts,
                p.integration_id
            ],
        )?;
        tx.commit()?;
        Ok(true)
    }

    /// Deletes a project with nothing left in it: no session that has not ended, no service,
    /// no project folder. Its memberships and resource-group openings go with it.
    pub fn purge_project(&self, id: &str) -> Result<std::result::Result<bool, PurgeRefusal>> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let Some(name) = tx
            .query_row("SELECT name FROM projects WHERE id = ?1", [id], |r| {
                r.get::<_, String>(0)
            })
            .optional()?
        else {
            return Ok(Ok(false));
        };
        let count =
            |sql: &str| -> crate::db::Result<i64> { tx.query_row(sql, [&name], |r| r.get(0)) };
        let sessions = count(&format!(
            "SELECT COUNT(*) FROM sessions WHERE group_name = ?1 AND status IN ({})",
            live_sql()
        ))?;
        if sessions > 0 {
            return Ok(Err(PurgeRefusal::Sessions(sessions)));
        }
        let services = count(
            "SELECT COUNT(*) FROM endpoints WHERE project = ?1 AND lifecycle != 'destroyed'",
        )?;
        if services > 0 {
            return Ok(Err(PurgeRefusal::Services(services)));
        }
        let folders = count("SELECT COUNT(*) FROM vfolders WHERE project = ?1")?;
        if folders > 0 {
            return Ok(Err(PurgeRefusal::Folders(folders)));
        }
        tx.execute("DELETE FROM projects WHERE name = ?1", [&name])?;
        tx.commit()?;
        Ok(Ok(true))
    }

    /// The ids of a project's members.
    pub fn project_member_ids(&self, project: &str) -> Result<Vec<String>> {
        let conn = self.read();
        let mut st = conn.prepare("SELECT user_id FROM project_members WHERE project = ?1")?;
        let rows = st.query_map([project], |r| r.get(0))?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }

    /// The (id, name) of every project a user is a member of.
    pub fn projects_of_user(&self, user_id: &str) -> Result<Vec<(String, String)>> {
        let conn = self.read();
        let mut st = conn.prepare(
            "SELECT p.id, p.name FROM project_members pm JOIN projects p ON p.name = pm.project
             WHERE pm.user_id = ?1 ORDER BY p.name",
        )?;
        let rows = st.query_map([user_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }
}

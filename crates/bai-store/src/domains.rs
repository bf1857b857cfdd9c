//! Domains: the top of Backend.AI's domain → project → user tree. bai keeps them as
//! Backend.AI's admin GraphQL shows them; `default` holds every user and project unless an
//! administrator says otherwise.

use crate::db::{OptionalExtension, params};
use crate::{Result, Store, now_str};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainRow {
    pub name: String,
    pub description: String,
    pub is_active: bool,
    /// JSON text of the domain's resource slots (`{}`: no limit).
    pub total_resource_slots: String,
    /// JSON text: host → permissions.
    pub allowed_vfolder_hosts: String,
    /// JSON text: a list of registry names.
    pub allowed_docker_registries: String,
    pub integration_id: Option<String>,
    pub created_at: String,
}

impl DomainRow {
    pub fn new(name: &str) -> DomainRow {
        DomainRow {
            name: name.to_string(),
            description: String::new(),
            is_active: true,
            total_resource_slots: "{}".into(),
            allowed_vfolder_hosts: "{}".into(),
            allowed_docker_registries: "[]".into(),
            integration_id: None,
            created_at: String::new(),
        }
    }
}

const COLUMNS: &str = "name, description, is_active, total_resource_slots, \
    allowed_vfolder_hosts, allowed_docker_registries, integration_id, created_at";

fn domain_row(r: &crate::db::Row<'_>) -> crate::db::Result<DomainRow> {
    Ok(DomainRow {
        name: r.get(0)?,
        description: r.get(1)?,
        is_active: r.get(2)?,
        total_resource_slots: r.get(3)?,
        allowed_vfolder_hosts: r.get(4)?,
        allowed_docker_registries: r.get(5)?,
        integration_id: r.get(6)?,
        created_at: r.get(7)?,
    })
}

/// What still lives in a domain that [`Store::purge_domain`] will not delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainInUse {
    Users(i64),
    Projects(i64),
    Sessions(i64),
}

impl Store {
    pub fn domains(&self) -> Result<Vec<DomainRow>> {
        let conn = self.read();
        let mut st = conn.prepare(&format!("SELECT {COLUMNS} FROM domains ORDER BY name"))?;
        let rows = st.query_map([], domain_row)?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }

    pub fn domain(&self, name: &str) -> Result<Option<DomainRow>> {
        Ok(self
            .read()
            .query_row(
                &format!("SELECT {COLUMNS} FROM domains WHERE name = ?1"),
                [name],
                domain_row,
            )
            .optional()?)
    }

    /// Creates a domain; false when the name is taken.
    pub fn insert_domain(&self, d: &DomainRow) -> Result<bool> {
        Ok(self.conn().execute(
            "INSERT INTO domains(name, description, is_active, total_resource_slots,
                allowed_vfolder_hosts, allowed_docker_registries, integration_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT DO NOTHING",
            params![
                d.name,
                d.description,
                d.is_active,
                d.total_resource_slots,
                d.allowed_vfolder_hosts,
                d.allowed_docker_registries,
                d.integration_id,
                now_str()
            ],
        )? == 1)
    }

    /// Writes a domain back under `old` (a rename moves its users and projects along).
    /// False when `old` does not exist.
    pub fn update_domain(&self, old: &str, d: &DomainRow) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let n = tx.execute(
            "UPDATE domains SET name = ?2, description = ?3, is_active = ?4,
                total_resource_slots = ?5, allowed_vfolder_hosts = ?6,
                allowed_docker_registries = ?7, integration_id = ?8
             WHERE name = ?1",
            params![
                old,
                d.name,
                d.description,
                d.is_active,
                d.total_resource_slots,
                d.allowed_vfolder_hosts,
                d.allowed_docker_registries,
                d.integration_id
            ],
        )?;
        if n == 0 {
            return Ok(false);
        }
        if old != d.name {
            for sql in [
                "UPDATE users SET domain_name = ?2 WHERE domain_name = ?1",
                "UPDATE projects SET domain_name = ?2 WHERE domain_name = ?1",
            ] {
                tx.execute(sql, [old, &d.name])?;
            }
        }
        tx.commit()?;
        Ok(true)
    }

    /// Deletes a domain with no users, projects or live sessions in it.
    pub fn purge_domain(&self, name: &str) -> Result<std::result::Result<bool, DomainInUse>> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let count =
            |sql: &str| -> crate::db::Result<i64> { tx.query_row(sql, [name], |r| r.get(0)) };
        let users = count("SELECT COUNT(*) FROM users WHERE domain_name = ?1")?;
        if users > 0 {
            return Ok(Err(DomainInUse::Users(users)));
        }
        let projects = count("SELECT COUNT(*) FROM projects WHERE domain_name = ?1")?;
        if projects > 0 {
            return Ok(Err(DomainInUse::Projects(projects)));
        }
        let sessions = count(&format!(
            "SELECT COUNT(*) FROM sessions WHERE domain_name = ?1 AND status IN ({})",
            crate::projects::live_sql()
        ))?;
        if sessions > 0 {
            return Ok(Err(DomainInUse::Sessions(sessions)));
        }
        let n = tx.execute("DELETE FROM domains WHERE name = ?1", [name])?;
        tx.commit()?;
        Ok(Ok(n == 1))
    }
}

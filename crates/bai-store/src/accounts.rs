//! Users and keypairs as administrators manage them (Backend.AI's `admin user` and
//! `admin keypair`): profiles, roles and status, more keypairs per user, and deletion that
//! refuses while something of theirs is still running.

use crate::db::{OptionalExtension, params};
use crate::{Result, Store, now_str};

/// A user as Backend.AI's `User` type shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    pub id: String,
    pub email: String,
    pub username: String,
    pub full_name: String,
    pub description: String,
    /// `superadmin`, `admin`, `user` or `monitor`.
    pub role: String,
    /// `active`, `inactive`, `deleted` or `before-verification`.
    pub status: String,
    pub need_password_change: bool,
    pub domain_name: String,
    pub resource_policy: String,
    pub created_at: String,
    /// The user's first keypair.
    pub main_access_key: Option<String>,
}

/// A new user: the profile, the password hash, the first keypair.
#[derive(Debug, Clone)]
pub struct NewUser {
    pub info: UserInfo,
    pub password_hash: Option<String>,
    pub access_key: String,
    pub secret_key: String,
    /// Projects (by id) the user joins besides `default`.
    pub project_ids: Vec<String>,
}

/// A field a user list may be filtered on (`field == "value"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserField {
    Username,
    Email,
    FullName,
    Role,
    Status,
    DomainName,
}

impl UserField {
    pub fn parse(s: &str) -> Option<UserField> {
        Some(match s {
            "username" => UserField::Username,
            "email" => UserField::Email,
            "full_name" => UserField::FullName,
            "role" => UserField::Role,
            "status" => UserField::Status,
            "domain_name" => UserField::DomainName,
            _ => return None,
        })
    }

    fn column(self) -> &'static str {
        match self {
            UserField::Username => "u.username",
            UserField::Email => "u.email",
            UserField::FullName => "u.full_name",
            UserField::Role => "u.role",
            UserField::Status => "u.status",
            UserField::DomainName => "u.domain_name",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct UserFilter {
    pub status: Option<String>,
    /// Only members of this project (by id).
    pub project_id: Option<String>,
    pub field: Option<(UserField, String)>,
    pub limit: i64,
    pub offset: i64,
}

/// A keypair as Backend.AI's `KeyPair` type shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeypairInfo {
    pub access_key: String,
    pub secret_key: String,
    pub user_id: String,
    pub email: String,
    pub full_name: String,
    pub is_active: bool,
    pub is_admin: bool,
    pub resource_policy: String,
    pub rate_limit: i64,
    pub created_at: String,
    /// Sessions of this keypair that hold resources now.
    pub concurrency_used: i64,
}

/// What a purge or a keypair deletion would leave behind, so it is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StillOwned {
    Sessions(i64),
    Services(i64),
    Folders(i64),
}

const USER_COLUMNS: &str = "u.id, u.email, u.username, u.full_name, u.description, u.role, \
    u.status, u.need_password_change, u.domain_name, u.resource_policy, u.created_at, \
    (SELECT k.access_key FROM keypairs k WHERE k.user_id = u.id \
     ORDER BY k.created_at, k.access_key LIMIT 1)";

fn user_info(r: &crate::db::Row<'_>) -> crate::db::Result<UserInfo> {
    Ok(UserInfo {
        id: r.get(0)?,
        email: r.get(1)?,
        username: r.get(2)?,
        full_name: r.get(3)?,
        description: r.get(4)?,
        role: r.get(5)?,
        status: r.get(6)?,
        need_password_change: r.get(7)?,
        domain_name: r.get(8)?,
        resource_policy: r.get(9)?,
        created_at: r.get(10)?,
        main_access_key: r.get(11)?,
    })
}

fn holding_sql() -> String {
    crate::sessions::status_list(&bai_core::status::SessionStatus::HOLDS_RESOURCES)
}

impl Store {
    /// Users matching `f`, by email, and how many match in all.
    pub fn user_list(&self, f: &UserFilter) -> Result<(Vec<UserInfo>, i64)> {
        let (col, val) = match &f.field {
            Some((field, v)) => (field.column(), Some(v.as_str())),
            None => ("u.email", None),
        };
        let cond = format!(
            "(?1 IS NULL OR u.status = ?1)
             AND (?2 IS NULL OR u.id IN (SELECT pm.user_id FROM project_members pm
                  JOIN projects p ON p.name = pm.project WHERE p.id = ?2))
             AND (?3 IS NULL OR {col} = ?3)"
        );
        let conn = self.read();
        let total: i64 = conn.query_row(
            &format!("SELECT COUNT(*) FROM users u WHERE {cond}"),
            params![f.status, f.project_id, val],
            |r| r.get(0),
        )?;
        let mut st = conn.prepare(&format!(
            "SELECT {USER_COLUMNS} FROM users u WHERE {cond}
             ORDER BY u.created_at, u.email LIMIT ?4 OFFSET ?5"
        ))?;
        let rows = st.query_map(
            params![f.status, f.project_id, val, f.limit, f.offset],
            user_info,
        )?;
        Ok((rows.collect::<crate::db::Result<Vec<_>>>()?, total))
    }

    pub fn user_by_email(&self, email: &str) -> Result<Option<UserInfo>> {
        Ok(self
            .read()
            .query_row(
                &format!("SELECT {USER_COLUMNS} FROM users u WHERE u.email = ?1"),
                [email],
                user_info,
            )
            .optional()?)
    }

    pub fn user_by_id(&self, id: &str) -> Result<Option<UserInfo>> {
        Ok(self
            .read()
            .query_row(
                &format!("SELECT {USER_COLUMNS} FROM users u WHERE u.id = ?1"),
                [id],
                user_info,
            )
            .optional()?)
    }

    /// Creates a user with their first keypair (an administrator's when the role is one), in
    /// the default project and the given ones. False when the email is taken.
    pub fn create_user(&self, n: &NewUser) -> Result<bool> {
        let u = &n.info;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let now = now_str();
        let added = tx.execute(
            "INSERT INTO users(id, email, role, password_hash, created_at, username,
                full_name, description, status, need_password_change, domain_name,
                resource_policy)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
             ON CONFLICT DO NOTHING",
            params![
                u.id,
                u.email,
                u.role,
                n.password_hash,
                now,
                u.username,
                u.full_name,
                u.description,
                u.status,
                u.need_password_change,
                u.domain_name,
                u.resource_policy
            ],
        )?;
        if added == 0 {
            return Ok(false);
        }
        tx.execute(
            "INSERT INTO keypairs(access_key, secret_key, user_id, is_admin, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                n.access_key,
                n.secret_key,
                u.id,
                is_admin_role(&u.role),
                now
            ],
        )?;
        tx.execute(
            "INSERT INTO project_members(project, user_id)
             SELECT name, ?1 FROM projects WHERE name = 'default'
             ON CONFLICT DO NOTHING",
            [&u.id],
        )?;
        join_projects(&tx, &u.id, &n.project_ids)?;
        tx.commit()?;
        Ok(true)
    }

    /// Writes a user's profile back (by id). A role change makes their keypairs
    /// administrators' or not to match; `password_hash` replaces the password when given;
    /// `project_ids` replaces the memberships when given.
    pub fn update_user(
        &self,
        u: &UserInfo,
        password_hash: Option<&str>,
        project_ids: Option<&[String]>,
    ) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let old_role: Option<String> = tx
            .query_row("SELECT role FROM users WHERE id = ?1", [&u.id], |r| {
                r.get(0)
            })
            .optional()?;
        let Some(old_role) = old_role else {
            return Ok(false);
        };
        tx.execute(
            "UPDATE users SET email = ?2, username = ?3, full_name = ?4, description = ?5,
                role = ?6, status = ?7, need_password_change = ?8, domain_name = ?9,
                resource_policy = ?10, password_hash = COALESCE(?11, password_hash)
             WHERE id = ?1",
            params![
                u.id,
                u.email,
                u.username,
                u.full_name,
                u.description,
                u.role,
                u.status,
                u.need_password_change,
                u.domain_name,
                u.resource_policy,
                password_hash
            ],
        )?;
        if is_admin_role(&old_role) != is_admin_role(&u.role) {
            tx.execute(
                "UPDATE keypairs SET is_admin = ?2 WHERE user_id = ?1",
                params![u.id, is_admin_role(&u.role)],
            )?;
        }
        if let Some(ids) = project_ids {
            tx.execute("DELETE FROM project_members WHERE user_id = ?1", [&u.id])?;
            join_projects(&tx, &u.id, ids)?;
        }
        tx.commit()?;
        Ok(true)
    }

    /// Deletes a user with nothing left running and no folders of their own: their keypairs,
    /// memberships, settings, session templates, folder shares and invitations go with them.
    /// `Ok(Ok(false))`: no such user.
    pub fn purge_user(&self, email: &str) -> Result<std::result::Result<bool, StillOwned>> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let Some(id) = tx
            .query_row("SELECT id FROM users WHERE email = ?1", [email], |r| {
                r.get::<_, String>(0)
            })
            .optional()?
        else {
            return Ok(Ok(false));
        };
        let count =
            |sql: &str| -> crate::db::Result<i64> { tx.query_row(sql, [&id], |r| r.get(0)) };
        let sessions = count(&format!(
            "SELECT COUNT(*) FROM sessions WHERE user_id = ?1 AND status IN ({})",
            crate::projects::live_sql()
        ))?;
        if sessions > 0 {
            return Ok(Err(StillOwned::Sessions(sessions)));
        }
        let services = count(
            "SELECT COUNT(*) FROM endpoints WHERE user_id = ?1 AND lifecycle != 'destroyed'",
        )?;
        if services > 0 {
            return Ok(Err(StillOwned::Services(services)));
        }
        let folders =
            count("SELECT COUNT(*) FROM vfolders WHERE user_id = ?1 AND project IS NULL")?;
        if folders > 0 {
            return Ok(Err(StillOwned::Folders(folders)));
        }
        for sql in [
            "DELETE FROM resource_group_access WHERE access_key IN
                (SELECT access_key FROM keypairs WHERE user_id = ?1)",
            "DELETE FROM idempotency_keys WHERE access_key IN
                (SELECT access_key FROM keypairs WHERE user_id = ?1)",
            "DELETE FROM keypairs WHERE user_id = ?1",
            "DELETE FROM project_members WHERE user_id = ?1",
            "DELETE FROM user_settings WHERE user_id = ?1",
            "DELETE FROM session_templates WHERE user_id = ?1",
            "DELETE FROM vfolder_shares WHERE user_id = ?1",
            "DELETE FROM vfolder_invitations WHERE inviter_id = ?1 OR invitee_id = ?1",
            "DELETE FROM users WHERE id = ?1",
        ] {
            tx.execute(sql, [&id])?;
        }
        tx.commit()?;
        Ok(Ok(true))
    }

    /// Keypairs, newest first, optionally of one user (by email) or activity.
    pub fn keypair_list(
        &self,
        email: Option<&str>,
        is_active: Option<bool>,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<KeypairInfo>, i64)> {
        let cond = "(?1 IS NULL OR u.email = ?1) AND (?2 IS NULL OR k.is_active = ?2)";
        let conn = self.read();
        let total: i64 = conn.query_row(
            &format!(
                "SELECT COUNT(*) FROM keypairs k JOIN users u ON u.id = k.user_id WHERE {cond}"
            ),
            params![email, is_active],
            |r| r.get(0),
        )?;
        let mut st = conn.prepare(&format!(
            "SELECT k.access_key, k.secret_key, k.user_id, u.email, u.full_name, k.is_active,
                k.is_admin, k.resource_policy, k.rate_limit, k.created_at,
                (SELECT COUNT(*) FROM sessions s {}
                    WHERE s.access_key = k.access_key AND s.status IN ({}))
             FROM keypairs k JOIN users u ON u.id = k.user_id WHERE {cond}
             ORDER BY k.created_at DESC, k.access_key LIMIT ?3 OFFSET ?4",
            crate::sessions::by_status(conn.engine()),
            holding_sql()
        ))?;
        let rows = st.query_map(params![email, is_active, limit, offset], |r| {
            Ok(KeypairInfo {
                access_key: r.get(0)?,
                secret_key: r.get(1)?,
                user_id: r.get(2)?,
                email: r.get(3)?,
                full_name: r.get(4)?,
                is_active: r.get(5)?,
                is_admin: r.get(6)?,
                resource_policy: r.get(7)?,
                rate_limit: r.get(8)?,
                created_at: r.get(9)?,
                concurrency_used: r.get(10)?,
            })
        })?;
        Ok((rows.collect::<crate::db::Result<Vec<_>>>()?, total))
    }

    /// Adds a keypair to a user (by email); false when there is no such user.
    pub fn add_keypair(&self, email: &str, k: &KeypairInfo) -> Result<bool> {
        Ok(self.conn().execute(
            "INSERT INTO keypairs(access_key, secret_key, user_id, is_admin, is_active,
                resource_policy, rate_limit, created_at)
             SELECT ?2, ?3, id, ?4, ?5, ?6, ?7, ?8 FROM users WHERE email = ?1",
            params![
                email,
                k.access_key,
                k.secret_key,
                k.is_admin,
                k.is_active,
                k.resource_policy,
                k.rate_limit,
                now_str()
            ],
        )? == 1)
    }

    /// Deletes a keypair with no session that has not ended. `Ok(Ok(false))`: no such keypair.
    pub fn delete_keypair(
        &self,
        access_key: &str,
    ) -> Result<std::result::Result<bool, StillOwned>> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let sessions: i64 = tx.query_row(
            &format!(
                "SELECT COUNT(*) FROM sessions {} WHERE access_key = ?1 AND status IN ({})",
                crate::sessions::by_status(tx.engine()),
                crate::projects::live_sql()
            ),
            [access_key],
            |r| r.get(0),
        )?;
        if sessions > 0 {
            return Ok(Err(StillOwned::Sessions(sessions)));
        }
        let services: i64 = tx.query_row(
            "SELECT COUNT(*) FROM endpoints WHERE access_key = ?1 AND lifecycle != 'destroyed'",
            [access_key],
            |r| r.get(0),
        )?;
        if services > 0 {
            return Ok(Err(StillOwned::Services(services)));
        }
        tx.execute(
            "DELETE FROM resource_group_access WHERE access_key = ?1",
            [access_key],
        )?;
        tx.execute(
            "DELETE FROM idempotency_keys WHERE access_key = ?1",
            [access_key],
        )?;
        let n = tx.execute("DELETE FROM keypairs WHERE access_key = ?1", [access_key])?;
        tx.commit()?;
        Ok(Ok(n == 1))
    }
}

/// Makes the user a member of each project (by id) that exists.
fn join_projects(tx: &crate::db::Transaction<'_>, user_id: &str, ids: &[String]) -> Result<()> {
    for pid in ids {
        tx.execute(
            "INSERT INTO project_members(project, user_id)
             SELECT name, ?1 FROM projects WHERE id = ?2
             ON CONFLICT DO NOTHING",
            [user_id, pid],
        )?;
    }
    Ok(())
}

/// Roles whose keypairs are administrators'.
pub fn is_admin_role(role: &str) -> bool {
    matches!(role, "superadmin" | "admin")
}

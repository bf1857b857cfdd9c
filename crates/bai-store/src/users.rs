//! Users and their keypairs.

use crate::db::{OptionalExtension, params};
use crate::{Result, Store, now_str};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRow {
    pub id: String,
    pub email: String,
    pub role: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeypairRow {
    pub access_key: String,
    pub secret_key: String,
    pub user_id: String,
    pub email: String,
    pub is_admin: bool,
    pub is_active: bool,
    /// Requests this keypair may make in any 15 minutes (Backend.AI's `rate_limit`).
    pub rate_limit: i64,
    /// Whether the keypair's user is active and in an active domain (otherwise its requests
    /// are refused).
    pub user_active: bool,
}

/// What [`Store::modify_keypair`] changes (None: unchanged).
#[derive(Debug, Clone, Default)]
pub struct KeypairChange {
    pub is_active: Option<bool>,
    pub is_admin: Option<bool>,
    pub rate_limit: Option<i64>,
    pub resource_policy: Option<String>,
}

impl Store {
    /// Sets a user's web password (an argon2 PHC string); false when no such user.
    /// (`users.password_hash` holds argon2 PHC strings; NULL: API keypairs only.)
    pub fn set_password_hash(&self, email: &str, hash: &str) -> Result<bool> {
        Ok(self.conn().execute(
            "UPDATE users SET password_hash = ?2 WHERE email = ?1",
            params![email, hash],
        )? == 1)
    }

    /// For a web login: the user's password hash and their (first active) keypair.
    pub fn login_of(&self, email: &str) -> Result<Option<(String, KeypairRow)>> {
        let row: Option<(Option<String>, String)> = self
            .read()
            .query_row(
                "SELECT u.password_hash, k.access_key FROM users u
                 JOIN keypairs k ON k.user_id = u.id
                 WHERE u.email = ?1 AND k.is_active = 1 ORDER BY k.access_key LIMIT 1",
                [email],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((Some(hash), ak)) = row else {
            return Ok(None);
        };
        Ok(self.keypair(&ak)?.map(|kp| (hash, kp)))
    }

    pub fn create_user_with_keypair(
        &self,
        user: &UserRow,
        access_key: &str,
        secret_key: &str,
        is_admin: bool,
    ) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let now = now_str();
        tx.execute(
            "INSERT INTO users(id, email, role, created_at, username) VALUES (?1, ?2, ?3, ?4, ?5)",
            (
                &user.id,
                &user.email,
                &user.role,
                &now,
                user.email.split('@').next().unwrap_or(&user.email),
            ),
        )?;
        tx.execute(
            "INSERT INTO keypairs(access_key, secret_key, user_id, is_admin, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            (access_key, secret_key, &user.id, is_admin, &now),
        )?;
        // Every user starts in the default project.
        tx.execute(
            "INSERT INTO project_members(project, user_id)
             SELECT name, ?1 FROM projects WHERE name = 'default'
             ON CONFLICT DO NOTHING",
            [&user.id],
        )?;
        tx.commit()?;
        Ok(())
    }

    pub fn keypair(&self, access_key: &str) -> Result<Option<KeypairRow>> {
        Ok(self
            .read()
            .query_row(
                "SELECT k.access_key, k.secret_key, k.user_id, u.email, k.is_admin, k.is_active,
                        k.rate_limit, u.status = 'active' AND COALESCE(
                            (SELECT d.is_active FROM domains d WHERE d.name = u.domain_name), 0) = 1
                 FROM keypairs k JOIN users u ON u.id = k.user_id WHERE k.access_key = ?1",
                [access_key],
                |r| {
                    Ok(KeypairRow {
                        access_key: r.get(0)?,
                        secret_key: r.get(1)?,
                        user_id: r.get(2)?,
                        email: r.get(3)?,
                        is_admin: r.get(4)?,
                        is_active: r.get(5)?,
                        rate_limit: r.get(6)?,
                        user_active: r.get(7)?,
                    })
                },
            )
            .optional()?)
    }

    pub fn keypair_by_email(&self, email: &str) -> Result<Option<KeypairRow>> {
        let ak: Option<String> = self
            .read()
            .query_row(
                "SELECT k.access_key FROM keypairs k JOIN users u ON u.id = k.user_id
                 WHERE u.email = ?1 ORDER BY k.created_at LIMIT 1",
                [email],
                |r| r.get(0),
            )
            .optional()?;
        match ak {
            Some(ak) => self.keypair(&ak),
            None => Ok(None),
        }
    }

    /// Changes a keypair (activity, administrator, rate limit, policy); false when there is none.
    pub fn modify_keypair(&self, access_key: &str, change: &KeypairChange) -> Result<bool> {
        Ok(self.conn().execute(
            "UPDATE keypairs SET is_active = COALESCE(?2, is_active),
                                 rate_limit = COALESCE(?3, rate_limit),
                                 is_admin = COALESCE(?4, is_admin),
                                 resource_policy = COALESCE(?5, resource_policy)
             WHERE access_key = ?1",
            params![
                access_key,
                change.is_active,
                change.rate_limit,
                change.is_admin,
                change.resource_policy
            ],
        )? == 1)
    }

    /// Gives a keypair a new secret key (the old one stops working at once); false when
    /// there is no such keypair.
    pub fn set_secret_key(&self, access_key: &str, secret_key: &str) -> Result<bool> {
        Ok(self.conn().execute(
            "UPDATE keypairs SET secret_key = ?2 WHERE access_key = ?1",
            params![access_key, secret_key],
        )? == 1)
    }

    pub fn user_count(&self) -> Result<i64> {
        Ok(self
            .read()
            .query_row("SELECT COUNT(*) FROM users", [], |r| r.get(0))?)
    }

    /// Sets an alias (an admin's `alias`: replaces what it named, undoes a removal).
    pub fn set_image_alias(&self, alias: &str, image: &str) -> Result<()> {
        let conn = self.conn();
        conn.execute(
            "INSERT INTO image_aliases(alias, image) VALUES (?1, ?2)
             ON CONFLICT(alias) DO UPDATE SET image = excluded.image",
            [alias, image],
        )?;
        conn.execute(
            "DELETE FROM removed_image_aliases WHERE alias = ?1",
            [alias],
        )?;
        Ok(())
    }

    /// Adds an alias found on an agent unless it exists or an admin removed it.
    pub fn add_default_image_alias(&self, alias: &str, image: &str) -> Result<()> {
        self.conn().execute(
            "INSERT INTO image_aliases(alias, image)
             SELECT ?1, ?2 WHERE NOT EXISTS (SELECT 1 FROM removed_image_aliases WHERE alias = ?1)
             ON CONFLICT(alias) DO NOTHING",
            [alias, image],
        )?;
        Ok(())
    }

    /// Removes an alias for good; false when there was none.
    pub fn remove_image_alias(&self, alias: &str) -> Result<bool> {
        let conn = self.conn();
        let n = conn.execute("DELETE FROM image_aliases WHERE alias = ?1", [alias])?;
        if n > 0 {
            conn.execute(
                "INSERT INTO removed_image_aliases(alias) VALUES (?1) ON CONFLICT DO NOTHING",
                [alias],
            )?;
        }
        Ok(n > 0)
    }

    pub fn image_aliases(&self) -> Result<Vec<(String, String)>> {
        let conn = self.read();
        let mut st = conn.prepare("SELECT alias, image FROM image_aliases ORDER BY alias")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }
}

impl Store {
    /// A setting the web UI keeps for a user (JSON text), if set.
    pub fn user_setting(&self, user_id: &str, key: &str) -> Result<Option<String>> {
        Ok(self
            .read()
            .query_row(
                "SELECT value FROM user_settings WHERE user_id = ?1 AND key = ?2",
                params![user_id, key],
                |r| r.get(0),
            )
            .optional()?)
    }

    pub fn set_user_setting(&self, user_id: &str, key: &str, value: &str) -> Result<()> {
        self.conn().execute(
            "INSERT INTO user_settings(user_id, key, value, updated_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(user_id, key) DO UPDATE SET value = excluded.value,
                                                     updated_at = excluded.updated_at",
            params![user_id, key, value, now_str()],
        )?;
        Ok(())
    }
}

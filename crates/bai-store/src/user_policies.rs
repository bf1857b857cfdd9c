//! User resource policies: Backend.AI's per-user limits (how many images a user may make from
//! sessions, how many replicas one model service may run, how many folders a user may own and
//! how large a folder's quota may be). Every user has one, `default` unless an admin assigned
//! another; a policy a user holds cannot be deleted.

use crate::db::{OptionalExtension, params};
use crate::{Result, Store, now_str};

/// One user resource policy. `0` folders and `-1` bytes mean no limit, as in Backend.AI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserPolicyRow {
    pub name: String,
    pub max_vfolder_count: i64,
    pub max_quota_scope_size: i64,
    pub max_session_count_per_model_session: i64,
    pub max_customized_image_count: i64,
    pub created_at: String,
}

impl UserPolicyRow {
    /// A policy with Backend.AI's defaults (bai's 16 replicas per service).
    pub fn new(name: &str) -> UserPolicyRow {
        UserPolicyRow {
            name: name.to_string(),
            max_vfolder_count: 0,
            max_quota_scope_size: -1,
            max_session_count_per_model_session: 16,
            max_customized_image_count: 3,
            created_at: String::new(),
        }
    }
}

const COLS: &str = "name, max_vfolder_count, max_quota_scope_size, \
    max_session_count_per_model_session, max_customized_image_count, created_at";

fn row(r: &crate::db::Row<'_>) -> crate::db::Result<UserPolicyRow> {
    Ok(UserPolicyRow {
        name: r.get(0)?,
        max_vfolder_count: r.get(1)?,
        max_quota_scope_size: r.get(2)?,
        max_session_count_per_model_session: r.get(3)?,
        max_customized_image_count: r.get(4)?,
        created_at: r.get(5)?,
    })
}

impl Store {
    /// Every user resource policy, by name.
    pub fn user_policies(&self) -> Result<Vec<UserPolicyRow>> {
        let conn = self.read();
        let mut st = conn.prepare(&format!(
            "SELECT {COLS} FROM user_resource_policies ORDER BY name"
        ))?;
        let rows = st.query_map([], row)?.collect::<crate::db::Result<_>>()?;
        Ok(rows)
    }

    pub fn user_policy(&self, name: &str) -> Result<Option<UserPolicyRow>> {
        let conn = self.read();
        Ok(conn
            .query_row(
                &format!("SELECT {COLS} FROM user_resource_policies WHERE name = ?1"),
                params![name],
                row,
            )
            .optional()?)
    }

    /// The policy that applies to a user (`default` when the user's is missing).
    pub fn user_policy_of(&self, user_id: &str) -> Result<UserPolicyRow> {
        let found = self
            .read()
            .query_row(
                &format!(
                    "SELECT {COLS} FROM user_resource_policies
                     WHERE name = (SELECT resource_policy FROM users WHERE id = ?1)"
                ),
                params![user_id],
                row,
            )
            .optional()?;
        match found {
            Some(p) => Ok(p),
            None => Ok(self
                .user_policy("default")?
                .unwrap_or_else(|| UserPolicyRow::new("default"))),
        }
    }

    /// Creates a policy; false when one of that name exists.
    pub fn create_user_policy(&self, p: &UserPolicyRow) -> Result<bool> {
        let n = self.conn().execute(
            &format!(
                "INSERT INTO user_resource_policies({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(name) DO NOTHING"
            ),
            params![
                p.name,
                p.max_vfolder_count,
                p.max_quota_scope_size,
                p.max_session_count_per_model_session,
                p.max_customized_image_count,
                now_str()
            ],
        )?;
        Ok(n == 1)
    }

    /// Changes a policy's limits; false when there is none of that name.
    pub fn modify_user_policy(&self, p: &UserPolicyRow) -> Result<bool> {
        let n = self.conn().execute(
            "UPDATE user_resource_policies SET max_vfolder_count = ?2, max_quota_scope_size = ?3,
             max_session_count_per_model_session = ?4, max_customized_image_count = ?5
             WHERE name = ?1",
            params![
                p.name,
                p.max_vfolder_count,
                p.max_quota_scope_size,
                p.max_session_count_per_model_session,
                p.max_customized_image_count
            ],
        )?;
        Ok(n == 1)
    }

    /// How many users hold the policy.
    pub fn users_with_policy(&self, name: &str) -> Result<i64> {
        Ok(self.read().query_row(
            "SELECT COUNT(*) FROM users WHERE resource_policy = ?1",
            params![name],
            |r| r.get(0),
        )?)
    }

    /// Deletes a policy no user holds; false when there is none of that name.
    pub fn delete_user_policy(&self, name: &str) -> Result<bool> {
        Ok(self.conn().execute(
            "DELETE FROM user_resource_policies WHERE name = ?1
             AND NOT EXISTS (SELECT 1 FROM users WHERE resource_policy = ?1)",
            params![name],
        )? == 1)
    }

    /// Gives a user (by email) a policy; false when no such user.
    pub fn set_user_policy(&self, email: &str, policy: &str) -> Result<bool> {
        Ok(self.conn().execute(
            "UPDATE users SET resource_policy = ?2 WHERE email = ?1",
            params![email, policy],
        )? == 1)
    }
}

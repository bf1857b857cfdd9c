//! Join tokens and the agents the manager knows. Secrets are never stored, only their
//! SHA-256 (the caller hashes them).

use crate::db::{OptionalExtension, params};
use crate::{Result, Store, now_str};

/// A join token (its secret is shown once, when it is made).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentTokenRow {
    pub id: String,
    pub secret_hash: String,
    /// The resource group the agents it admits join.
    pub scaling_group: String,
    pub created_by: String,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

/// An agent the manager has seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRow {
    pub id: String,
    /// The token that admitted it (none for an agent inside the manager's process).
    pub token_id: Option<String>,
    pub credential_hash: Option<String>,
    pub scaling_group: String,
    /// Where it last connected from (shown, never trusted).
    pub address: String,
    /// Its last `AgentInfo`, JSON.
    pub info: Option<String>,
    pub drained: bool,
    pub first_seen: String,
    pub last_seen: String,
}

const TOKEN_COLUMNS: &str = "id, secret_hash, scaling_group, created_by, created_at, revoked_at";
const AGENT_COLUMNS: &str = "id, token_id, credential_hash, scaling_group, address, info, \
    drained, first_seen, last_seen";

fn token_row(r: &crate::db::Row<'_>) -> crate::db::Result<AgentTokenRow> {
    Ok(AgentTokenRow {
        id: r.get(0)?,
        secret_hash: r.get(1)?,
        scaling_group: r.get(2)?,
        created_by: r.get(3)?,
        created_at: r.get(4)?,
        revoked_at: r.get(5)?,
    })
}

fn agent_row(r: &crate::db::Row<'_>) -> crate::db::Result<AgentRow> {
    Ok(AgentRow {
        id: r.get(0)?,
        token_id: r.get(1)?,
        credential_hash: r.get(2)?,
        scaling_group: r.get(3)?,
        address: r.get(4)?,
        info: r.get(5)?,
        drained: r.get(6)?,
        first_seen: r.get(7)?,
        last_seen: r.get(8)?,
    })
}

impl Store {
    pub fn insert_agent_token(&self, t: &AgentTokenRow) -> Result<()> {
        self.conn().execute(
            &format!("INSERT INTO agent_tokens({TOKEN_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"),
            params![
                t.id,
                t.secret_hash,
                t.scaling_group,
                t.created_by,
                now_str(),
                t.revoked_at
            ],
        )?;
        Ok(())
    }

    pub fn agent_tokens(&self) -> Result<Vec<AgentTokenRow>> {
        let conn = self.read();
        let mut st = conn.prepare(&format!(
            "SELECT {TOKEN_COLUMNS} FROM agent_tokens ORDER BY created_at, id"
        ))?;
        let rows = st.query_map([], token_row)?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }

    pub fn agent_token(&self, id: &str) -> Result<Option<AgentTokenRow>> {
        Ok(self
            .read()
            .query_row(
                &format!("SELECT {TOKEN_COLUMNS} FROM agent_tokens WHERE id = ?1"),
                [id],
                token_row,
            )
            .optional()?)
    }

    /// Marks a token revoked. False when there is no such token or it already was.
    pub fn revoke_agent_token(&self, id: &str) -> Result<bool> {
        let n = self.conn().execute(
            "UPDATE agent_tokens SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
            params![id, now_str()],
        )?;
        Ok(n == 1)
    }

    pub fn agent_rows(&self) -> Result<Vec<AgentRow>> {
        let conn = self.read();
        let mut st = conn.prepare(&format!("SELECT {AGENT_COLUMNS} FROM agents ORDER BY id"))?;
        let rows = st.query_map([], agent_row)?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }

    pub fn agent_row(&self, id: &str) -> Result<Option<AgentRow>> {
        Ok(self
            .read()
            .query_row(
                &format!("SELECT {AGENT_COLUMNS} FROM agents WHERE id = ?1"),
                [id],
                agent_row,
            )
            .optional()?)
    }

    /// Records an agent that (re)connected: a new one with its token and credential hash, a
    /// known one with its new address and info (its credential and token stay).
    pub fn upsert_agent(&self, a: &AgentRow) -> Result<()> {
        self.write_agent(
            a,
            "DO UPDATE SET address = excluded.address, info = excluded.info,
                scaling_group = excluded.scaling_group, last_seen = excluded.last_seen",
        )?;
        Ok(())
    }

    /// Records a new agent; false (and nothing written) when the id is already known.
    pub fn insert_agent(&self, a: &AgentRow) -> Result<bool> {
        Ok(self.write_agent(a, "DO NOTHING")? == 1)
    }

    /// Inserts `a` (first and last seen now); `on_conflict` says what a known id gets.
    fn write_agent(&self, a: &AgentRow, on_conflict: &str) -> Result<usize> {
        Ok(self.conn().execute(
            &format!(
                "INSERT INTO agents({AGENT_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)
                 ON CONFLICT(id) {on_conflict}"
            ),
            params![
                a.id,
                a.token_id,
                a.credential_hash,
                a.scaling_group,
                a.address,
                a.info,
                a.drained,
                now_str()
            ],
        )?)
    }

    /// Sets an agent's drained flag. False when the agent is unknown.
    pub fn set_agent_drained(&self, id: &str, drained: bool) -> Result<bool> {
        let n = self.conn().execute(
            "UPDATE agents SET drained = ?2 WHERE id = ?1",
            params![id, drained],
        )?;
        Ok(n == 1)
    }

    pub fn delete_agent(&self, id: &str) -> Result<bool> {
        Ok(self
            .conn()
            .execute("DELETE FROM agents WHERE id = ?1", [id])?
            == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(id: &str) -> AgentTokenRow {
        AgentTokenRow {
            id: id.into(),
            secret_hash: "h".repeat(64),
            scaling_group: "gpu".into(),
            created_by: "admin@lablup.com".into(),
            created_at: String::new(),
            revoked_at: None,
        }
    }

    fn agent(id: &str) -> AgentRow {
        AgentRow {
            id: id.into(),
            token_id: Some("0badcafe".into()),
            credential_hash: Some("c".repeat(64)),
            scaling_group: "gpu".into(),
            address: "10.0.0.2:40000".into(),
            info: None,
            drained: false,
            first_seen: String::new(),
            last_seen: String::new(),
        }
    }

    #[test]
    fn tokens_are_listed_and_revoked_once() {
        let s = Store::open_for_tests().unwrap();
        s.insert_agent_token(&token("0badcafe")).unwrap();
        assert_eq!(s.agent_tokens().unwrap().len(), 1);
        assert!(s.revoke_agent_token("0badcafe").unwrap());
        assert!(!s.revoke_agent_token("0badcafe").unwrap());
        assert!(!s.revoke_agent_token("missing").unwrap());
        assert!(
            s.agent_token("0badcafe")
                .unwrap()
                .unwrap()
                .revoked_at
                .is_some()
        );
    }

    #[test]
    fn a_reconnect_keeps_the_credential_and_the_drain() {
        let s = Store::open_for_tests().unwrap();
        s.upsert_agent(&agent("node-1")).unwrap();
        assert!(s.set_agent_drained("node-1", true).unwrap());
        let mut again = agent("node-1");
        again.credential_hash = Some("x".repeat(64));
        again.address = "10.0.0.3:40001".into();
        s.upsert_agent(&again).unwrap();
        let row = s.agent_row("node-1").unwrap().unwrap();
        assert_eq!(row.credential_hash, Some("c".repeat(64)));
        assert_eq!(row.address, "10.0.0.3:40001");
        assert!(row.drained);
        // A second agent cannot claim a known id.
        assert!(!s.insert_agent(&agent("node-1")).unwrap());
        assert!(s.insert_agent(&agent("node-2")).unwrap());
        assert!(s.delete_agent("node-1").unwrap());
        assert!(s.agent_row("node-1").unwrap().is_none());
    }
}

//! Web sessions (issue 60): the logins behind the web UI's `bai_web` cookie, kept in the
//! store rather than one manager's memory, so that a login outlives a restart of `baid up`
//! and a failover to another manager (several on PostgreSQL). A row holds the SHA-256 of
//! the cookie's token (never the token: a copy of the database opens no session), the
//! access key it logs in as, when it was opened and last used, and the OpenID provider's
//! login it came from when one vouched for it (issuer, `sub`, `sid`), which a back-channel
//! logout names.
//!
//! Idle expiry is by the database's clock (never a manager's): a session unused for `idle`
//! is refused, and removed when found so. The expired ones are swept at every new login;
//! each access key keeps at most `most` (its least recently used go first), so one account
//! logging in again and again cannot grow the table: it holds at most `most` rows per
//! keypair that ever logged in, whoever creates the accounts.

use crate::db::{OptionalExtension, ToValue, Value, params};
use crate::lease::now_ms;
use crate::{Result, Store};
use std::time::Duration;

/// The OpenID provider's login a web session came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebOrigin {
    pub issuer: String,
    /// The person at the provider.
    pub sub: String,
    /// The provider's session, when its ID token named one.
    pub sid: Option<String>,
}

/// A web session as it is opened.
#[derive(Clone, PartialEq, Eq)]
pub struct WebSessionRow {
    /// The SHA-256 (hex) of the cookie's token.
    pub token_hash: String,
    pub access_key: String,
    pub origin: Option<WebOrigin>,
}

impl std::fmt::Debug for WebSessionRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Even the hash stays out of logs: it is the key of the row.
        f.debug_struct("WebSessionRow")
            .field("access_key", &self.access_key)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

/// A web session ended by a back-channel logout: its token's hash and its access key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSessionEnded {
    pub token_hash: String,
    pub access_key: String,
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 2)
}

impl Store {
    /// Keeps a new web session; sweeps the expired ones (unused for `idle`) and, beyond
    /// `most` of its access key, that key's least recently used.
    pub fn web_session_open(&self, row: &WebSessionRow, idle: Duration, most: usize) -> Result<()> {
        let mut conn = self.conn();
        let now = now_ms(conn.engine());
        let tx = conn.transaction()?;
        tx.execute(
            &format!("DELETE FROM web_sessions WHERE used_ms <= {now} - ?1"),
            [millis(idle)],
        )?;
        let open: i64 = tx.query_row(
            "SELECT count(*) FROM web_sessions WHERE access_key = ?1",
            [&row.access_key],
            |r| r.get(0),
        )?;
        let most = i64::try_from(most.max(1)).unwrap_or(i64::MAX);
        let over = open.saturating_add(1).saturating_sub(most);
        if over > 0 {
            tx.execute(
                "DELETE FROM web_sessions WHERE token_hash IN
                 (SELECT token_hash FROM web_sessions WHERE access_key = ?1
                  ORDER BY used_ms, token_hash LIMIT ?2)",
                params![row.access_key, over],
            )?;
        }
        let (issuer, sub, sid) = match &row.origin {
            Some(o) => (Some(o.issuer.clone()), Some(o.sub.clone()), o.sid.clone()),
            None => (None, None, None),
        };
        tx.execute(
            &format!(
                "INSERT INTO web_sessions(token_hash, access_key, created_ms, used_ms, issuer, sub, sid)
                 VALUES (?1, ?2, {now}, {now}, ?3, ?4, ?5)"
            ),
            params![row.token_hash, row.access_key, issuer, sub, sid],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The access key of the live web session `token_hash` names, its last use set to now.
    /// `None` when there is none, or it was unused for `idle` (then it is removed).
    pub fn web_session_touch(&self, token_hash: &str, idle: Duration) -> Result<Option<String>> {
        let conn = self.conn();
        let now = now_ms(conn.engine());
        let live = conn
            .query_row(
                &format!(
                    "UPDATE web_sessions SET used_ms = {now}
                     WHERE token_hash = ?1 AND used_ms > {now} - ?2 RETURNING access_key"
                ),
                params![token_hash, millis(idle)],
                |r| r.get::<_, String>(0),
            )
            .optional()?;
        if live.is_none() {
            conn.execute(
                "DELETE FROM web_sessions WHERE token_hash = ?1",
                [token_hash],
            )?;
        }
        Ok(live)
    }

    /// Ends the web session `token_hash` names (a logout). Whether there was one.
    pub fn web_session_close(&self, token_hash: &str) -> Result<bool> {
        Ok(self.conn().execute(
            "DELETE FROM web_sessions WHERE token_hash = ?1",
            [token_hash],
        )? > 0)
    }

    /// Ends the web sessions a back-channel logout of `issuer` names: with a `sid`, those
    /// of that provider session (and of `sub`, when given too); with only a `sub`, every
    /// one of that person's that the provider vouched for; with neither, none.
    pub fn web_sessions_close_from(
        &self,
        issuer: &str,
        sub: Option<&str>,
        sid: Option<&str>,
    ) -> Result<Vec<WebSessionEnded>> {
        let (filter, values): (&str, Vec<&str>) = match (sub, sid) {
            (Some(sub), Some(sid)) => ("sid = ?2 AND sub = ?3", vec![issuer, sid, sub]),
            (None, Some(sid)) => ("sid = ?2", vec![issuer, sid]),
            (Some(sub), None) => ("sub = ?2", vec![issuer, sub]),
            (None, None) => return Ok(Vec::new()),
        };
        let conn = self.conn();
        let mut st = conn.prepare(&format!(
            "DELETE FROM web_sessions WHERE issuer = ?1 AND {filter}
             RETURNING token_hash, access_key"
        ))?;
        let ended = st
            .query_map(
                values.iter().map(|v| v.to_value()).collect::<Vec<Value>>(),
                |r| {
                    Ok(WebSessionEnded {
                        token_hash: r.get(0)?,
                        access_key: r.get(1)?,
                    })
                },
            )?
            .collect::<crate::db::Result<Vec<_>>>()?;
        Ok(ended)
    }

    /// Removes the web sessions unused for `idle`. How many.
    pub fn web_sessions_sweep(&self, idle: Duration) -> Result<usize> {
        let conn = self.conn();
        let now = now_ms(conn.engine());
        Ok(conn.execute(
            &format!("DELETE FROM web_sessions WHERE used_ms <= {now} - ?1"),
            [millis(idle)],
        )?)
    }

    /// How many web sessions are kept (expired ones not yet swept included).
    pub fn web_sessions_kept(&self) -> Result<i64> {
        Ok(self
            .read()
            .query_row("SELECT count(*) FROM web_sessions", [], |r| r.get(0))?)
    }
}

//! OpenID Connect logins under way (issue 60): what `GET /server/oidc/login` began — the
//! `state`, the SHA-256 of the browser binding, the nonce, the PKCE verifier, the redirect
//! URI — kept in the store rather than one manager's memory, so that the callback may land
//! at another manager (several on PostgreSQL) or after a restart. Each is taken once, in one
//! statement (`DELETE … RETURNING`): two callbacks with one state cannot both have it.
//! Expiry is by the database's clock (never a manager's). The expired ones are swept at
//! every new login, and at most `most` are kept (the oldest go first), so anonymous login
//! starts cannot grow the table without bound.

use crate::db::{OptionalExtension, params};
use crate::lease::now_ms;
use crate::{Result, Store};
use std::time::Duration;

/// A login under way as stored.
#[derive(Clone, PartialEq, Eq)]
pub struct OidcLoginRow {
    pub state: String,
    /// The SHA-256 (hex or base64, the caller's choice) of the browser's binding cookie.
    pub binding_hash: String,
    pub nonce: String,
    pub verifier: String,
    pub redirect_uri: String,
}

impl std::fmt::Debug for OidcLoginRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The verifier and the nonce are secrets of the login: never in a log.
        f.debug_struct("OidcLoginRow")
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

/// What a callback's `state` finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OidcTake {
    /// The login, taken: nobody finds it again.
    Taken(OidcLoginRow),
    /// It was there but too old (it is gone now too).
    Expired,
    /// Nothing of that state (never begun, already used, or swept).
    Unknown,
    /// A login of that state, begun by another browser: left as it is.
    OtherBrowser,
}

impl Store {
    /// Keeps a new login under way for `lifetime`; sweeps the expired ones and, beyond
    /// `most`, the oldest.
    pub fn oidc_login_put(
        &self,
        row: &OidcLoginRow,
        lifetime: Duration,
        most: usize,
    ) -> Result<()> {
        let mut conn = self.conn();
        let now = now_ms(conn.engine());
        let tx = conn.transaction()?;
        tx.execute(
            &format!("DELETE FROM oidc_logins WHERE expires_ms <= {now}"),
            [],
        )?;
        let open: i64 = tx.query_row("SELECT count(*) FROM oidc_logins", [], |r| r.get(0))?;
        let most = i64::try_from(most.max(1)).unwrap_or(i64::MAX);
        let over = open.saturating_add(1).saturating_sub(most);
        if over > 0 {
            tx.execute(
                "DELETE FROM oidc_logins WHERE state IN
                 (SELECT state FROM oidc_logins ORDER BY expires_ms, state LIMIT ?1)",
                [over],
            )?;
        }
        let ms = i64::try_from(lifetime.as_millis()).unwrap_or(i64::MAX / 2);
        tx.execute(
            &format!(
                "INSERT INTO oidc_logins(state, binding_hash, nonce, verifier, redirect_uri, expires_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, {now} + ?6)"
            ),
            params![
                row.state,
                row.binding_hash,
                row.nonce,
                row.verifier,
                row.redirect_uri,
                ms
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Takes the login `state` names if `binding_hash` is its browser's: once.
    pub fn oidc_login_take(&self, state: &str, binding_hash: &str) -> Result<OidcTake> {
        let conn = self.conn();
        let now = now_ms(conn.engine());
        let taken = conn
            .query_row(
                &format!(
                    "DELETE FROM oidc_logins WHERE state = ?1 AND binding_hash = ?2
                     RETURNING nonce, verifier, redirect_uri, {now} - expires_ms"
                ),
                [state, binding_hash],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, i64>(3)?,
                    ))
                },
            )
            .optional()?;
        if let Some((nonce, verifier, redirect_uri, late_ms)) = taken {
            if late_ms >= 0 {
                return Ok(OidcTake::Expired);
            }
            return Ok(OidcTake::Taken(OidcLoginRow {
                state: state.to_string(),
                binding_hash: binding_hash.to_string(),
                nonce,
                verifier,
                redirect_uri,
            }));
        }
        let there: i64 = conn.query_row(
            "SELECT count(*) FROM oidc_logins WHERE state = ?1",
            [state],
            |r| r.get(0),
        )?;
        Ok(if there > 0 {
            OidcTake::OtherBrowser
        } else {
            OidcTake::Unknown
        })
    }

    /// How many logins are kept (expired ones not yet swept included).
    pub fn oidc_logins_kept(&self) -> Result<i64> {
        Ok(self
            .read()
            .query_row("SELECT count(*) FROM oidc_logins", [], |r| r.get(0))?)
    }
}

//! The leader's lease: one row per lease in `leases`, taken over only after it expired, by
//! the database's clock (never a manager's). Every takeover raises the term; a leader's
//! writes are fenced by it ([`Store::fence`]) and agents refuse commands of a lower one.
//!
//! SQLite has one manager per file (the data dir's lock): its claim always wins, and its
//! term still grows on every start, so agents see a restarted manager as the newer one.

use crate::db::{Engine, OptionalExtension};
use crate::{Result, Store};
use std::time::Duration;

/// The database's time now, in milliseconds since the epoch.
pub(crate) fn now_ms(engine: Engine) -> &'static str {
    match engine {
        Engine::Sqlite => "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)",
        Engine::Postgres => "CAST(extract(epoch FROM clock_timestamp()) * 1000 AS BIGINT)",
    }
}

/// A lease's columns as [`row`] reads them (then its time left).
const COLUMNS: &str = "name, holder, term, address, version";

/// A lease read back: [`COLUMNS`], then the milliseconds it has left.
fn row(r: &crate::db::Row<'_>) -> crate::db::Result<LeaseRow> {
    Ok(LeaseRow {
        name: r.get(0)?,
        holder: r.get(1)?,
        term: r.get(2)?,
        address: r.get(3)?,
        version: r.get(4)?,
        left_ms: r.get(5)?,
    })
}

/// Who asks for a lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseBid {
    /// This process, unique among managers (host, pid and a random part).
    pub holder: String,
    /// Where other managers reach it (its API's address, `HOST:PORT`).
    pub address: String,
    /// Its build (`baid --version`): managers of different versions do not share a lease.
    pub version: String,
}

/// A lease as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRow {
    pub name: String,
    pub holder: String,
    pub term: i64,
    pub address: String,
    pub version: String,
    /// Milliseconds until it expires, by the database's clock (negative: expired).
    pub left_ms: i64,
}

/// The answer to a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The lease is the bidder's now, under the row's (new) term.
    Won(LeaseRow),
    /// Another holder has it and it has not expired.
    Held(LeaseRow),
}

impl Store {
    /// Takes lease `name` for `bid` when it is free or expired (always, on SQLite), raising
    /// its term; otherwise tells who holds it.
    pub fn lease_claim(&self, name: &str, bid: &LeaseBid, ttl: Duration) -> Result<Claim> {
        let conn = self.conn();
        let now = now_ms(conn.engine());
        let always = i64::from(conn.engine() == Engine::Sqlite);
        conn.execute(
            "INSERT INTO leases(name, holder, term, expires_ms, address, version)
             VALUES (?1, '', 0, 0, '', '') ON CONFLICT(name) DO NOTHING",
            [name],
        )?;
        let won = conn
            .query_row(
                &format!(
                    "UPDATE leases SET holder = ?2, term = term + 1, expires_ms = {now} + ?3,
                        address = ?4, version = ?5
                     WHERE name = ?1 AND (expires_ms <= {now} OR ?6 = 1)
                     RETURNING {COLUMNS}, expires_ms - {now}"
                ),
                crate::db::params![
                    name,
                    bid.holder,
                    ttl.as_millis() as i64,
                    bid.address,
                    bid.version,
                    always
                ],
                row,
            )
            .optional()?;
        drop(conn);
        match won {
            Some(lease) => Ok(Claim::Won(lease)),
            None => Ok(Claim::Held(self.lease(name)?.ok_or_else(|| {
                crate::StoreError::Invalid(format!("lease {name} vanished"))
            })?)),
        }
    }

    /// Extends the lease `holder` has under `term` by `ttl` from now; false when it is no
    /// longer theirs (another manager took it over).
    pub fn lease_renew(&self, name: &str, holder: &str, term: i64, ttl: Duration) -> Result<bool> {
        let conn = self.conn();
        let now = now_ms(conn.engine());
        let n = conn.execute(
            &format!(
                "UPDATE leases SET expires_ms = {now} + ?4
                 WHERE name = ?1 AND holder = ?2 AND term = ?3"
            ),
            crate::db::params![name, holder, term, ttl.as_millis() as i64],
        )?;
        Ok(n == 1)
    }

    /// Lets the lease go at once (a manager stopping): the next claim wins without waiting.
    pub fn lease_release(&self, name: &str, holder: &str, term: i64) -> Result<()> {
        let conn = self.conn();
        conn.execute(
            "UPDATE leases SET expires_ms = 0 WHERE name = ?1 AND holder = ?2 AND term = ?3",
            crate::db::params![name, holder, term],
        )?;
        Ok(())
    }

    /// The lease as it is now.
    pub fn lease(&self, name: &str) -> Result<Option<LeaseRow>> {
        let conn = self.read();
        let now = now_ms(conn.engine());
        Ok(conn
            .query_row(
                &format!("SELECT {COLUMNS}, expires_ms - {now} FROM leases WHERE name = ?1"),
                [name],
                row,
            )
            .optional()?)
    }

    /// Fences every later write of this store by lease `name`'s `term`: on PostgreSQL each
    /// write transaction first checks, holding the lease row, that the term is still the
    /// lease's, and fails ([`crate::StoreError::is_fenced`]) when another manager took it
    /// over; a takeover waits for the writes in flight. SQLite's file has one manager only:
    /// nothing to fence.
    pub fn fence(&self, name: &str, term: i64) -> Result<()> {
        let conn = self.conn();
        if let crate::db::Connection::Pg(pg) = &*conn {
            pg.fence(name, term)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    type Shared = std::sync::Arc<Store>;

    fn bid(holder: &str) -> LeaseBid {
        LeaseBid {
            holder: holder.into(),
            address: String::new(),
            version: "1".into(),
        }
    }

    /// Two managers of one new PostgreSQL database; `a` leads under a lease of 200 ms, fenced,
    /// and has a write transaction open (row `key` in `meta`), which ends when `go` is sent
    /// (its result comes back from the thread). Returns once the lease expired.
    #[allow(clippy::type_complexity)]
    fn leader_in_a_transaction(
        key: &'static str,
    ) -> (
        Shared,
        Shared,
        std::sync::mpsc::Sender<()>,
        std::thread::JoinHandle<Result<()>>,
    ) {
        let url = testing::fresh_database().unwrap();
        let a = Shared::new(Store::open_postgres(&url).unwrap());
        let b = Shared::new(Store::open_postgres(&url).unwrap());
        let Claim::Won(lease) = a
            .lease_claim("manager", &bid("a"), Duration::from_millis(200))
            .unwrap()
        else {
            panic!("a free lease is won");
        };
        a.fence("manager", lease.term).unwrap();
        let (started_tx, started) = std::sync::mpsc::channel();
        let (go_tx, go) = std::sync::mpsc::channel::<()>();
        let writer = {
            let a = a.clone();
            std::thread::spawn(move || -> Result<()> {
                let mut conn = a.conn();
                let tx = conn.transaction()?;
                tx.execute("INSERT INTO meta(key, value) VALUES (?1, 'a')", [key])?;
                started_tx.send(()).ok();
                go.recv().ok();
                Ok(tx.commit()?)
            })
        };
        started.recv().unwrap();
        while b.lease("manager").unwrap().unwrap().left_ms > 0 {
            std::thread::sleep(Duration::from_millis(50));
        }
        (a, b, go_tx, writer)
    }

    /// A write of the leader holds the lease row from its first statement to its commit: a
    /// claim made after the lease expired waits for the commit, then wins, and the leader's
    /// next write is refused.
    #[test]
    fn a_takeover_waits_for_a_write_in_flight() {
        if !testing::on_postgres() {
            return;
        }
        let (a, b, go_tx, writer) = leader_in_a_transaction("in-flight");
        let claimer = {
            let b = b.clone();
            std::thread::spawn(move || {
                b.lease_claim("manager", &bid("b"), Duration::from_secs(600))
            })
        };
        // Give the claim every chance to go past the write: it must not.
        std::thread::sleep(Duration::from_millis(500));
        assert!(
            !claimer.is_finished(),
            "a takeover went past a write in flight"
        );
        go_tx.send(()).unwrap();
        writer.join().unwrap().unwrap();
        assert!(matches!(claimer.join().unwrap().unwrap(), Claim::Won(_)));
        assert_eq!(b.meta_get("in-flight").unwrap().as_deref(), Some("a"));
        assert!(a.meta_set("after", "a").unwrap_err().is_fenced());
    }

    /// A leader stopped inside a write transaction (SIGSTOP, a frozen VM) holds the lease
    /// row until the server ends its idle transaction: the takeover waits for that, not for
    /// good, and the stopped leader's transaction commits nothing.
    #[test]
    fn a_stopped_leader_does_not_keep_a_takeover_waiting() {
        if !testing::on_postgres() {
            return;
        }
        let (a, b, go_tx, stopped) = leader_in_a_transaction("stopped");
        // Wins once the server ended the stopped transaction (3 s idle).
        let won = b.lease_claim("manager", &bid("b"), Duration::from_secs(600));
        assert!(matches!(won.unwrap(), Claim::Won(_)));
        go_tx.send(()).unwrap();
        assert!(
            stopped.join().unwrap().is_err(),
            "the stopped transaction committed"
        );
        assert_eq!(b.meta_get("stopped").unwrap(), None);
        assert!(a.meta_set("after", "a").unwrap_err().is_fenced());
    }
}

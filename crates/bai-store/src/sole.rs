//! One manager per PostgreSQL database, until several managers share one under a lease:
//! a manager holds a session-level advisory lock on a connection of its own for as long as it
//! runs, and a second one is refused at start. (An SQLite file is one data dir's, whose lock
//! file already allows one `baid up`.)

use crate::Result;
use crate::db::{self, PgConn};

/// The lock's number, bai's alone.
const MANAGER_LOCK: i64 = 0x0062_6169_5f6d_6772;

/// Held while the manager runs; the lock goes with the connection.
pub struct SoleManager {
    _conn: PgConn,
}

/// How long a claim waits for a holder to go: a manager killed a moment ago holds the lock
/// until PostgreSQL has seen its connection close.
const GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// Takes the database for this manager: `None` when another manager holds it.
pub fn claim(url: &str) -> Result<Option<SoleManager>> {
    let conn = crate::connect_postgres(url)?;
    let since = std::time::Instant::now();
    loop {
        let rows = conn.query(
            "SELECT pg_try_advisory_lock(?1)",
            vec![db::Value::Int(MANAGER_LOCK)],
        )?;
        if rows.first().and_then(|r| r.first()) == Some(&db::Value::Int(1)) {
            return Ok(Some(SoleManager { _conn: conn }));
        }
        if since.elapsed() > GRACE {
            return Ok(None);
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

//! Database access for bai. SQLite, embedded, one file in the data dir; WAL mode.
//!
//! Every write that changes a session's status is a compare-and-set on the current status
//! ([`Store::cas_status`]), so two actors (the scheduler, a user's `rm`, an agent event) can
//! never both move the same session.
#![forbid(unsafe_code)]

mod pass;
mod resources;
mod schema;
mod sessions;
mod users;
mod vfolders;

pub use pass::{PassEntry, PassResult, PassWrite};
pub use resources::{PolicyRow, PresetRow, ResourceGroupRow};
pub use sessions::{NewSession, PendingRow, SessionFilter, SessionRow, StatusChange};
pub use users::{KeypairRow, UserRow};
pub use vfolders::VFolderRow;

use rusqlite::Connection;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("corrupt value in column {column}: {detail}")]
    Corrupt {
        column: &'static str,
        detail: String,
    },
    #[error("cannot open the database at {path}: {source}")]
    Open {
        path: String,
        source: rusqlite::Error,
    },
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// The database. Cheap to share behind an `Arc`; queries are short and serialized.
pub struct Store {
    conn: Mutex<Connection>,
}

impl Store {
    /// Opens (creating when missing) the SQLite database file and migrates it.
    pub fn open(path: &Path) -> Result<Store> {
        let conn = Connection::open(path).map_err(|e| StoreError::Open {
            path: path.display().to_string(),
            source: e,
        })?;
        Self::init(conn)
    }

    /// An in-memory database, for tests.
    pub fn open_in_memory() -> Result<Store> {
        Self::init(Connection::open_in_memory()?)
    }

    fn init(conn: Connection) -> Result<Store> {
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // 64 MiB of page cache (the default is 2 MiB): a scheduling pass touches sessions,
        // history and events pages of every queued session.
        conn.pragma_update(None, "cache_size", -65536)?;
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        schema::migrate(&conn)?;
        Ok(Store {
            conn: Mutex::new(conn),
        })
    }

    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        // A poisoned lock only means another thread panicked mid-query; SQLite itself stays
        // consistent (the transaction rolled back), so keep going.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn meta_get(&self, key: &str) -> Result<Option<String>> {
        use rusqlite::OptionalExtension;
        Ok(self
            .conn()
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?)
    }

    pub fn meta_set(&self, key: &str, value: &str) -> Result<()> {
        self.conn().execute(
            "INSERT INTO meta(key, value) VALUES (?1, ?2)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [key, value],
        )?;
        Ok(())
    }
}

/// Current time as the RFC 3339 string stored everywhere (UTC, microseconds).
pub fn now_str() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, false)
}

//! Database access for bai: SQLite, embedded, one file in the data dir (WAL mode), or
//! PostgreSQL, a database apart from the manager's machine, which several managers share
//! under a lease whose term fences the leader's writes ([`Store::fence`]). The modules write portable SQL through
//! [`db`]; the schema is one, written for each engine ([`schema`]).
//!
//! Every write that changes a session's status is a compare-and-set on the current status
//! ([`Store::cas_status`]), so two actors (the scheduler, a user's `rm`, an agent event) can
//! never both move the same session.
#![forbid(unsafe_code)]

mod accounts;
mod agents;
mod audit;
pub mod backup;
pub mod copy;
pub mod db;
mod lease;
pub use schema::LATEST as SCHEMA_VERSION;
mod domains;
mod dotfiles;
mod endpoint_rules;
mod endpoints;
mod fairshare;
mod images;
mod oidc_logins;
mod pass;
mod problem;
mod projects;
mod resources;
mod schema;
mod sessions;
mod templates;
pub mod testing;
mod user_policies;
mod users;
mod vfolder_shares;
mod vfolders;
mod web_sessions;

pub use accounts::{
    KeypairInfo, NewUser, StillOwned, UserField, UserFilter, UserInfo, is_admin_role,
};
pub use agents::{AgentRow, AgentTokenRow};
pub use audit::{AuditEntry, AuditFilter};
pub use domains::{DomainInUse, DomainRow};
pub use endpoint_rules::RuleRow;
pub use endpoints::{EndpointRow, EndpointSpec, EndpointState, EndpointTokenRow, RouteRow};
pub use fairshare::{ShareRow as FairShareRow, UsageRow};
pub use images::CustomizedImageRow;
pub use lease::{Claim, LeaseBid, LeaseRow};
pub use oidc_logins::{OidcLoginRow, OidcTake};
pub use pass::{PassEntry, PassResult, PassWrite};
pub use projects::{ProjectRow, PurgeRefusal};
pub use resources::{PolicyRow, PresetRow, ResourceGroupRow};
pub use sessions::{
    GroupQueue, NewSession, PendingRow, ResolvedSpec, SessionCount, SessionCursor, SessionFilter,
    SessionRow, SessionState, StatusChange, StatusHistory, SubKernel, SubPlacements,
};
pub use templates::TemplateRow;
pub use user_policies::UserPolicyRow;
pub use users::{KeypairChange, KeypairRow, UserRow};
pub use vfolder_shares::{AcceptRefusal, InvitationRow, ShareRow, invitation_state};
pub use vfolders::{CLONING, TRASHED, VFolderRow};
pub use web_sessions::{WebOrigin, WebSessionEnded, WebSessionRow};

use db::Connection;
use rusqlite::OpenFlags;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sql(#[from] db::Error),
    #[error("corrupt value in column {column}: {detail}")]
    Corrupt {
        column: &'static str,
        detail: String,
    },
    /// A status change the state machine does not allow (a bug in the caller; nothing was
    /// written).
    #[error("illegal transition {from} -> {to}")]
    IllegalTransition {
        from: bai_core::SessionStatus,
        to: bai_core::SessionStatus,
    },
    #[error("cannot open the database at {path}: {source}")]
    Open { path: String, source: db::Error },
    /// The database was written by a newer bai (its schema is ahead of this build's).
    #[error(
        "the database has schema version {found}, newer than this build's {known}: run the bai version that wrote it (or newer)"
    )]
    NewerSchema { found: i64, known: i64 },
    /// A value the caller built against the store's rules (a bug in the caller; nothing was
    /// written).
    #[error("invalid: {0}")]
    Invalid(String),
    /// A backup, restore or move between databases that cannot be done, and why.
    #[error("{0}")]
    Backup(String),
}

impl StoreError {
    /// Whether the database could not be written because its disk is full (nothing was
    /// changed: the transaction was rolled back).
    pub fn is_disk_full(&self) -> bool {
        match self {
            StoreError::Sql(e) | StoreError::Open { source: e, .. } => e.is_disk_full(),
            _ => false,
        }
    }

    /// Whether the database server cannot be reached now (PostgreSQL down or cut off):
    /// nothing was written, and the same call may succeed later.
    pub fn is_unavailable(&self) -> bool {
        match self {
            StoreError::Sql(e) | StoreError::Open { source: e, .. } => e.is_unavailable(),
            _ => false,
        }
    }

    /// Whether a write was refused because this manager no longer holds the leader's lease
    /// (another manager took it over): nothing was written.
    pub fn is_fenced(&self) -> bool {
        matches!(self, StoreError::Sql(e) if e.is_fenced())
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        StoreError::Sql(db::Error::Lite(e))
    }
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// Read-only connections a file database keeps beside its writer: in WAL mode readers see
/// the last committed state and neither wait for the writer nor hold it up.
const READERS: usize = 4;

/// The database. Cheap to share behind an `Arc`. Writes are serialized on one connection;
/// reads of a file database use a small pool of read-only connections.
pub struct Store {
    conn: Mutex<Connection>,
    readers: Vec<Mutex<Connection>>,
    next_reader: AtomicUsize,
    /// Hears how long each use of a connection took (waiting for it included), as
    /// `("write" | "read", seconds)`: every query and transaction goes through one.
    observer: std::sync::OnceLock<Observer>,
}

/// What [`Store::observe`] is given.
pub type Observer = Box<dyn Fn(&'static str, f64) + Send + Sync>;

/// A connection in use; on drop, its time goes to the observer.
pub(crate) struct Held<'a> {
    guard: MutexGuard<'a, Connection>,
    since: std::time::Instant,
    kind: &'static str,
    observer: Option<&'a Observer>,
}

impl std::ops::Deref for Held<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.guard
    }
}

impl std::ops::DerefMut for Held<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        &mut self.guard
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Some(f) = self.observer {
            f(self.kind, self.since.elapsed().as_secs_f64());
        }
    }
}

impl Store {
    /// Opens the database a command line names: a PostgreSQL URL (`postgres://…`,
    /// `postgresql://…`), `sqlite:PATH`, or a path to an SQLite file.
    pub fn open_database(what: &str) -> Result<Store> {
        if db::is_postgres_url(what) {
            Store::open_postgres(what)
        } else {
            Store::open(Path::new(what.strip_prefix("sqlite:").unwrap_or(what)))
        }
    }

    /// Opens (creating when missing) the SQLite database file and migrates it.
    pub fn open(path: &Path) -> Result<Store> {
        let open_err = |e: rusqlite::Error| StoreError::Open {
            path: path.display().to_string(),
            source: db::Error::Lite(e),
        };
        let conn = rusqlite::Connection::open(path).map_err(open_err)?;
        let mut store = Self::init(Connection::Lite(conn))?;
        for _ in 0..READERS {
            let reader = rusqlite::Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(open_err)?;
            reader
                .pragma_update(None, "query_only", "ON")
                .map_err(db::Error::Lite)?;
            reader
                .pragma_update(None, "cache_size", -4096)
                .map_err(db::Error::Lite)?;
            reader
                .busy_timeout(std::time::Duration::from_secs(5))
                .map_err(db::Error::Lite)?;
            store.readers.push(Mutex::new(Connection::Lite(reader)));
        }
        Ok(store)
    }

    /// Connects to a PostgreSQL database (which must exist) and migrates it: a writer and
    /// a few readers, each a connection of its own.
    pub fn open_postgres(url: &str) -> Result<Store> {
        let mut store = Self::init(Connection::Pg(connect_postgres(url)?))?;
        for _ in 0..READERS {
            let reader = connect_postgres(url)?;
            store.readers.push(Mutex::new(Connection::Pg(reader)));
        }
        Ok(store)
    }

    /// A new database for a test, on the engine the run asks for ([`testing`]).
    pub fn open_for_tests() -> Result<Store> {
        testing::store()
    }

    /// An in-memory database, for tests (one connection serves reads and writes).
    pub fn open_in_memory() -> Result<Store> {
        Self::init(Connection::Lite(
            rusqlite::Connection::open_in_memory().map_err(db::Error::Lite)?,
        ))
    }

    fn init(conn: Connection) -> Result<Store> {
        if let Some(c) = conn.sqlite() {
            let pragmas = || -> rusqlite::Result<()> {
                c.pragma_update(None, "journal_mode", "WAL")?;
                c.pragma_update(None, "synchronous", "NORMAL")?;
                c.pragma_update(None, "foreign_keys", "ON")?;
                // 32 MiB of page cache (the default is 2 MiB): a scheduling pass touches
                // sessions, history and events pages of every queued session. With the
                // readers' 4 MiB each, SQLite holds at most 48 MiB however long the history
                // (a walk of 100,000 sessions fills the readers'; the file's pages stay in
                // the kernel's page cache, outside baid's memory).
                c.pragma_update(None, "cache_size", -32768)?;
                c.pragma_update(None, "temp_store", "MEMORY")?;
                c.busy_timeout(std::time::Duration::from_secs(5))
            };
            pragmas().map_err(db::Error::Lite)?;
        }
        let found = schema::version(&conn)?;
        if found > schema::LATEST {
            return Err(StoreError::NewerSchema {
                found,
                known: schema::LATEST,
            });
        }
        schema::migrate(&conn)?;
        if found < schema::LATEST
            && let Some(c) = conn.sqlite()
        {
            // A migration may have read every row (an index built over a long history): give
            // back the cache it grew, which the running manager would otherwise keep.
            c.execute_batch("PRAGMA shrink_memory")
                .map_err(db::Error::Lite)?;
        }
        Ok(Store {
            conn: Mutex::new(conn),
            readers: Vec::new(),
            next_reader: AtomicUsize::new(0),
            observer: std::sync::OnceLock::new(),
        })
    }

    /// The engine this store speaks to.
    pub fn engine(&self) -> db::Engine {
        self.conn().engine()
    }

    /// Sets who hears the time of every use of a connection (once; later calls are ignored).
    pub fn observe(&self, f: Observer) {
        let _ = self.observer.set(f);
    }

    fn held<'a>(
        &'a self,
        guard: MutexGuard<'a, Connection>,
        since: std::time::Instant,
        kind: &'static str,
    ) -> Held<'a> {
        Held {
            guard,
            since,
            kind,
            observer: self.observer.get(),
        }
    }

    pub(crate) fn conn(&self) -> Held<'_> {
        let since = std::time::Instant::now();
        // A poisoned lock only means another thread panicked mid-query; SQLite itself stays
        // consistent (the transaction rolled back), so keep going.
        let guard = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        self.held(guard, since, "write")
    }

    /// A connection for reading: a free one of the pool (the writer when there is no pool),
    /// so a reader never waits behind a writer's transaction. The first free one in the
    /// pool's order: each reader keeps a page cache of its own, and reads taken in turn by
    /// all four would fill four caches with the same pages; so the later readers fill only
    /// while the earlier ones are busy (reads at the same time). When all are busy, it waits
    /// for one, taken in turn.
    pub(crate) fn read(&self) -> Held<'_> {
        let since = std::time::Instant::now();
        let n = self.readers.len();
        if n == 0 {
            let guard = self.conn.lock().unwrap_or_else(|p| p.into_inner());
            return self.held(guard, since, "read");
        }
        for reader in &self.readers {
            match reader.try_lock() {
                Ok(guard) => return self.held(guard, since, "read"),
                Err(std::sync::TryLockError::Poisoned(p)) => {
                    return self.held(p.into_inner(), since, "read");
                }
                Err(std::sync::TryLockError::WouldBlock) => {}
            }
        }
        let start = self.next_reader.fetch_add(1, Ordering::Relaxed);
        let guard = self.readers[start % n]
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        self.held(guard, since, "read")
    }

    /// Gives back the page caches of the SQLite connections that are free now (`PRAGMA
    /// shrink_memory`; a connection in use keeps its cache): after a burst they hold up to
    /// 48 MiB of pages (the writer's 32 MiB fills as sessions are written) that the next
    /// queries read again from the kernel's page cache. The manager calls it once a burst
    /// ends, before the allocator gives the freed pages back (`bai-manager`'s `heap.rs`).
    /// Returns how many connections gave theirs back; PostgreSQL's keep nothing here (0).
    pub fn release_memory(&self) -> usize {
        std::iter::once(&self.conn)
            .chain(&self.readers)
            .filter_map(|c| match c.try_lock() {
                Ok(guard) => Some(guard),
                Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
                Err(std::sync::TryLockError::WouldBlock) => None,
            })
            .filter(|guard| {
                guard
                    .sqlite()
                    .is_some_and(|c| c.execute_batch("PRAGMA shrink_memory").is_ok())
            })
            .count()
    }

    pub fn meta_get(&self, key: &str) -> Result<Option<String>> {
        use db::OptionalExtension;
        Ok(self
            .read()
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

/// A connection to the PostgreSQL database at `url`; failing, the error names the URL
/// (without its password).
pub(crate) fn connect_postgres(url: &str) -> Result<db::PgConn> {
    db::PgConn::connect(url).map_err(|e| StoreError::Open {
        path: db::redact(url),
        source: e,
    })
}

/// The time `age` before now as stored (see [`now_str`]); None for an age no date reaches.
pub fn time_before(age: std::time::Duration) -> Option<String> {
    let age = chrono::Duration::from_std(age).ok()?;
    Some((chrono::Utc::now() - age).to_rfc3339_opts(chrono::SecondsFormat::Micros, false))
}

/// Current time as the RFC 3339 string stored everywhere (UTC, microseconds).
pub fn now_str() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Reads of a file database do not wait for the writer: while a write holds the writer's
    /// connection (a long scheduling pass, say), another thread still reads.
    #[test]
    fn readers_do_not_wait_for_the_writer() {
        let dir = tempfile::tempdir().unwrap();
        let store = std::sync::Arc::new(Store::open(&dir.path().join("bai.db")).unwrap());
        store.meta_set("k", "v").unwrap();
        let writing = store.conn();
        let (done, finished) = std::sync::mpsc::channel();
        let reader = store.clone();
        std::thread::spawn(move || {
            let _ = done.send(reader.meta_get("k").map_err(|e| e.to_string()));
        });
        // A generous bound that only a deadlock reaches: with one shared connection the
        // reader would wait for `writing` forever.
        let got = finished.recv_timeout(Duration::from_secs(120));
        drop(writing);
        assert_eq!(
            got.expect("the read finished while the writer held its connection")
                .unwrap()
                .as_deref(),
            Some("v")
        );
    }

    /// Reads one after another all use the first reader (one page cache fills, not four);
    /// a read while it is busy takes the next free one.
    #[test]
    fn reads_take_the_first_free_reader() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("bai.db")).unwrap();
        for _ in 0..3 {
            let held = store.read();
            assert!(store.readers[0].try_lock().is_err(), "the first reader");
            assert!(store.readers[1..].iter().all(|r| r.try_lock().is_ok()));
            drop(held);
        }
        let first = store.read();
        let second = store.read();
        assert!(store.readers[1].try_lock().is_err(), "the next free one");
        assert!(store.readers[2..].iter().all(|r| r.try_lock().is_ok()));
        drop((first, second));
    }

    /// Every free SQLite connection gives its cache back, one in use keeps it; the store
    /// reads and writes as before afterwards.
    #[test]
    fn release_memory_shrinks_the_free_connections() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("bai.db")).unwrap();
        store.meta_set("k", "v").unwrap();
        assert_eq!(store.release_memory(), 1 + READERS);
        let writing = store.conn();
        assert_eq!(store.release_memory(), READERS, "the writer is in use");
        drop(writing);
        assert_eq!(store.meta_get("k").unwrap().as_deref(), Some("v"));
        store.meta_set("k", "w").unwrap();
        assert_eq!(store.meta_get("k").unwrap().as_deref(), Some("w"));
        assert_eq!(Store::open_in_memory().unwrap().release_memory(), 1);
    }

    /// In memory there is one connection: reads use the writer's.
    #[test]
    fn in_memory_reads_use_the_one_connection() {
        let store = Store::open_in_memory().unwrap();
        store.meta_set("k", "v").unwrap();
        assert_eq!(store.meta_get("k").unwrap().as_deref(), Some("v"));
        assert!(store.readers.is_empty());
    }
}

//! One way to speak SQL to either engine: SQLite (embedded, the default) or PostgreSQL (several
//! managers, one database). The store's modules write portable SQL with `?N` parameters and
//! read columns by index; this module binds, runs and reads them on whichever engine the store
//! was opened on. The shapes follow rusqlite's (`query_row`, `prepare`, `query_map`,
//! `transaction`, `optional`), so the store reads the same on both.

mod pg;
mod value;

pub use pg::{PgConn, redact};

/// Whether a `--database` value names a PostgreSQL database (else an SQLite file).
pub fn is_postgres_url(what: &str) -> bool {
    what.starts_with("postgres://") || what.starts_with("postgresql://")
}
pub use value::{FromValue, Params, ToValue, Value, ValueRef};

pub use crate::__db_params as params;

/// A failure of the database, whichever engine.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Lite(#[from] rusqlite::Error),
    #[error("{}", pg::describe(.0))]
    Pg(#[from] postgres::Error),
    /// A statement PostgreSQL refused or failed (the statement, not its parameters).
    #[error("{} in: {}", pg::describe(.source), .sql)]
    PgStatement {
        source: postgres::Error,
        sql: String,
    },
    /// `query_row` found no row (see [`OptionalExtension`]).
    #[error("the query returned no rows")]
    NoRows,
    #[error("column {column}: {detail}")]
    Conversion { column: usize, detail: String },
    /// The connection to the database server is gone (reconnected on the next use).
    #[error("the database connection is closed: {0}")]
    Closed(String),
    /// No connection could be made (an unreachable server, a bad URL): the reason.
    #[error("{0}")]
    Connect(String),
    /// A write of a leader whose lease another manager took over: nothing was written.
    #[error("{0}")]
    Fenced(String),
}

impl Error {
    /// SQLite's disk-full, or PostgreSQL's `disk_full` (53100).
    pub fn is_disk_full(&self) -> bool {
        match self {
            Error::Lite(rusqlite::Error::SqliteFailure(f, _)) => {
                f.code == rusqlite::ErrorCode::DiskFull
            }
            Error::Pg(e) | Error::PgStatement { source: e, .. } => {
                e.code() == Some(&postgres::error::SqlState::DISK_FULL)
            }
            _ => false,
        }
    }

    /// A write refused because this manager's lease was taken over (nothing was written).
    pub fn is_fenced(&self) -> bool {
        matches!(self, Error::Fenced(_))
    }

    /// The server cannot be reached or dropped the connection (not a fault of the statement).
    pub fn is_unavailable(&self) -> bool {
        match self {
            Error::Closed(_) | Error::Connect(_) => true,
            Error::Pg(e) | Error::PgStatement { source: e, .. } => pg::is_lost(e),
            _ => false,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `.optional()`: no row is `None`, as rusqlite's extension of the same name.
pub trait OptionalExtension<T> {
    fn optional(self) -> Result<Option<T>>;
}

impl<T> OptionalExtension<T> for Result<T> {
    fn optional(self) -> Result<Option<T>> {
        match self {
            Ok(v) => Ok(Some(v)),
            Err(Error::NoRows) | Err(Error::Lite(rusqlite::Error::QueryReturnedNoRows)) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Which engine a store speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

/// One connection.
pub enum Connection {
    Lite(rusqlite::Connection),
    Pg(PgConn),
}

impl Connection {
    pub fn engine(&self) -> Engine {
        match self {
            Connection::Lite(_) => Engine::Sqlite,
            Connection::Pg(_) => Engine::Postgres,
        }
    }

    /// The SQLite connection underneath (backups, pragmas); `None` on PostgreSQL.
    pub fn sqlite(&self) -> Option<&rusqlite::Connection> {
        match self {
            Connection::Lite(c) => Some(c),
            Connection::Pg(_) => None,
        }
    }

    pub fn execute<P: Params>(&self, sql: &str, params: P) -> Result<usize> {
        match self {
            Connection::Lite(c) => {
                let mut st = c.prepare_cached(sql)?;
                params.bind_lite(&mut st)?;
                Ok(st.raw_execute()?)
            }
            Connection::Pg(c) => Ok(c.execute(sql, params.values())? as usize),
        }
    }

    /// An `INSERT` whose generated key (an identity column, `key`) is wanted back: SQLite's
    /// last rowid after a plain insert (its `RETURNING` builds a temporary table per
    /// statement, which a scheduling pass would pay for each event), PostgreSQL's `RETURNING`.
    pub fn insert_returning_key<P: Params>(&self, sql: &str, key: &str, params: P) -> Result<i64> {
        match self {
            Connection::Lite(c) => {
                let mut st = c.prepare_cached(sql)?;
                params.bind_lite(&mut st)?;
                st.raw_execute()?;
                Ok(c.last_insert_rowid())
            }
            Connection::Pg(c) => {
                let rows = c.query(&format!("{sql} RETURNING {key}"), params.values())?;
                let v = rows
                    .first()
                    .and_then(|r| r.first())
                    .cloned()
                    .ok_or(Error::NoRows)?;
                value::column(0, v)
            }
        }
    }

    /// Several statements without parameters.
    pub fn execute_batch(&self, sql: &str) -> Result<()> {
        match self {
            Connection::Lite(c) => Ok(c.execute_batch(sql)?),
            Connection::Pg(c) => c.batch(sql),
        }
    }

    pub fn query_row<T, P, F>(&self, sql: &str, params: P, f: F) -> Result<T>
    where
        P: Params,
        F: FnOnce(&Row<'_>) -> Result<T>,
    {
        self.prepare_cached(sql)?.query_row(params, f)
    }

    pub fn prepare(&self, sql: &str) -> Result<Statement<'_>> {
        Ok(Statement(match self {
            Connection::Lite(c) => St::Lite(c.prepare(sql)?),
            Connection::Pg(c) => St::Pg(c, sql.to_string()),
        }))
    }

    pub fn prepare_cached(&self, sql: &str) -> Result<Statement<'_>> {
        Ok(Statement(match self {
            Connection::Lite(c) => St::LiteCached(c.prepare_cached(sql)?),
            Connection::Pg(c) => St::Pg(c, sql.to_string()),
        }))
    }

    /// A transaction (deferred on SQLite: it takes the write lock at its first write);
    /// rolled back when dropped uncommitted.
    pub fn transaction(&mut self) -> Result<Transaction<'_>> {
        self.execute_batch("BEGIN")?;
        Ok(Transaction {
            conn: self,
            done: false,
        })
    }
}

/// A prepared statement.
pub struct Statement<'c>(St<'c>);

enum St<'c> {
    Lite(rusqlite::Statement<'c>),
    LiteCached(rusqlite::CachedStatement<'c>),
    Pg(&'c PgConn, String),
}

/// A statement, seen as its engine's.
enum Which<'s, 'c> {
    Lite(&'s mut rusqlite::Statement<'c>),
    Pg(&'c PgConn, &'s str),
}

impl<'c> Statement<'c> {
    fn which(&mut self) -> Which<'_, 'c> {
        match &mut self.0 {
            St::Lite(s) => Which::Lite(s),
            St::LiteCached(s) => Which::Lite(s),
            St::Pg(c, sql) => Which::Pg(c, sql),
        }
    }

    pub fn execute<P: Params>(&mut self, params: P) -> Result<usize> {
        match self.which() {
            Which::Lite(s) => {
                params.bind_lite(s)?;
                Ok(s.raw_execute()?)
            }
            Which::Pg(c, sql) => Ok(c.execute(sql, params.values())? as usize),
        }
    }

    /// Every row, each turned by `f` (read eagerly).
    pub fn query_map<T, P, F>(
        &mut self,
        params: P,
        mut f: F,
    ) -> Result<std::vec::IntoIter<Result<T>>>
    where
        P: Params,
        F: FnMut(&Row<'_>) -> Result<T>,
    {
        let mut out = Vec::new();
        match self.which() {
            Which::Lite(s) => {
                params.bind_lite(s)?;
                let mut rows = s.raw_query();
                while let Some(r) = rows.next()? {
                    out.push(f(&Row(R::Lite(r))));
                }
            }
            Which::Pg(c, sql) => {
                for r in c.rows(sql, params.values())? {
                    out.push(f(&Row(R::Pg(&r))));
                }
            }
        }
        Ok(out.into_iter())
    }

    /// The first row, turned by `f`; [`Error::NoRows`] when there is none.
    pub fn query_row<T, P, F>(&mut self, params: P, f: F) -> Result<T>
    where
        P: Params,
        F: FnOnce(&Row<'_>) -> Result<T>,
    {
        match self.which() {
            Which::Lite(s) => {
                params.bind_lite(s)?;
                let mut rows = s.raw_query();
                match rows.next()? {
                    Some(r) => f(&Row(R::Lite(r))),
                    None => Err(Error::NoRows),
                }
            }
            Which::Pg(c, sql) => match c.rows(sql, params.values())?.first() {
                Some(r) => f(&Row(R::Pg(r))),
                None => Err(Error::NoRows),
            },
        }
    }
}

/// One row of a result.
pub struct Row<'a>(R<'a>);

enum R<'a> {
    Lite(&'a rusqlite::Row<'a>),
    Pg(&'a postgres::Row),
}

impl Row<'_> {
    /// How many columns the row has.
    pub fn len(&self) -> usize {
        match &self.0 {
            R::Lite(r) => r.as_ref().column_count(),
            R::Pg(r) => r.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Column `i` (from 0) as `T`. The first type parameter is the index's, as rusqlite's.
    pub fn get<I: ColumnIndex, T: FromValue>(&self, i: I) -> Result<T> {
        let i = i.index();
        let v = match &self.0 {
            R::Lite(r) => Value::from_sqlite(r.get_ref(i)?),
            R::Pg(r) if i < r.len() => pg::column_value(r, i)?,
            R::Pg(_) => return Err(Error::Lite(rusqlite::Error::InvalidColumnIndex(i))),
        };
        value::column(i, v)
    }
}

/// A column's position (only `usize`, so a literal index needs no suffix).
pub trait ColumnIndex {
    fn index(self) -> usize;
}

impl ColumnIndex for usize {
    fn index(self) -> usize {
        self
    }
}

/// A transaction on one connection; it derefs to the connection.
pub struct Transaction<'c> {
    conn: &'c Connection,
    done: bool,
}

impl Transaction<'_> {
    pub fn commit(mut self) -> Result<()> {
        self.conn.execute_batch("COMMIT")?;
        self.done = true;
        Ok(())
    }
}

impl std::ops::Deref for Transaction<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if !self.done
            && let Err(e) = self.conn.execute_batch("ROLLBACK")
        {
            tracing::warn!(error = %e, "rolling back a transaction failed");
        }
    }
}

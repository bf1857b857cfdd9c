//! Schema and migrations. Each migration runs once, in order, recorded in `meta.schema_version`.
//!
//! SQLite databases walk `sqlite::MIGRATIONS` from wherever they are. A PostgreSQL database starts
//! at [`PG_BASELINE`] (`schema/postgres.sql`: the same tables, columns and indexes as the
//! SQLite migrations up to it make, a test compares them) and walks `postgres::PG_MIGRATIONS` from
//! there: a change of the schema after the baseline is written once per engine.

use crate::db::{Connection, Engine, OptionalExtension};

mod postgres;
mod sqlite;

use postgres::{PG_DEFAULT_ROWS, PG_MIGRATIONS, PG_SCHEMA};
use sqlite::MIGRATIONS;

/// The schema version this build migrates to.
pub const LATEST: i64 = MIGRATIONS.len() as i64;

/// The version `schema/postgres.sql` is.
pub const PG_BASELINE: i64 = 21;

const _: () = assert!(PG_BASELINE + PG_MIGRATIONS.len() as i64 == LATEST);

/// A lock number only bai's migrations take (two managers starting on one new database
/// must not both create it).
const PG_MIGRATION_LOCK: i64 = 0x0062_6169_5f6d_6967;

/// The schema version of a database (0: a new one).
pub fn version(conn: &Connection) -> crate::db::Result<i64> {
    let has_meta: bool = match conn.engine() {
        Engine::Sqlite => conn.query_row(
            "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
            [],
            |r| r.get(0),
        )?,
        Engine::Postgres => conn.query_row(
            "SELECT count(*) > 0 FROM information_schema.tables
             WHERE table_schema = current_schema() AND table_name = 'meta'",
            [],
            |r| r.get(0),
        )?,
    };
    if !has_meta {
        return Ok(0);
    }
    let v: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    Ok(v.and_then(|v| v.trim().parse().ok()).unwrap_or(0))
}

pub fn migrate(conn: &Connection) -> crate::db::Result<()> {
    match conn.engine() {
        Engine::Sqlite => migrate_sqlite(conn)?,
        Engine::Postgres => {
            conn.query_row("SELECT pg_advisory_lock(?1)", [PG_MIGRATION_LOCK], |_| {
                Ok(())
            })?;
            let r = migrate_postgres(conn);
            conn.query_row("SELECT pg_advisory_unlock(?1)", [PG_MIGRATION_LOCK], |_| {
                Ok(())
            })?;
            r?
        }
    }
    fill_project_ids(conn)
}

fn set_version(conn: &Connection, version: i64) -> crate::db::Result<()> {
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('schema_version', ?1)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [version.to_string()],
    )?;
    Ok(())
}

fn migrate_sqlite(conn: &Connection) -> crate::db::Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
    )?;
    let current = version(conn)?;
    for (i, sql) in MIGRATIONS.iter().enumerate() {
        let version = i as i64 + 1;
        if version <= current {
            continue;
        }
        let sql = if version == 1 {
            sql.replace(
                "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
                "",
            )
        } else {
            sql.to_string()
        };
        conn.execute_batch(&format!("BEGIN; {sql}; COMMIT;"))?;
        set_version(conn, version)?;
    }
    Ok(())
}

/// A new database gets the baseline in one transaction; an older one the migrations after
/// its version, each in one transaction with its new version.
fn migrate_postgres(conn: &Connection) -> crate::db::Result<()> {
    let current = version(conn)?;
    if current == 0 {
        conn.execute_batch(&format!(
            "BEGIN; {PG_SCHEMA}; {PG_DEFAULT_ROWS} INSERT INTO meta(key, value) VALUES ('schema_version', '{PG_BASELINE}'); COMMIT;"
        ))?;
    }
    let current = version(conn)?;
    for (i, sql) in PG_MIGRATIONS.iter().enumerate() {
        let version = PG_BASELINE + i as i64 + 1;
        if version <= current {
            continue;
        }
        conn.execute_batch(&format!(
            "BEGIN; {sql}; UPDATE meta SET value = '{version}' WHERE key = 'schema_version'; COMMIT;"
        ))?;
    }
    Ok(())
}

/// Gives every project without one its id (a UUID, as Backend.AI's groups have).
fn fill_project_ids(conn: &Connection) -> crate::db::Result<()> {
    let mut st = conn.prepare("SELECT name FROM projects WHERE id IS NULL")?;
    let names: Vec<String> = st
        .query_map([], |r| r.get(0))?
        .collect::<crate::db::Result<_>>()?;
    for name in names {
        conn.execute(
            "UPDATE projects SET id = ?1 WHERE name = ?2",
            [uuid::Uuid::new_v4().to_string(), name],
        )?;
    }
    Ok(())
}

//! Backups of the database file: a consistent copy taken while the server runs (SQLite's
//! `VACUUM INTO`, a read transaction: writers go on), checked before it is restored.

use crate::{Result, StoreError, schema};
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// What a backup file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupInfo {
    /// Its schema version (this build's is [`schema::LATEST`]).
    pub schema_version: i64,
    /// Sessions in it, ended ones included.
    pub sessions: i64,
}

fn open_err(path: &Path) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |e| StoreError::Open {
        path: path.display().to_string(),
        source: crate::db::Error::Lite(e),
    }
}

/// Copies the database at `db` to the new file `to`, consistent as of one moment, while
/// the server may keep writing. `to` must not exist.
pub fn backup(db: &Path, to: &Path) -> Result<BackupInfo> {
    if to.exists() {
        return Err(StoreError::Backup(format!(
            "{} exists; name a new file",
            to.display()
        )));
    }
    if !db.exists() {
        return Err(StoreError::Backup(format!(
            "there is no database at {}",
            db.display()
        )));
    }
    let conn =
        Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_WRITE).map_err(open_err(db))?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    let target = to
        .to_str()
        .ok_or_else(|| StoreError::Backup(format!("{} is not a UTF-8 path", to.display())))?;
    conn.execute("VACUUM INTO ?1", [target])?;
    inspect(to)
}

/// Checks a backup (SQLite's integrity check) and says what it holds. A backup of a newer
/// schema than this build's is refused: this build could not run it.
pub fn inspect(path: &Path) -> Result<BackupInfo> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(open_err(path))?;
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .map_err(|e| StoreError::Backup(format!("{} is not a database: {e}", path.display())))?;
    if ok != "ok" {
        return Err(StoreError::Backup(format!(
            "{} is damaged: {ok}",
            path.display()
        )));
    }
    let conn = crate::db::Connection::Lite(conn);
    let schema_version = schema::version(&conn)
        .map_err(|_| StoreError::Backup(format!("{} is not a bai database", path.display())))?;
    if schema_version > schema::LATEST {
        return Err(StoreError::NewerSchema {
            found: schema_version,
            known: schema::LATEST,
        });
    }
    let sessions = conn
        .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
        .map_err(|_| StoreError::Backup(format!("{} is not a bai database", path.display())))?;
    Ok(BackupInfo {
        schema_version,
        sessions,
    })
}

/// Puts the backup `from` in place of the database at `db` (whose server must be stopped):
/// checked first, copied beside it, then renamed over it, and the old database's write-ahead
/// log removed, so the restored file is read as it is.
pub fn restore(from: &Path, db: &Path) -> Result<BackupInfo> {
    let info = inspect(from)?;
    let tmp = db.with_extension("db.restoring");
    let _ = std::fs::remove_file(&tmp);
    std::fs::copy(from, &tmp).map_err(|e| {
        StoreError::Backup(format!(
            "cannot copy {} to {}: {e}",
            from.display(),
            tmp.display()
        ))
    })?;
    for side in ["db-wal", "db-shm"] {
        let p = db.with_extension(side);
        if p.exists() {
            std::fs::remove_file(&p)
                .map_err(|e| StoreError::Backup(format!("cannot remove {}: {e}", p.display())))?;
        }
    }
    std::fs::rename(&tmp, db).map_err(|e| {
        StoreError::Backup(format!("cannot put the backup at {}: {e}", db.display()))
    })?;
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;

    #[test]
    fn a_backup_restores_every_table_and_a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("bai.db");
        let store = Store::open(&db).unwrap();
        store.meta_set("agent_id", "agent-1").unwrap();
        // Taken while the store is open, as on a running server.
        let copy = dir.path().join("backup.db");
        let info = backup(&db, &copy).unwrap();
        assert_eq!(info.schema_version, schema::LATEST);
        assert!(
            backup(&db, &copy).is_err(),
            "an existing file is not overwritten"
        );
        drop(store);

        let restored = dir.path().join("restored.db");
        restore(&copy, &restored).unwrap();
        let back = Store::open(&restored).unwrap();
        assert_eq!(
            back.meta_get("agent_id").unwrap().as_deref(),
            Some("agent-1")
        );

        let newer = dir.path().join("newer.db");
        std::fs::copy(&copy, &newer).unwrap();
        let conn = Connection::open(&newer).unwrap();
        conn.execute(
            "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
            [(schema::LATEST + 1).to_string()],
        )
        .unwrap();
        drop(conn);
        assert!(matches!(
            inspect(&newer),
            Err(StoreError::NewerSchema { .. })
        ));
        assert!(matches!(
            Store::open(&newer),
            Err(StoreError::NewerSchema { .. })
        ));
        std::fs::write(dir.path().join("junk.db"), b"not a database").unwrap();
        assert!(inspect(&dir.path().join("junk.db")).is_err());
    }
}

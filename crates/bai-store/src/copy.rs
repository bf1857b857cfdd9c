//! Moving an installation from one database to another (`baid db migrate`): every table's
//! rows, in the order the schema's foreign keys allow, into a database that holds no
//! installation yet, in one transaction; then every table compared.

use crate::db::{Connection, Engine, Value};
use crate::{Result, Store, StoreError};

/// The tables, in the order they are made (so each one's foreign keys point back): the
/// baseline's, then those migrations made after it that hold data of their own (the lease,
/// whose term agents remember, fair share's usage and shares, and the web UI's logins; not
/// `ended_counts`, which triggers keep, nor `oidc_logins`, logins under way for a few
/// minutes, which start again).
pub fn tables() -> Vec<&'static str> {
    include_str!("schema/postgres.sql")
        .lines()
        .filter_map(|l| l.trim().strip_prefix("CREATE TABLE "))
        .filter_map(|rest| rest.split([' ', '(']).next())
        .chain([
            "leases",
            "fairshare_usage",
            "fairshare_ticks",
            "fairshare_shares",
            "web_sessions",
        ])
        .collect()
}

/// Identity columns (numbered by the database): PostgreSQL's counters are moved past the
/// copied numbers.
const NUMBERED: &[(&str, &str)] = &[
    ("scheduling_history", "id"),
    ("events", "seq"),
    ("audit_log", "id"),
];

/// How many rows of one table were copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied {
    pub table: &'static str,
    pub rows: usize,
}

/// Every row of `table` at `conn`, in a stable order (sorted here, not by either engine's
/// collation).
fn rows(conn: &Connection, table: &str) -> Result<Vec<Vec<Value>>> {
    let mut st = conn.prepare(&format!("SELECT * FROM {table}"))?;
    let mut out = st
        .query_map([], |r| (0..r.len()).map(|i| r.get::<_, Value>(i)).collect())?
        .collect::<crate::db::Result<Vec<Vec<Value>>>>()?;
    out.sort_by_cached_key(|r| format!("{r:?}"));
    Ok(out)
}

/// Copies the installation at `from` into `to`, which must hold none (no user and no
/// session; its default rows are replaced by `from`'s). Both are at this build's schema
/// (opening a [`Store`] migrates it).
pub fn copy(from: &Store, to: &Store) -> Result<Vec<Copied>> {
    let users: i64 = to
        .read()
        .query_row("SELECT count(*) FROM users", [], |r| r.get(0))?;
    let sessions: i64 = to
        .read()
        .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))?;
    if users > 0 || sessions > 0 {
        return Err(StoreError::Backup(format!(
            "the destination already holds an installation ({users} users, {sessions} sessions); name a new, empty database"
        )));
    }
    let source = from.read();
    let mut dest = to.conn();
    let tx = dest.transaction()?;
    let order = tables();
    for table in order.iter().rev() {
        if *table == "meta" {
            tx.execute("DELETE FROM meta WHERE key != 'schema_version'", [])?;
        } else {
            tx.execute(&format!("DELETE FROM {table}"), [])?;
        }
    }
    let mut copied = Vec::new();
    for table in order {
        let mut n = 0;
        for row in rows(&source, table)? {
            if table == "meta" && row.first() == Some(&Value::Text("schema_version".into())) {
                continue;
            }
            let marks = (1..=row.len())
                .map(|i| format!("?{i}"))
                .collect::<Vec<_>>()
                .join(", ");
            tx.execute(&format!("INSERT INTO {table} VALUES ({marks})"), row)?;
            n += 1;
        }
        copied.push(Copied { table, rows: n });
    }
    if tx.engine() == Engine::Postgres {
        for (table, column) in NUMBERED {
            tx.query_row(
                &format!(
                    "SELECT setval(pg_get_serial_sequence('{table}', '{column}'),
                        COALESCE(MAX({column}), 0) + 1, false) FROM {table}"
                ),
                [],
                |_| Ok(()),
            )?;
        }
    }
    tx.commit()?;
    Ok(copied)
}

/// Where `a` and `b` differ, table by table (empty: every row of every table is the same).
pub fn differences(a: &Store, b: &Store) -> Result<Vec<String>> {
    let (ca, cb) = (a.read(), b.read());
    let mut out = Vec::new();
    for table in tables() {
        let (ra, rb) = (rows(&ca, table)?, rows(&cb, table)?);
        if ra.len() != rb.len() {
            out.push(format!("{table}: {} rows against {}", ra.len(), rb.len()));
        } else if let Some(i) = (0..ra.len()).find(|&i| ra[i] != rb[i]) {
            out.push(format!("{table}: {:?} against {:?}", ra[i], rb[i]));
        }
    }
    // Kept by triggers, not copied: the same where a count is not zero.
    let counts = "ended_counts WHERE n != 0";
    let (ra, rb) = (rows(&ca, counts)?, rows(&cb, counts)?);
    if ra != rb {
        out.push(format!("ended_counts: {ra:?} against {rb:?}"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_is_listed_once_with_meta_first() {
        let t = tables();
        assert_eq!(t.first(), Some(&"meta"));
        assert!(t.contains(&"sessions") && t.contains(&"dotfiles"), "{t:?}");
        let mut sorted = t.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), t.len());
    }
}

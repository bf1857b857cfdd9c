#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect
//! The two engines hold the same schema: every table with the same columns in the same
//! order, the same NOT NULLs and the same indexes. Runs in the PostgreSQL pass of the
//! tests (`BAI_TEST_STORE=postgres`); on SQLite alone there is nothing to compare with.

use bai_store::{Store, testing};
use std::collections::BTreeMap;

type Shape = BTreeMap<String, Vec<(String, bool)>>;

fn sqlite_shape() -> (Shape, BTreeMap<String, String>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bai.db");
    drop(Store::open(&path).unwrap());
    let c = rusqlite::Connection::open(&path).unwrap();
    let tables: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut shape = Shape::new();
    for t in tables {
        let mut st = c.prepare(&format!("PRAGMA table_info({t})")).unwrap();
        let cols = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(3)? != 0 || r.get::<_, i64>(5)? != 0,
                ))
            })
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        shape.insert(t, cols);
    }
    let indexes = c
        .prepare(
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    (shape, indexes)
}

fn postgres_shape(url: &str) -> (Shape, BTreeMap<String, String>) {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let mut shape = Shape::new();
    for r in c
        .query(
            "SELECT table_name::text, column_name::text, is_nullable::text FROM information_schema.columns
             WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position",
            &[],
        )
        .unwrap()
    {
        let (t, col, nullable): (String, String, String) = (r.get(0), r.get(1), r.get(2));
        shape.entry(t).or_default().push((col, nullable == "NO"));
    }
    let indexes = c
        .query(
            "SELECT indexname::text, tablename::text FROM pg_indexes
             WHERE schemaname = current_schema() AND indexname NOT LIKE '%_pkey' AND indexname NOT LIKE '%_key'",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    (shape, indexes)
}

/// A new PostgreSQL database with bai's schema, in the PostgreSQL pass (`None` on SQLite).
fn migrated_postgres() -> Option<String> {
    if !testing::on_postgres() {
        return None;
    }
    let url = testing::fresh_database().unwrap();
    drop(Store::open_postgres(&url).unwrap());
    Some(url)
}

#[test]
fn both_engines_hold_the_same_schema() {
    let Some(url) = migrated_postgres() else {
        return;
    };
    let (lite, lite_ix) = sqlite_shape();
    let (pg, pg_ix) = postgres_shape(&url);
    assert_eq!(
        lite.keys().collect::<Vec<_>>(),
        pg.keys().collect::<Vec<_>>(),
        "tables"
    );
    for (t, cols) in &lite {
        let names = |c: &Vec<(String, bool)>| c.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(names(cols), names(&pg[t]), "columns of {t}");
        for ((name, lite_nn), (_, pg_nn)) in cols.iter().zip(&pg[t]) {
            // A TEXT primary key may be NULL in SQLite (a quirk); PostgreSQL's never is.
            assert!(lite_nn <= pg_nn, "NOT NULL of {t}.{name}");
        }
    }
    assert_eq!(lite_ix, pg_ix, "indexes");
}

/// A PostgreSQL database of a newer schema than this build's is refused at open.
#[test]
fn a_newer_postgres_schema_is_refused() {
    let Some(url) = migrated_postgres() else {
        return;
    };
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    c.execute(
        "UPDATE meta SET value = $1 WHERE key = 'schema_version'",
        &[&(bai_store::SCHEMA_VERSION + 1).to_string()],
    )
    .unwrap();
    assert!(matches!(
        Store::open_postgres(&url),
        Err(bai_store::StoreError::NewerSchema { .. })
    ));
}

/// An unreachable server is an error at open, naming the address without its password.
#[test]
fn an_unreachable_server_is_one_error() {
    let e = Store::open_database("postgres://bai:s3cret@127.0.0.1:1/bai")
        .err()
        .expect("nothing listens on port 1");
    let text = e.to_string();
    assert!(text.contains("127.0.0.1:1"), "{text}");
    assert!(!text.contains("s3cret"), "{text}");
}

/// A connection PostgreSQL dropped (a restart, a killed backend) is made again: the next
/// read and write of the store succeed, and nothing committed is lost.
#[test]
fn dropped_connections_are_made_again() {
    if !testing::on_postgres() {
        return;
    }
    let url = testing::fresh_database().unwrap();
    let store = Store::open_postgres(&url).unwrap();
    store.meta_set("k", "before").unwrap();
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let killed: i64 = c
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(killed >= 1, "the store's connections were found");
    assert_eq!(store.meta_get("k").unwrap().as_deref(), Some("before"));
    store.meta_set("k", "after").unwrap();
    assert_eq!(store.meta_get("k").unwrap().as_deref(), Some("after"));
}

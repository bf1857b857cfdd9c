//! Stores for tests, on the engine the run asks for: an in-memory SQLite database by
//! default; with `BAI_TEST_STORE=postgres`, a new database of its own in the PostgreSQL
//! cluster at `BAI_TEST_POSTGRES` (`scripts/test-postgres.sh` starts one and prints it).

use crate::{Result, Store};

/// The cluster `scripts/test-postgres.sh` starts.
const DEFAULT_CLUSTER: &str = "postgres://postgres@127.0.0.1:55432/postgres";

/// A new single-node interactive session of `access_key` (user `user_id`), asking for one
/// core and 1 GiB of `bai/python:3.11-bookworm`, PENDING once inserted: what tests and
/// benchmarks start from, changing the fields they care about.
pub fn new_session(name: &str, access_key: &str, user_id: &str) -> crate::NewSession {
    use bai_core::resources::ResourceSlots;
    crate::NewSession::new(
        name,
        crate::ResolvedSpec {
            access_key: access_key.into(),
            user_id: user_id.into(),
            domain_name: "default".into(),
            group_name: "default".into(),
            scaling_group: "default".into(),
            session_type: bai_core::status::SessionType::Interactive,
            image: "bai/python:3.11-bookworm".into(),
            tag: None,
            priority: 10,
            starts_at: None,
            batch_timeout: None,
            startup_command: None,
            bootstrap_script: None,
            environ: Default::default(),
            requested_slots: ResourceSlots {
                cpu_milli: 1000,
                mem: 1 << 30,
                accel: Default::default(),
            },
            shmem: 64 << 20,
            designated_agent: None,
            dependencies: Vec::new(),
            requeue: false,
            mounts: Vec::new(),
            preopen_ports: Vec::new(),
            cluster_mode: Default::default(),
            cluster_size: 1,
        },
    )
}

/// Whether this test run's stores are PostgreSQL's.
pub fn on_postgres() -> bool {
    std::env::var("BAI_TEST_STORE").is_ok_and(|v| v == "postgres")
}

/// A new, empty, migrated store for one test.
pub fn store() -> Result<Store> {
    if !on_postgres() {
        return Store::open_in_memory();
    }
    Store::open_postgres(&fresh_database()?)
}

/// A new store for one test (as [`store`]) with one user: `u1`, `user@bai.test`, role
/// `user`, keypair `AKUSER` / `secret`, a member of the default project.
pub fn store_with_user() -> Result<Store> {
    let store = store()?;
    store.create_user_with_keypair(
        &crate::UserRow {
            id: "u1".into(),
            email: "user@bai.test".into(),
            role: "user".into(),
        },
        "AKUSER",
        "secret",
        false,
    )?;
    Ok(store)
}

/// Makes a database no other test uses and returns its URL.
pub fn fresh_database() -> Result<String> {
    let cluster = std::env::var("BAI_TEST_POSTGRES").unwrap_or_else(|_| DEFAULT_CLUSTER.into());
    let name = format!("bai_test_{}", uuid::Uuid::new_v4().simple());
    let admin = crate::connect_postgres(&cluster)?;
    admin.batch(&format!("CREATE DATABASE {name}"))?;
    Ok(with_database(&cluster, &name))
}

/// `url` naming database `name` instead of its own.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let host_end = base.find("://").map_or(0, |i| i + 3);
    let base = match base[host_end..].find('/') {
        Some(slash) => &base[..host_end + slash],
        None => base,
    };
    match query {
        Some(q) => format!("{base}/{name}?{q}"),
        None => format!("{base}/{name}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_database_name_is_replaced() {
        assert_eq!(
            super::with_database("postgres://u@h:1/postgres", "x"),
            "postgres://u@h:1/x"
        );
        assert_eq!(
            super::with_database("postgres://u@h/db?sslmode=disable", "x"),
            "postgres://u@h/x?sslmode=disable"
        );
        assert_eq!(
            super::with_database("postgres://u@h", "x"),
            "postgres://u@h/x"
        );
    }
}

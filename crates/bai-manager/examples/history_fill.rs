//! Fills a database with ended sessions, for the history benchmark (bench/history.sh): a site
//! that keeps every session it ever ran.
//!
//!   history_fill DATABASE ACCESS_KEY N
//!
//! DATABASE is what `baid --database` takes (an SQLite file or a postgres:// URL) of a manager
//! that has run once and is stopped. Each session is written through the store's own paths, as
//! the manager writes it: inserted PENDING (its kernel, history record and event), then moved
//! to CANCELLED or, for most, through every phase of a launch and RUNNING to TERMINATED, each move with its
//! history record and events. Prints one JSON line: how many and how long.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may stop on a failure

use bai_core::Reason;
use bai_core::status::{SessionStatus, SessionType};
use bai_store::{NewSession, StatusChange, Store};
use std::time::Instant;

fn session(i: usize, access_key: &str, user_id: &str) -> NewSession {
    let mut n = bai_store::testing::new_session(&format!("hist-{i:06}"), access_key, user_id);
    n.spec.session_type = if i.is_multiple_of(5) {
        SessionType::Batch
    } else {
        SessionType::Interactive
    };
    n
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [database, access_key, n] = args.as_slice() else {
        anyhow::bail!("usage: history_fill DATABASE ACCESS_KEY N");
    };
    let n: usize = n.parse()?;
    let store = Store::open_database(database)?;
    let user_id = store
        .keypair(access_key)?
        .ok_or_else(|| anyhow::anyhow!("no keypair {access_key}"))?
        .user_id;
    let t = Instant::now();
    for i in 0..n {
        let s = session(i, access_key, &user_id);
        store.insert_session(&s)?;
        let steps: &[(SessionStatus, SessionStatus, Reason)] = if i.is_multiple_of(10) {
            &[(
                SessionStatus::Pending,
                SessionStatus::Cancelled,
                Reason::UserRequested,
            )]
        } else {
            &[
                (
                    SessionStatus::Pending,
                    SessionStatus::Scheduled,
                    Reason::ScheduledOn("bench-agent".into()),
                ),
                (
                    SessionStatus::Scheduled,
                    SessionStatus::Preparing,
                    Reason::Preparing,
                ),
                (
                    SessionStatus::Preparing,
                    SessionStatus::Prepared,
                    Reason::ImageReady,
                ),
                (
                    SessionStatus::Prepared,
                    SessionStatus::Creating,
                    Reason::Creating,
                ),
                (
                    SessionStatus::Creating,
                    SessionStatus::Running,
                    Reason::Running,
                ),
                (
                    SessionStatus::Running,
                    SessionStatus::Terminating,
                    Reason::UserRequested,
                ),
                (
                    SessionStatus::Terminating,
                    SessionStatus::Terminated,
                    Reason::UserRequested,
                ),
            ]
        };
        for (from, to, reason) in steps {
            let mut change = StatusChange::new(*from, *to, reason.clone(), "bench");
            if *to == SessionStatus::Scheduled {
                change = change.agent("bench-agent");
            }
            store
                .cas_status(s.id, &change)?
                .ok_or_else(|| anyhow::anyhow!("session {} left {from}", s.id))?;
        }
    }
    println!(
        "{{\"sessions\": {n}, \"fill_s\": {:.1}}}",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

//! Scheduler benchmark (issue "Scheduler"): N PENDING sessions onto M dummy agents with DRF +
//! dispersed, through the manager's real scheduling pass (snapshot from SQLite → bai-sched
//! pipeline → one transaction with every PENDING → SCHEDULED compare-and-set, its history
//! record with sub-steps and its event). Baseline, same run, same data: the bare SQLite
//! compare-and-set of the same rows in one transaction (no scheduling, no history, no
//! events) — the floor any persistent scheduler pays.
//!
//!   cargo run --profile release -p bai-manager --example sched_bench -- [SESSIONS] [AGENTS] [--link]
//!
//! Prints one JSON line. Launching is switched off (`launch_disabled`) so the number is the
//! scheduler's, not the dummy agents'.
//!
//! With `--postgres` (issue 38) the store is a new database in the PostgreSQL cluster at
//! `BAI_TEST_POSTGRES` (`scripts/test-postgres.sh`), and the baseline the bare compare-and-set
//! of the same rows there, in one transaction.
//!
//! With `--tree` (issue 58: fair share over a large account tree) each session belongs to a
//! user of its own, in 200 projects of 10 domains (10,000 users at 10,000 sessions), every
//! account with a decayed usage of its own in the store and some domains and projects given
//! other shares, so the fair-share pass ranks over the whole tree (`--fairshare --tree`).
//!
//! With `--link` (issue "many machines": the scheduler with 1,000 agents connected) the
//! same pass runs a second time, in the same run, on a manager whose agents are not in its
//! process but joined over the real transport: each dummy agent dials the manager's agent
//! listener on loopback with a join token (`bai_link::join::run`, what `baid agent` runs:
//! TLS, pinned certificate, hello, heartbeats every 10 s) and the pass places onto them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may stop on a failure

use bai_agent::{DummyAgent, DummyAgentConfig};
use bai_control::scheduler;
use bai_core::resources::ResourceSlots;
use bai_ground::config::ManagerConfig;
use bai_manager::Manager;
use bai_store::{NewSession, ResourceGroupRow, Store};
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

fn dummy(id: String) -> DummyAgent {
    DummyAgent::new(DummyAgentConfig {
        id,
        scaling_group: "default".into(),
        capacity: ResourceSlots {
            cpu_milli: 16_000,
            mem: 64 << 30,
            accel: Default::default(),
        },
        start_delay: Duration::ZERO,
        images: vec!["bai/python:3.11-bookworm".into()],
    })
}

/// A new store: SQLite in `dir`, or a new PostgreSQL database.
fn open(dir: &std::path::Path, postgres: bool) -> anyhow::Result<Store> {
    std::fs::create_dir_all(dir)?;
    Ok(if postgres {
        // As a leading manager: the lease taken, every write fenced by its term.
        let store = Store::open_postgres(&bai_store::testing::fresh_database()?)?;
        let bid = bai_store::LeaseBid {
            holder: "sched-bench".into(),
            address: String::new(),
            version: String::new(),
        };
        let ttl = std::time::Duration::from_secs(3600);
        if let bai_store::Claim::Won(lease) = store.lease_claim("manager", &bid, ttl)? {
            store.fence("manager", lease.term)?;
        }
        store
    } else {
        Store::open(&dir.join("bai.db"))?
    })
}

/// A manager over a fresh store of `sessions` PENDING sessions in a DRF (or, `--fairshare`,
/// fair-share) + dispersed group.
fn manager(dir: &std::path::Path, sessions: usize, postgres: bool) -> anyhow::Result<Arc<Manager>> {
    let store = Arc::new(open(dir, postgres)?);
    let mut g = ResourceGroupRow::new("default");
    g.scheduler = if std::env::args().any(|a| a == "--fairshare") {
        "fairshare".into()
    } else {
        "drf".into()
    };
    g.selector = "dispersed".into();
    store.put_resource_group(&g)?;
    fill(&store, sessions);
    let config = ManagerConfig {
        data_dir: dir.to_path_buf(),
        launch_disabled: true,
        ..Default::default()
    };
    Ok(Manager::new(store, config))
}

/// Passes until every session is placed; returns the seconds and how many were placed.
fn place(m: &Arc<Manager>, sessions: usize) -> anyhow::Result<(f64, usize, usize)> {
    let t = Instant::now();
    let mut placed = 0;
    let mut passes = 0;
    while placed < sessions && passes < 100 {
        placed += scheduler::schedule_pass(&m.scheduler)?.scheduled;
        passes += 1;
    }
    Ok((t.elapsed().as_secs_f64(), placed, passes))
}

/// `agents` dummy agents that join `m` over the link (one connection each, in this
/// process), once all are connected.
async fn join_over_the_link(m: &Arc<Manager>, agents: usize) -> anyhow::Result<()> {
    use bai_link::join::{JoinConfig, run};
    let addr = bai_control::remote::listener::start(&m.remote, "127.0.0.1:0".parse()?)
        .await
        .map_err(anyhow::Error::msg)?;
    let (token, _) = bai_control::remote::admin::create_token(&m.remote, "default", "bench")
        .map_err(|p| anyhow::anyhow!("{p:?}"))?;
    let creds = m.config.data_dir.join("credentials");
    std::fs::create_dir_all(&creds)?;
    for i in 0..agents {
        let id = format!("linked-{i:04}");
        let config = JoinConfig {
            managers: vec![addr.to_string()],
            token: token.clone(),
            agent_id: id.clone(),
            group: None,
            credentials: Arc::new(bai_link::credential::CredentialFile(creds.join(&id))),
            heartbeat: Duration::from_secs(10),
            keepalive: Duration::from_secs(10),
            version: "bench".into(),
        };
        let agent: Arc<dyn bai_core::agent::AgentRpc> = Arc::new(dummy(id));
        tokio::spawn(async move {
            if let Err(e) = run(config, agent).await {
                eprintln!("{e}");
            }
        });
        if i % 50 == 49 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let t = Instant::now();
    loop {
        let up = m.agents.all().iter().filter(|a| a.schedulable()).count();
        if up >= agents {
            return Ok(());
        }
        anyhow::ensure!(
            t.elapsed() < Duration::from_secs(600),
            "only {up} of {agents} agents joined"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Domains and projects per domain of the `--tree` accounts.
const TREE_DOMAINS: usize = 10;
const TREE_PROJECTS: usize = 20;

fn tree() -> bool {
    std::env::args().any(|a| a == "--tree")
}

/// The account (domain, project, user) of session `i`.
fn account(i: usize) -> (String, String, String) {
    if tree() {
        let d = i % TREE_DOMAINS;
        let p = (i / TREE_DOMAINS) % TREE_PROJECTS;
        (format!("d{d}"), format!("d{d}-p{p}"), format!("u{i:05}"))
    } else {
        ("default".into(), "default".into(), format!("u{}", i % 10))
    }
}

fn session(i: usize) -> NewSession {
    let (domain, project, user) = account(i);
    let mut s = bai_store::testing::new_session(
        &format!("bench-{i:05}"),
        &format!("AKBENCH{:02}", i % 10),
        &user,
    );
    s.spec.domain_name = domain;
    s.spec.group_name = project;
    s
}

fn fill(store: &Store, n: usize) -> Vec<Uuid> {
    let ids = (0..n)
        .map(|i| {
            let s = session(i);
            store.insert_session(&s).expect("insert");
            s.id
        })
        .collect();
    if tree() {
        // Every account has used something (hours of a core, varied), and some domains and
        // projects hold other shares than the default.
        let now = chrono::Utc::now().timestamp_millis();
        let rows: Vec<_> = (0..n)
            .map(|i| {
                let (domain, project, user_id) = account(i);
                bai_store::UsageRow {
                    resource_group: "default".into(),
                    domain,
                    project,
                    user_id,
                    usage: (i % 97) as f64 * 3600.0,
                    updated_ms: now - (i % 13) as i64 * 3_600_000,
                }
            })
            .collect();
        store
            .charge_fairshare("default", &rows, now)
            .expect("usage");
        for d in 0..TREE_DOMAINS {
            let shares = Some(1.0 + (d % 3) as f64);
            store
                .set_fairshare_share("domain", &format!("d{d}"), shares)
                .expect("share");
            store
                .set_fairshare_share("project", &format!("d{d}-p0"), Some(3.0))
                .expect("share");
        }
    }
    ids
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sessions = args.first().copied().unwrap_or(10_000);
    let agents = args.get(1).copied().unwrap_or(1_000);
    let link = std::env::args().any(|a| a == "--link");
    let postgres = std::env::args().any(|a| a == "--postgres");
    let dir = tempfile::tempdir()?;

    // bai: the manager's pass.
    let m = manager(&dir.path().join("inproc"), sessions, postgres)?;
    for i in 0..agents {
        m.agents
            .register(&m.store, Arc::new(dummy(format!("dummy-{i:04}"))))
            .await?;
    }
    let (bai_s, placed, passes) = place(&m, sessions)?;
    drop(m);
    // The same with the agents connected over the link.
    let linked = if link {
        let m = manager(&dir.path().join("link"), sessions, postgres)?;
        join_over_the_link(&m, agents).await?;
        // Heartbeats go on meanwhile.
        let (s, placed, _) = place(&m, sessions)?;
        anyhow::ensure!(
            placed == sessions,
            "placed {placed} of {sessions} over the link"
        );
        Some(s)
    } else {
        None
    };

    // Baseline: the same rows, a bare compare-and-set in one transaction.
    let base_s = if postgres {
        // The sync client runs its own runtime: off this one's thread.
        std::thread::spawn(move || baseline_postgres(sessions, agents))
            .join()
            .map_err(|_| anyhow::anyhow!("the PostgreSQL baseline panicked"))??
    } else {
        baseline_sqlite(&dir.path().join("baseline"), sessions, agents)?
    };

    let link_fields = linked
        .map(|s| {
            format!(
                ", \"link_s\": {s:.4}, \"link_placements_per_s\": {:.0}, \"link_ratio\": {:.2}",
                sessions as f64 / s,
                s / bai_s
            )
        })
        .unwrap_or_default();
    let engine = if postgres { "postgres" } else { "sqlite" };
    let accounts = if tree() { sessions } else { 10 };
    println!(
        "{{\"engine\": \"{engine}\", \"accounts\": {accounts}, \"sessions\": {sessions}, \"agents\": {agents}, \"placed\": {placed}, \"passes\": {passes}, \"bai_s\": {bai_s:.4}, \"placements_per_s\": {:.0}, \"baseline_s\": {base_s:.4}, \"baseline_per_s\": {:.0}, \"ratio\": {:.2}{link_fields}}}",
        placed as f64 / bai_s,
        sessions as f64 / base_s,
        bai_s / base_s
    );
    Ok(())
}

const BASELINE_CAS: &str =
    "UPDATE sessions SET status = 'SCHEDULED', agent_id = ?2, status_changed = ?3
     WHERE id = ?1 AND status = 'PENDING'";

/// The bare SQLite compare-and-set of `sessions` rows in one transaction (seconds).
fn baseline_sqlite(dir: &std::path::Path, sessions: usize, agents: usize) -> anyhow::Result<f64> {
    let base_ids = fill(&open(dir, false)?, sessions);
    let mut conn = rusqlite::Connection::open(dir.join("bai.db"))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    let t = Instant::now();
    let tx = conn.transaction()?;
    {
        let mut st = tx.prepare(BASELINE_CAS)?;
        let now = chrono::Utc::now().to_rfc3339();
        for (i, id) in base_ids.iter().enumerate() {
            st.execute(rusqlite::params![
                id.to_string(),
                format!("dummy-{:04}", i % agents),
                now
            ])?;
        }
    }
    tx.commit()?;
    Ok(t.elapsed().as_secs_f64())
}

/// The same on PostgreSQL, over one connection of the `postgres` client (seconds).
fn baseline_postgres(sessions: usize, agents: usize) -> anyhow::Result<f64> {
    let url = bai_store::testing::fresh_database()?;
    let base_ids = fill(&Store::open_postgres(&url)?, sessions);
    let mut client = postgres::Client::connect(&url, postgres::NoTls)?;
    let t = Instant::now();
    let mut tx = client.transaction()?;
    let st = tx.prepare(&BASELINE_CAS.replace('?', "$"))?;
    let now = chrono::Utc::now().to_rfc3339();
    for (i, id) in base_ids.iter().enumerate() {
        tx.execute(
            &st,
            &[&id.to_string(), &format!("dummy-{:04}", i % agents), &now],
        )?;
    }
    tx.commit()?;
    Ok(t.elapsed().as_secs_f64())
}

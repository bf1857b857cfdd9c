//! The nemesis run (issue 38): operations through both managers while the leader is killed,
//! paused or cut from a restarting PostgreSQL, again and again.

use super::{Cluster, cluster_on, containers, one_container_each, refs};
use bai_e2e::{Server, bin, poll};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The statuses a session may rest in once the faults stop.
const SETTLED: &[&str] = &["RUNNING", "TERMINATED", "CANCELLED", "ERROR"];

/// `bai ARGS` as `account` against `endpoint`, with no input.
fn bai_at(account: &bai_e2e::Account, endpoint: &str, args: &[&str]) -> bai_e2e::Run {
    let mut cmd = Command::new(bin("bai"));
    cmd.args(args).stdin(Stdio::null());
    for (k, v) in &account.at(endpoint).vars {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run bai");
    bai_e2e::Run::of(out, args.join(" "))
}

/// The address the lease names now, if it is live.
fn leader_address(url: &str) -> Option<String> {
    let mut db = postgres::Client::connect(url, postgres::NoTls).ok()?;
    let row = db
        .query_opt(
            "SELECT address FROM leases WHERE name = 'manager'
             AND expires_ms > CAST(extract(epoch FROM clock_timestamp()) * 1000 AS BIGINT)",
            &[],
        )
        .ok()??;
    Some(row.get(0))
}

/// The test's sessions as the database has them: (name, status, status_info).
fn nemesis_sessions(url: &str) -> Vec<(String, String, String)> {
    let mut db = postgres::Client::connect(url, postgres::NoTls).unwrap();
    db.query(
        "SELECT name, status, COALESCE(status_info, '') FROM sessions
         WHERE name LIKE 'nem-%' ORDER BY name",
        &[],
    )
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1), r.get(2)))
    .collect()
}

/// The nemesis run: 300 operations, 152 creates and the removal of all but the last 4
/// (through the two managers' addresses in turn, queued without waiting for the start, so
/// that many are in flight at each fault), while every few seconds the leader is killed (and
/// started again as a standby), or paused past its lease (then let go on), or PostgreSQL is
/// restarted under them (a cluster of the test's own), at least twice each. Afterwards every
/// session is RUNNING, TERMINATED or ended with a reason, each exactly once; each running one
/// has exactly one container and no other container is left; the agent's allocation is
/// exactly what the running sessions hold.
#[test]
fn sessions_survive_a_leader_killed_or_paused_every_few_seconds() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    const CREATES: usize = 152;
    const LIVE: usize = 4;
    /// At least this many faults of each kind, however quick the creates are.
    const FAULTS: usize = 2;
    let pg = Arc::new(bai_e2e::pg::PrivatePostgres::start());
    let c = cluster_on(39, &pg.url, &pg.url);
    let url = c.envs[0][0].1.clone();
    let endpoints = [c.a.endpoint.clone(), c.b.endpoint.clone()];
    let admin = c.a.admin.clone();
    let ports = [c.a.port(), c.b.port()];
    let addresses = ports.map(|p| format!("127.0.0.1:{p}"));
    let Cluster {
        a,
        b,
        agent,
        machine,
        envs,
    } = c;
    let servers = Arc::new(Mutex::new([Some(a), Some(b)]));
    let stop = Arc::new(AtomicBool::new(false));
    let (kills, pauses) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let restarts = Arc::new(AtomicUsize::new(0));
    let leader_now = {
        let (url, addresses) = (url.clone(), addresses.clone());
        move || -> usize {
            poll(Duration::from_secs(120), Duration::from_millis(100), || {
                let a = leader_address(&url)?;
                addresses.iter().position(|x| *x == a)
            })
            .expect("no manager leads")
        }
    };
    let nemesis = {
        let (servers, stop, kills, pauses) =
            (servers.clone(), stop.clone(), kills.clone(), pauses.clone());
        let (restarts, pg) = (restarts.clone(), pg.clone());
        let (addresses, leader_now, url) = (addresses.clone(), leader_now.clone(), url.clone());
        std::thread::spawn(move || {
            let mut round = 0;
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_secs(5));
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let l = leader_now();
                let other = 1 - l;
                round += 1;
                let took_over = || {
                    let deadline = Instant::now() + Duration::from_secs(120);
                    while leader_address(&url).as_deref() != Some(addresses[other].as_str()) {
                        if Instant::now() > deadline {
                            // What each manager said last, to see why.
                            let mut g = servers.lock().unwrap();
                            let said: Vec<String> = g
                                .iter()
                                .flatten()
                                .map(|s| {
                                    let log = s.log();
                                    let tail: Vec<&str> = log.lines().rev().take(30).collect();
                                    let out = s.output();
                                    let printed: Vec<&str> = out.lines().rev().take(4).collect();
                                    format!(
                                        "--- {} ---\n{}\n--- its output ---\n{}",
                                        s.endpoint,
                                        tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
                                        printed.into_iter().rev().collect::<Vec<_>>().join("\n")
                                    )
                                })
                                .collect();
                            let procs: Vec<String> = g
                                .iter()
                                .flatten()
                                .map(|s| bai_e2e::diagnose::process_state(s.pid()))
                                .collect();
                            // Reaped now: how each that ended did.
                            let ended: Vec<String> = g
                                .iter_mut()
                                .flatten()
                                .map(|s| {
                                    let how = s.ended();
                                    format!("{}: {how:?}", s.endpoint)
                                })
                                .collect();
                            panic!(
                                "the standby did not take over (round {round}, lease {:?})\nended: {}\n{}\n{}\n{}",
                                leader_address(&url),
                                ended.join(", "),
                                said.join("\n"),
                                procs.join("\n"),
                                bai_e2e::diagnose::database_state(&url)
                            );
                        }
                        std::thread::sleep(Duration::from_millis(100));
                    }
                };
                if round % 3 == 0 {
                    // The database restarted under both managers: every connection ends.
                    pg.restart();
                    restarts.fetch_add(1, Ordering::SeqCst);
                    leader_now();
                } else if round % 3 == 1 {
                    let killed = servers.lock().unwrap()[l].take().expect("the leader runs");
                    drop(killed.crash());
                    kills.fetch_add(1, Ordering::SeqCst);
                    took_over();
                    let mut g = servers.lock().unwrap();
                    let leader = g[other].as_ref().expect("the new leader runs");
                    let again = Server::start_standby(&refs(&envs[l]), ports[l], leader);
                    g[l] = Some(again);
                } else {
                    servers.lock().unwrap()[l]
                        .as_ref()
                        .expect("the leader runs")
                        .signal("-STOP");
                    pauses.fetch_add(1, Ordering::SeqCst);
                    took_over();
                    servers.lock().unwrap()[l]
                        .as_ref()
                        .expect("the paused one")
                        .signal("-CONT");
                }
            }
        })
    };

    let (mut create_retries, mut rm_retries) = (0, 0);
    let mut created = 0;
    while created < CREATES
        || kills.load(Ordering::SeqCst) < FAULTS
        || pauses.load(Ordering::SeqCst) < FAULTS
        || restarts.load(Ordering::SeqCst) < FAULTS
    {
        let i = created;
        created += 1;
        assert!(created < 1000, "the faults did not come");
        let name = format!("nem-{i:03}");
        // Through both managers in turn; a call a fault cut off goes to the other one.
        let mut at = i % 2;
        let mut until_done = |args: &[&str], done: &dyn Fn(&bai_e2e::Run) -> bool| {
            let deadline = Instant::now() + Duration::from_secs(180);
            let mut again = 0;
            loop {
                let r = bai_at(&admin, &endpoints[at], args);
                if done(&r) {
                    return again;
                }
                assert!(Instant::now() < deadline, "{r:#?}");
                assert!(
                    !nemesis.is_finished(),
                    "the nemesis stopped (see its panic)"
                );
                again += 1;
                at = 1 - at;
                std::thread::sleep(Duration::from_millis(500));
            }
        };
        // A create whose answer was lost and that is sent again finds its session.
        create_retries += until_done(
            &[
                "start",
                "-t",
                &name,
                "--enqueue-only",
                "-r",
                "cpu=0.25",
                "-r",
                "mem=128m",
                "python",
            ],
            &|r| r.ok() || r.stderr.contains("already have a live session"),
        );
        if i >= LIVE {
            let old = format!("nem-{:03}", i - LIVE);
            rm_retries += until_done(&["rm", &old], &|r| r.ok() || r.stderr.contains("not found"));
        }
    }
    stop.store(true, Ordering::SeqCst);
    nemesis.join().expect("the nemesis");

    // Settled: no session left between two statuses.
    let rows = poll(Duration::from_secs(300), Duration::from_millis(500), || {
        let rows = nemesis_sessions(&url);
        rows.iter()
            .all(|(_, st, _)| SETTLED.contains(&st.as_str()))
            .then_some(rows)
    })
    .unwrap_or_else(|| panic!("sessions still moving: {:?}", nemesis_sessions(&url)));
    // Each create made one session.
    assert_eq!(rows.len(), created, "{rows:?}");
    let mut running = Vec::new();
    for (i, (name, status, info)) in rows.iter().enumerate() {
        match status.as_str() {
            "RUNNING" => {
                assert!(i >= created - LIVE, "{name} was removed and runs: {rows:?}");
                running.push(name.as_str());
            }
            "TERMINATED" | "CANCELLED" => {}
            _ => assert!(!info.is_empty(), "{name} ended {status} without a reason"),
        }
    }
    let g = servers.lock().unwrap();
    let s = g.iter().flatten().next().expect("a manager runs");
    one_container_each(&machine, s, &running);
    assert_eq!(
        containers(&machine, "node-ha"),
        running.len(),
        "containers left"
    );
    let agents = bai_e2e::remote::agents(s);
    let node = agents
        .iter()
        .find(|a| a.id == "node-ha")
        .expect("the agent");
    let used_cpu: f64 = node.used.cpu.parse().expect("a number of cores");
    let held = 0.25 * running.len() as f64;
    assert!(
        (used_cpu - held).abs() < 1e-9,
        "used {used_cpu} for {held}: {node:?}"
    );
    let ended = rows.iter().filter(|r| r.1 != "RUNNING").count();
    eprintln!(
        "nemesis: {created} creates, {} removals, {} leader kills, {} leader pauses, {} database restarts; {create_retries} creates and {rm_retries} removals sent again; {} RUNNING, {ended} ended; 0 lost, 0 doubled, {} containers for {} running sessions",
        created - LIVE,
        kills.load(Ordering::SeqCst),
        pauses.load(Ordering::SeqCst),
        restarts.load(Ordering::SeqCst),
        running.len(),
        containers(&machine, "node-ha"),
        running.len()
    );
    drop(agent);
    drop(g);
    drop(servers);
    drop(pg);
}

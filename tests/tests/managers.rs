//! Two managers on one PostgreSQL database (issue 38). Manager A leads; manager B stands by
//! and relays its address to A; the agent, in a network namespace of its own, lists both
//! (`baid agent --manager A,B`). A session made through one manager is listed, run,
//! followed, opened (the web terminal and Jupyter) and removed through the other. Then the
//! leader is lost, two ways:
//!
//! - SIGKILL: B takes the lease once it expired and leads; the agent follows it; sessions
//!   made before run on, new ones are placed once.
//! - SIGSTOP past its lease: B takes over as above; when A runs again its writes are
//!   fenced, it starts again as a standby, and nothing it held is placed or ended twice.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::apps::jupyter_through_app;
use bai_e2e::cut::CutLink;
use bai_e2e::netns::Machine;
use bai_e2e::remote::{
    Agent, IMAGE, agent_status, containers, join_token, query, start_session, ttyd_page,
    wait_status,
};
use bai_e2e::{Server, bin, free_port};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A manager of `url` without an agent of its own, listening for agents on every address.
fn manager_env(url: &str, agent_port: u16, app_ports: &str) -> Vec<(String, String)> {
    vec![
        ("BAI_DATABASE".into(), url.into()),
        ("BAI_NO_LOCAL_AGENT".into(), "true".into()),
        ("BAI_AGENT_LISTEN".into(), format!("0.0.0.0:{agent_port}")),
        ("BAI_SCHEDULE_TICK_MS".into(), "200".into()),
        ("BAI_APP_PORTS".into(), app_ports.into()),
        ("BAI_AGENT_LOST_AFTER".into(), "20s".into()),
        ("BAI_AGENT_GONE_AFTER".into(), "600s".into()),
    ]
}

fn refs(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

struct Cluster {
    a: Server,
    b: Server,
    agent: Agent,
    machine: Machine,
    /// Each manager's environment (to start it again as it was).
    envs: [Vec<(String, String)>; 2],
}

/// Leader A, standby B, one agent on machine `index` that knows both.
fn cluster(index: u8) -> Cluster {
    let url = bai_store::testing::fresh_database().expect("a database in the test cluster");
    cluster_on(index, &url, &url)
}

/// [`cluster`] with A reaching the database at `url_a` and B at `url_b` (one database).
fn cluster_on(index: u8, url_a: &str, url_b: &str) -> Cluster {
    cluster_with(index, url_a, url_b, &[])
}

/// [`cluster_on`] with more of A's environment.
fn cluster_with(index: u8, url_a: &str, url_b: &str, more_a: &[(&str, &str)]) -> Cluster {
    let (pa, pb) = (free_port(), free_port());
    let mut env_a = manager_env(url_a, pa, "30600-30619");
    env_a.extend(more_a.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let envs = [env_a, manager_env(url_b, pb, "30620-30639")];
    let a = Server::start_with(&refs(&envs[0]));
    let b = Server::start_standby(&refs(&envs[1]), free_port(), &a);
    assert!(
        b.output().contains("bai stands by"),
        "B stands by: {}",
        b.output()
    );
    let token = join_token(&a);
    let machine = Machine::start(index);
    machine.load_image(IMAGE);
    let host = machine.host_addr();
    let agent = Agent::start_at(
        &machine,
        "node-ha",
        &format!("{host}:{pa},{host}:{pb}"),
        &token,
        &[],
    );
    wait_status(&a, "node-ha", "ALIVE", 120);
    Cluster {
        a,
        b,
        agent,
        machine,
        envs,
    }
}

/// Waits until `s` (a standby until now) leads: its banner is printed.
fn wait_leads(s: &Server) {
    s.wait_for(60, "the standby to lead", || {
        s.output().contains("Stop with Ctrl-C").then_some(())
    });
}

/// Every session of the test's, and their containers on the agent's engine: each running
/// session has exactly one.
fn one_container_each(machine: &Machine, s: &Server, names: &[&str]) {
    for name in names {
        let info = s.info(&s.admin, name);
        assert_eq!(info["status"], "RUNNING", "{name}: {info:#}");
        let id = info["id"].as_str().unwrap_or("");
        let filter = format!("label=ai.bai.session={id}");
        let out = machine.docker(&["ps", "-aq", "--filter", &filter]);
        let n = String::from_utf8_lossy(&out.stdout).lines().count();
        assert_eq!(n, 1, "containers of {name}");
    }
}

#[test]
fn any_manager_serves_and_a_killed_leader_is_replaced() {
    let c = cluster(36);
    let (a, b) = (&c.a, &c.b);

    // Made through B (relayed to A), listed and run through A.
    start_session(b, "ha-1", &[]);
    let listed = a.bai(&a.admin, &["ps"]);
    assert!(listed.stdout.contains("ha-1"), "{listed:#?}");
    assert_eq!(query(a, "ha-1", "print(6 * 7)"), "42\n");
    // Made through A; B lists it, runs code in it, opens its web terminal.
    start_session(a, "ha-2", &[]);
    assert_eq!(query(b, "ha-2", "print('via b')"), "via b\n");
    let page = ttyd_page(b, "ha-2");
    assert!(page.contains("200"), "{page}");
    // Jupyter through B's app proxy (relayed to A's): a kernel runs code.
    assert_eq!(jupyter_through_app(b, &b.admin, "ha-2").trim(), "42");
    // B's event stream sees a session A makes: `bai events` through B, then a start on A.
    let mut events = b
        .bai_command(&b.admin, &["events", "ha-3", "--wait", "session_started"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bai events");
    start_session(a, "ha-3", &[]);
    let mut seen = String::new();
    events
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut seen)
        .unwrap();
    assert!(events.wait().unwrap().success(), "{seen}");
    assert!(seen.contains("session_started"), "{seen}");
    // Removed through B.
    b.bai(&b.admin, &["rm", "ha-3"]).expect_ok();
    a.wait_terminated(&a.admin, "ha-3", 120);

    // Every session's events, followed through B across the failover: the stream that B
    // relayed breaks off with A and `bai events` opens it again after its last event id.
    let followed = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (followed.path().join("out"), followed.path().join("err"));
    let mut follow = b
        .bai_command(&b.admin, &["events", "*", "--scope", "session"])
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("bai events *");
    start_session(a, "ha-5", &[]);
    b.wait_for(60, "the stream to show ha-5", || {
        let out = std::fs::read_to_string(&out_path).unwrap_or_default();
        out.contains("\"ha-5\"").then_some(())
    });

    // The leader is killed: B leads once the lease expired, the agent follows it.
    let killed = Instant::now();
    let data_a = c.a.crash();
    let b = &c.b;
    wait_leads(b);
    let led_after = killed.elapsed();
    b.wait_for(60, "the agent to join B", || {
        (agent_status(b, "node-ha").as_deref() == Some("ALIVE")).then_some(())
    });
    // The sessions made before run on, reached through the new leader.
    assert_eq!(query(b, "ha-1", "print('still here')"), "still here\n");
    // A new one is placed once.
    start_session(b, "ha-4", &[]);
    let placed_after = killed.elapsed();
    one_container_each(&c.machine, b, &["ha-1", "ha-2", "ha-4", "ha-5"]);
    assert_eq!(containers(&c.machine, "node-ha"), 4);
    // The stream followed: ha-4's start arrived after the break, no event came twice.
    let out = b.wait_for(60, "the stream to show ha-4", || {
        let out = std::fs::read_to_string(&out_path).unwrap_or_default();
        out.lines()
            .any(|l| l.starts_with("session_started") && l.contains("\"ha-4\""))
            .then_some(out)
    });
    let _ = follow.kill();
    let _ = follow.wait();
    let err = std::fs::read_to_string(&err_path).unwrap_or_default();
    assert!(err.contains("opening it again after event"), "{err}");
    let mut lines: Vec<&str> = out.lines().collect();
    let n = lines.len();
    lines.sort_unstable();
    lines.dedup();
    assert_eq!(lines.len(), n, "an event came twice: {out}");
    eprintln!(
        "failover: leader SIGKILL -> standby leads {:.1} s, -> a new session RUNNING {:.1} s",
        led_after.as_secs_f64(),
        placed_after.as_secs_f64()
    );
    drop(data_a);
    drop(c.agent);
}

#[test]
fn a_paused_leader_is_fenced_and_stands_by() {
    // A runs from a copy of baid that is replaced while it is paused (an upgrade of the
    // package): it starts again all the same, as the build it is.
    let copy = tempfile::tempdir().unwrap();
    let exe = copy.path().join("baid");
    std::fs::copy(bai_e2e::bin("baid"), &exe).unwrap();
    let url = bai_store::testing::fresh_database().expect("a database in the test cluster");
    let c = cluster_with(
        37,
        &url,
        &url,
        &[(bai_e2e::BAID_BINARY, exe.to_str().unwrap())],
    );
    let (a, b) = (&c.a, &c.b);
    start_session(a, "paused-1", &[]);

    // Paused past its lease: B takes over and the agent joins it (its link to A falls
    // silent and closes).
    a.signal("-STOP");
    wait_leads(b);
    b.wait_for(60, "the agent to join B", || {
        (agent_status(b, "node-ha").as_deref() == Some("ALIVE")).then_some(())
    });
    start_session(b, "paused-2", &[]);
    b.bai(&b.admin, &["rm", "paused-1"]).expect_ok();
    b.wait_terminated(&b.admin, "paused-1", 120);
    std::fs::remove_file(&exe).unwrap();
    std::fs::write(&exe, "#!/bin/sh\necho not this build >&2; exit 9\n").unwrap();

    // A runs again: its lease is gone (its renewal is refused by the term fence, or finds
    // no answer in time), and it starts again as a standby, relaying to B.
    a.signal("-CONT");
    a.wait_for(60, "A to stand by", || {
        a.log()
            .contains("starting again as a standby")
            .then_some(())
    });
    a.wait_for(60, "A to relay to B", || {
        let r = a.bai(&a.admin, &["session", "info", "--json", "paused-2"]);
        r.ok().then_some(())
    });
    assert!(
        !a.log().contains("cannot start again"),
        "A did not start again: {}",
        a.log()
    );
    // Nothing was placed or ended twice: p-1 stays ended, p-2 runs in one container.
    assert_eq!(a.status(&a.admin, "paused-1"), "TERMINATED");
    one_container_each(&c.machine, b, &["paused-2"]);
    assert_eq!(containers(&c.machine, "node-ha"), 1);
}

/// `url` with its port replaced (the database through another way in).
fn via_port(url: &str, port: u16) -> String {
    let at = url.rfind('@').expect("a user in the URL") + 1;
    let rest = &url[at..];
    let slash = rest.find('/').expect("a database in the URL");
    let host = rest[..slash]
        .rsplit_once(':')
        .map_or(&rest[..slash], |(h, _)| h);
    format!("{}{host}:{port}{}", &url[..at], &rest[slash..])
}

/// The database's address in `url`.
fn address_of(url: &str) -> std::net::SocketAddr {
    let at = url.rfind('@').expect("a user in the URL") + 1;
    let rest = &url[at..];
    let hostport = &rest[..rest.find('/').expect("a database in the URL")];
    hostport.parse().expect("HOST:PORT")
}

#[test]
fn a_leader_cut_off_from_its_database_steps_down() {
    let url = bai_store::testing::fresh_database().expect("a database in the test cluster");
    let link = CutLink::to(address_of(&url));
    let c = cluster_on(38, &via_port(&url, link.port()), &url);
    let (a, b) = (&c.a, &c.b);
    start_session(a, "cut-1", &[]);

    // Its link to the database cut, A cannot renew its lease: it steps down when the lease
    // may have expired, and from then on answers every request with a 503 that says why.
    link.cut();
    a.wait_for(60, "A to step down", || {
        a.log()
            .contains("did not answer the lease's renewal")
            .then_some(())
    });
    let refused = a.wait_for(60, "A's 503", || {
        let r = a.bai(&a.admin, &["start", "-t", "cut-2", "python"]);
        (!r.ok() && r.stderr.contains("cannot reach its database")).then_some(r)
    });
    assert_eq!(refused.stderr.lines().count(), 1, "{refused:#?}");
    // B leads; the agent follows it; what ran, runs on.
    wait_leads(b);
    b.wait_for(60, "the agent to join B", || {
        (agent_status(b, "node-ha").as_deref() == Some("ALIVE")).then_some(())
    });
    assert_eq!(query(b, "cut-1", "print('on b')"), "on b\n");
    start_session(b, "cut-3", &[]);
    // The 503 changed nothing: no session cut-2 anywhere.
    let listed = b.bai(&b.admin, &["ps"]);
    assert!(!listed.stdout.contains("cut-2"), "{listed:#?}");

    // Healed: A reaches its database again and stands by, relaying to B.
    link.heal();
    a.wait_for(60, "A to serve through B", || {
        let r = a.bai(&a.admin, &["ps"]);
        (r.ok() && r.stdout.contains("cut-3")).then_some(())
    });
    one_container_each(&c.machine, b, &["cut-1", "cut-3"]);
    assert_eq!(containers(&c.machine, "node-ha"), 2);
}

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
            let deadline = Instant::now() + Duration::from_secs(120);
            loop {
                if let Some(a) = leader_address(&url)
                    && let Some(i) = addresses.iter().position(|x| *x == a)
                {
                    return i;
                }
                assert!(Instant::now() < deadline, "no manager leads");
                std::thread::sleep(Duration::from_millis(100));
            }
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
    let deadline = Instant::now() + Duration::from_secs(300);
    let rows = loop {
        let rows = nemesis_sessions(&url);
        if rows.iter().all(|(_, st, _)| SETTLED.contains(&st.as_str())) {
            break rows;
        }
        assert!(Instant::now() < deadline, "sessions still moving: {rows:?}");
        std::thread::sleep(Duration::from_millis(500));
    };
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

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
//!
//! `failover` shows the switch as a person at `bai` sees it: a create through the standby
//! while the leader is frozen, or while none leads yet. `nemesis` runs hundreds of
//! operations while the leader is killed, paused or loses its database again and again.
//! `web_login`: a web UI login outlives the leader it was made at.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

#[path = "managers/failover.rs"]
mod failover;
#[path = "managers/nemesis.rs"]
mod nemesis;
#[path = "managers/web_login.rs"]
mod web_login;

use bai_e2e::apps::jupyter_through_app;
use bai_e2e::cut::CutLink;
use bai_e2e::netns::Machine;
use bai_e2e::remote::{
    Agent, IMAGE, agent_status, containers, join_token, query, start_session, ttyd_page,
    wait_status,
};
use bai_e2e::{Server, free_port};
use std::io::Read;
use std::process::Stdio;
use std::time::Instant;

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

/// Two managers of one database, no agent yet: leader A (reaching the database at `url_a`,
/// `more_a` added to its environment) and standby B (at `url_b`).
struct Managers {
    a: Server,
    b: Server,
    /// Each manager's environment (to start it again as it was).
    envs: [Vec<(String, String)>; 2],
    /// Where each listens for agents.
    agent_ports: [u16; 2],
}

fn managers(url_a: &str, url_b: &str, more_a: &[(&str, &str)]) -> Managers {
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
    Managers {
        a,
        b,
        envs,
        agent_ports: [pa, pb],
    }
}

/// [`cluster_on`] with more of A's environment.
fn cluster_with(index: u8, url_a: &str, url_b: &str, more_a: &[(&str, &str)]) -> Cluster {
    let Managers {
        a,
        b,
        envs,
        agent_ports: [pa, pb],
    } = managers(url_a, url_b, more_a);
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
    // Its images come in a report of their own after it joined: a create before that finds
    // no agent holding the image.
    a.wait_for(120, "the agent's images in the catalogue", || {
        let r = a.bai(&a.admin, &["admin", "image", "list", "--json"]);
        let list: Vec<bai_api::images::Image> = serde_json::from_str(&r.stdout).ok()?;
        list.iter()
            .find(|i| i.canonical_name.as_deref() == Some(IMAGE))
            .filter(|i| {
                i.installed_agents
                    .as_ref()
                    .is_some_and(|a| a.iter().any(|n| n == "node-ha"))
            })
            .map(|_| ())
    });
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
    // `bai` waits through a 503 `database-unavailable` (2 s here: as long as A stays cut
    // off it answers nothing else), saying so once, then fails in one line.
    let refused = a.wait_for(60, "A's 503", || {
        let args = ["start", "-t", "cut-2", "python"];
        let out = a
            .bai_command(&a.admin, &args)
            .env("BAI_FAILOVER_WAIT", "2")
            .output()
            .expect("bai");
        let r = bai_e2e::Run::of(out, args.join(" "));
        (!r.ok() && r.stderr.contains("cannot reach its database")).then_some(r)
    });
    let said: Vec<&str> = refused.stderr.lines().collect();
    assert_eq!(said.len(), 2, "{refused:#?}");
    assert!(said[0].contains("switching managers"), "{refused:#?}");
    assert!(said[1].starts_with("error: "), "{refused:#?}");
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

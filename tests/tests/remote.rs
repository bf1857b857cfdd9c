//! Remote agents end to end. A manager with no agent of its own (`baid up --no-local-agent`)
//! and three `baid agent`s, each in its own network namespace with its own Docker engine,
//! reaching the manager only through their veth address: sessions spread over them, a
//! chosen agent is honoured, code, files and apps work through them; a killed agent is LOST
//! and comes back reconciled, a short cut loses nothing, a long one ends its sessions with
//! `agent-lost` and their kernels are destroyed when the link heals; a lost agent's warm pool
//! is no longer shown. Trust: a revoked
//! token, a wrong certificate and a forged agent id are refused.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::netns::Machine;
use bai_e2e::remote::{
    Agent, agent_command, agent_status, agents, containers, manager_for_machines, query,
    start_session, ttyd_page, wait_status,
};
use bai_e2e::{Server, bin, free_port};
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

use bai_e2e::remote::IMAGE;

/// How many of the test's sessions the manager has up on `agent`.
fn held_on(s: &Server, agent: &str) -> usize {
    ["sess-1", "sess-2", "sess-3", "sess-4", "sess-5"]
        .iter()
        .filter_map(|name| {
            let r = s.bai(&s.admin, &["session", "info", "--json", name]);
            r.ok()
                .then(|| serde_json::from_str::<Value>(&r.stdout).ok())
                .flatten()
        })
        .filter(|i| {
            i["agent"] == agent && i["status"].as_str().unwrap_or("").starts_with("RUNNING")
        })
        .count()
}

#[test]
fn three_agents_in_namespaces() {
    // A storage host "mounted identically" on the manager and on node-3 only (here: the same
    // directory, as an NFS export would be).
    let nfs = tempfile::Builder::new()
        .prefix("bai-nfs-")
        .tempdir()
        .expect("tempdir");
    let nfs_spec = format!("nfs:shared={}", nfs.path().display());
    let (s, port, token) = manager_for_machines(&[
        ("BAI_STORAGE_HOSTS", &nfs_spec),
        ("BAI_AGENT_LOST_AFTER", "15s"),
        ("BAI_AGENT_GONE_AFTER", "45s"),
    ]);
    assert!(token.starts_with("bai1."), "one token on one line: {token}");

    let machines: Vec<Machine> = (1..=3u8)
        .map(|i| {
            let m = Machine::start(30 + i);
            m.load_image(IMAGE);
            m
        })
        .collect();
    let mut nodes: Vec<Agent> = machines
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let extra = if i == 2 {
                vec!["--storage-host".to_string(), nfs_spec.clone()]
            } else {
                vec![]
            };
            Agent::start(m, &format!("node-{}", i + 1), port, &token, &extra)
        })
        .collect();
    s.wait_for(120, "three remote agents", || {
        let list = agents(&s);
        let alive = list.iter().filter(|a| a.status == "ALIVE").count();
        (alive == 3).then_some(list)
    });
    // Each is known from its own veth address, and has its own engine's image.
    for (m, a) in machines.iter().zip(&nodes) {
        let info = agents(&s)
            .into_iter()
            .find(|x| x.id == a.name)
            .expect("listed");
        let addr = info.address.as_str();
        assert!(
            addr.starts_with(&format!("{}:", m.addr())),
            "{} connected from {addr}, not from its namespace {}",
            a.name,
            m.addr()
        );
        assert!(info.remote);
    }

    // Dispersed (the default selector): three sessions, three agents.
    let mut on = std::collections::BTreeMap::new();
    for name in ["sess-1", "sess-2", "sess-3"] {
        on.insert(name, start_session(&s, name, &[]));
    }
    let distinct: std::collections::BTreeSet<_> = on.values().cloned().collect();
    assert_eq!(distinct.len(), 3, "sessions spread over the agents: {on:?}");
    let names: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
    let idx = |agent: &str| -> usize {
        names
            .iter()
            .position(|n| n == agent)
            .expect("a known agent")
    };

    // Code, files and an app through a remote agent.
    assert!(query(&s, "sess-1", "print(6*7)").contains("42"));
    let f = s.work.path().join("payload.txt");
    std::fs::write(&f, "through the link\n").expect("write");
    s.bai(&s.admin, &["upload", "sess-1", "payload.txt"])
        .expect_ok();
    assert!(query(&s, "sess-1", "print(open('payload.txt').read())").contains("through the link"));
    let dest = s.work.path().join("back");
    std::fs::create_dir_all(&dest).expect("dir");
    s.bai(
        &s.admin,
        &["download", "sess-1", "payload.txt", "--dest", "back"],
    )
    .expect_ok();
    let got = std::fs::read_dir(&dest).expect("dest").count();
    assert!(got > 0, "the download wrote something");
    assert!(ttyd_page(&s, "sess-1").contains("Terminal"));

    // A session mounting a folder of nfs:shared goes where that storage host is; one that
    // also names another agent waits, saying why.
    s.bai(
        &s.admin,
        &["vfolder", "create", "shared-data", "nfs:shared"],
    )
    .expect_ok();
    let on_nfs = start_session(&s, "with-nfs", &["--mount", "shared-data"]);
    assert_eq!(on_nfs, "node-3");
    assert!(
        query(
            &s,
            "with-nfs",
            "import os; print(os.path.isdir('shared-data'))"
        )
        .contains("True")
    );
    s.bai(&s.admin, &["rm", "with-nfs"]).expect_ok();
    s.bai(
        &s.admin,
        &[
            "start",
            "-q",
            "--enqueue-only",
            "-t",
            "nfs-pinned",
            "--mount",
            "shared-data",
            "--assign-agent",
            "node-1",
            "-r",
            "cpu=0.5",
            "-r",
            "mem=256m",
            "python",
        ],
    )
    .expect_ok();
    let waiting = s.wait_for(60, "the reason nfs-pinned waits", || {
        let i = s.info(&s.admin, "nfs-pinned");
        let info = i["status_info"].as_str().unwrap_or("").to_string();
        info.contains("no-eligible-agent").then_some(info)
    });
    assert!(waiting.contains("nfs:shared"), "{waiting}");
    assert_eq!(s.status(&s.admin, "nfs-pinned"), "PENDING");
    s.bai(&s.admin, &["rm", "nfs-pinned"]).expect_ok();

    // Select Agent.
    let pinned = start_session(&s, "pinned", &["--assign-agent", "node-2"]);
    assert_eq!(pinned, "node-2");
    s.bai(&s.admin, &["rm", "pinned"]).expect_ok();

    // A cluster session on a remote agent: its network is made in that node's engine, and
    // its kernels reach each other there by hostname and ssh.
    let on_node = start_session(
        &s,
        "remote-gang",
        &[
            "--assign-agent",
            "node-2",
            "--cluster-size",
            "2",
            "-r",
            "cpu=0.25",
        ],
    );
    assert_eq!(on_node, "node-2");
    let out = query(
        &s,
        "remote-gang",
        "import subprocess; print(subprocess.run(['ssh', 'sub1', 'hostname'], capture_output=True, text=True).stdout.strip())",
    );
    assert_eq!(out.trim(), "sub1", "{out}");
    assert_eq!(
        containers(&machines[1], "node-2"),
        held_on(&s, "node-2") + 2
    );
    s.bai(&s.admin, &["rm", "remote-gang"]).expect_ok();

    // kill -9 the agent of s1: LOST, s1 degraded, the others untouched, new work elsewhere.
    let a1 = on["sess-1"].clone();
    let i1 = idx(&a1);
    nodes[i1].kill();
    wait_status(&s, &a1, "LOST", 120);
    let info = s.wait_for(60, "sess-1 to be degraded", || {
        let i = s.info(&s.admin, "sess-1");
        (i["status"] == "RUNNING_DEGRADED").then_some(i)
    });
    assert!(
        info["status_info"]
            .as_str()
            .unwrap_or("")
            .starts_with("agent-lost"),
        "{info}"
    );
    assert_eq!(s.status(&s.admin, "sess-2"), "RUNNING");
    assert_eq!(s.status(&s.admin, "sess-3"), "RUNNING");
    s.bai(&s.admin, &["apps", "sess-1"])
        .expect_fail("agent-lost");
    let s4 = start_session(&s, "sess-4", &[]);
    assert_ne!(s4, a1, "nothing new goes to a lost agent");
    // It comes back: reconciled, the same kernel resumes, nothing doubled.
    nodes[i1].restart(&machines[i1], port, &token);
    wait_status(&s, &a1, "ALIVE", 120);
    s.wait_for(60, "s1 to run again", || {
        (s.status(&s.admin, "sess-1") == "RUNNING").then_some(())
    });
    assert!(query(&s, "sess-1", "print(open('payload.txt').read())").contains("through the link"));
    assert_eq!(
        containers(&machines[i1], &a1),
        held_on(&s, &a1),
        "one kernel per session, none doubled"
    );

    // A short cut of s2's agent: nothing is lost.
    let a2 = on["sess-2"].clone();
    let i2 = idx(&a2);
    machines[i2].cut();
    std::thread::sleep(Duration::from_secs(3));
    machines[i2].heal();
    wait_status(&s, &a2, "ALIVE", 120);
    s.wait_for(60, "s2 to be running", || {
        (s.status(&s.admin, "sess-2") == "RUNNING").then_some(())
    });
    // Calls in the moment its old link is found dead fail; the kernel is there after.
    s.wait_for(60, "sess-2 to answer", || {
        let r = s.bai(
            &s.admin,
            &["run", "-t", "sess-2", "-c", "print(7*6)", "python"],
        );
        (r.ok() && r.stdout.contains("42")).then_some(())
    });
    assert_eq!(
        containers(&machines[i2], &a2),
        held_on(&s, &a2),
        "one kernel per session, none doubled"
    );

    // A long cut of s3's agent: its session ends with agent-lost; when the link heals, its
    // old kernel is destroyed, not resumed.
    let a3 = on["sess-3"].clone();
    let i3 = idx(&a3);
    machines[i3].cut();
    let ended = s.wait_terminated(&s.admin, "sess-3", 240);
    assert!(
        ended["status_info"]
            .as_str()
            .unwrap_or("")
            .starts_with("agent-lost"),
        "{ended}"
    );
    assert_eq!(agent_status(&s, &a3).as_deref(), Some("GONE"));
    assert_eq!(
        containers(&machines[i3], &a3),
        1,
        "unreachable, still there"
    );
    machines[i3].heal();
    wait_status(&s, &a3, "ALIVE", 120);
    s.wait_for(60, "the ended session's kernel to be destroyed", || {
        (containers(&machines[i3], &a3) == 0).then_some(())
    });
    assert_eq!(s.status(&s.admin, "sess-3"), "TERMINATED");

    // Drained agents take nothing new; running sessions stay.
    for n in &nodes {
        if n.name != a3 {
            s.bai(&s.admin, &["admin", "agent", "drain", &n.name])
                .expect_ok();
        }
    }
    assert_eq!(start_session(&s, "sess-5", &[]), a3);
    assert_eq!(s.status(&s.admin, "sess-2"), "RUNNING");
    for n in &nodes {
        s.bai(&s.admin, &["admin", "agent", "undrain", &n.name])
            .expect_ok();
    }
    let secret = token.split('.').nth(2).expect("the token's secret");
    let logs: String = nodes.iter().map(|n| n.log()).collect::<String>() + &s.log();
    assert!(
        !logs.contains(secret),
        "the token's secret never reaches a log"
    );
}

/// Runs `baid agent` on this host until it exits; returns its exit code and output.
fn refused_agent(name: &str, manager: &str, token: &str) -> (Option<i32>, String) {
    let data = tempfile::tempdir().expect("tempdir");
    let out = agent_command(Command::new(bin("baid")), name, manager, token, data.path())
        .output()
        .expect("run baid agent");
    (
        out.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn agents_are_refused_without_trust() {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let s = Server::start_with(&[("BAI_AGENT_LISTEN", &listen)]);
    let create = || {
        s.bai(&s.admin, &["admin", "agent-token", "create"])
            .expect_ok()
            .stdout
            .trim()
            .to_string()
    };
    // Only administrators mint tokens.
    s.bai(&s.user, &["admin", "agent-token", "create"])
        .expect_fail("admin");
    let revoked = create();
    let id = revoked.split('.').nth(1).expect("token id").to_string();
    s.bai(&s.admin, &["admin", "agent-token", "revoke", &id])
        .expect_ok();
    let (code, out) = refused_agent("node-r", &listen, &revoked);
    assert_eq!(code, Some(3), "{out}");
    assert!(out.contains("revoked"), "{out}");

    // A token naming another certificate: the agent refuses the manager.
    let good = create();
    let wrong = format!("{}{}", &good[..good.len() - 64], "0".repeat(64));
    let (code, out) = refused_agent("node-w", &listen, &wrong);
    assert_eq!(code, Some(3), "{out}");
    assert!(out.contains("certificate"), "{out}");

    // A real agent joins; another one claiming its id is refused, and so is the id of the
    // manager's own agent.
    let data = tempfile::tempdir().expect("tempdir");
    let log = std::fs::File::create(data.path().join("agent.log")).expect("log");
    let mut c = agent_command(
        Command::new(bin("baid")),
        "node-x",
        &listen,
        &good,
        data.path(),
    );
    c.stdout(log.try_clone().expect("log")).stderr(log);
    let mut legit = c.spawn().expect("spawn");
    wait_status(&s, "node-x", "ALIVE", 120);
    let (code, out) = refused_agent("node-x", &listen, &good);
    assert_eq!(code, Some(3), "{out}");
    assert!(out.contains("belongs to another agent"), "{out}");
    assert_eq!(agent_status(&s, "node-x").as_deref(), Some("ALIVE"));
    let (code, out) = refused_agent(&s.agent_id, &listen, &good);
    assert_eq!(code, Some(3), "{out}");
    assert!(out.contains("own agent"), "{out}");

    // Revoking its token disconnects it for good.
    let gid = good.split('.').nth(1).expect("token id").to_string();
    s.bai(&s.admin, &["admin", "agent-token", "revoke", &gid])
        .expect_ok();
    let status = legit.wait().expect("the agent exits");
    assert_eq!(status.code(), Some(3));
    s.wait_for(60, "node-x to be disconnected", || {
        (agent_status(&s, "node-x").as_deref() != Some("ALIVE")).then_some(())
    });
    let listed = s
        .bai(&s.admin, &["admin", "agent-token", "list"])
        .expect_ok()
        .stdout
        .clone();
    assert!(
        listed.contains(&gid) && listed.contains("revoked"),
        "{listed}"
    );
    assert!(!listed.contains(&good), "a listing never shows the token");
}

/// A remote agent's own warm pool is shown while the agent is alive, and not once it is
/// lost: what it last reported says nothing of what it keeps now.
#[test]
fn a_lost_agents_pool_is_not_shown_as_ready() {
    let (s, port, token) = manager_for_machines(&[("BAI_AGENT_LOST_AFTER", "15s")]);
    let m = Machine::start(37);
    m.load_image(IMAGE);
    let pool = format!("{IMAGE},cpu=0.5,mem=512m,count=1");
    let mut agent = Agent::start(
        &m,
        "node-pool",
        port,
        &token,
        &["--warm-pool".to_string(), pool],
    );
    let pools = |s: &Server| {
        let r = s.bai(&s.admin, &["agents"]);
        r.expect_ok();
        r.stdout
    };
    s.wait_for(180, "the remote agent's pool kernel", || {
        let out = pools(&s);
        (out.contains("node-pool warm pool") && out.contains("1 of 1 ready")).then_some(())
    });
    agent.kill();
    wait_status(&s, "node-pool", "LOST", 120);
    let out = pools(&s);
    assert!(!out.contains("1 of 1 ready"), "{out}");
    assert!(!out.contains("node-pool warm pool "), "{out}");
    let listed = agents(&s);
    let lost = listed
        .iter()
        .find(|a| a.id == "node-pool")
        .expect("the lost agent is listed");
    assert!(lost.warm_pool.pools.is_empty(), "{lost:?}");
}

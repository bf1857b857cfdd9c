//! Egress policies where the packets are (issue 42): a manager without an agent of its own
//! and two `baid agent`s, each in a network namespace with its own Docker engine. Each node
//! also has a "cloud" namespace of its own behind it, holding the metadata address
//! (169.254.169.254 on its loopback) and an address outside the cluster. Listeners on
//! the node itself, on the other node and in the cloud namespace, plus the manager's agent
//! listener, are dialled from inside sessions under each policy; every attempt is open or
//! refused exactly as `docs/RELIABILITY.md` (egress) says, for single-kernel, cluster and
//! multi-node sessions, again after the agent is killed and started, and after the node's
//! engine restarts.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::Server;
use bai_e2e::netns::Machine;
use bai_e2e::remote::{Agent, IMAGE, agents, manager_for_machines, wait_status};
use bai_e2e::tunnel::Tunnel;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};

/// The listeners' ports on each node: one closed under `closed`, one its allow list opens.
const PORT: u16 = 18080;
const PORT_ALLOWED: u16 = 18081;
const METADATA: &str = "169.254.169.254";

/// Accepts (and closes) connections on every port given, until killed.
const LISTENER: &str = "import socket, sys, threading\n\
def serve(p):\n    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n    s.bind(('0.0.0.0', p)); s.listen(64)\n    while True:\n        c, _ = s.accept(); c.close()\n\
ts = [threading.Thread(target=serve, args=(int(p),)) for p in sys.argv[1:]]\n\
[t.start() for t in ts]\n[t.join() for t in ts]\n";

fn ip(args: &[&str]) {
    let st = Command::new("ip").args(args).status().expect("ip");
    assert!(st.success(), "ip {} failed", args.join(" "));
}

/// A listener process inside a namespace (killed on drop).
struct Listener(Child);

impl Listener {
    fn start(mut cmd: Command, ports: &[u16]) -> Listener {
        cmd.arg("-c").arg(LISTENER);
        for p in ports {
            cmd.arg(p.to_string());
        }
        Listener(
            cmd.stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .expect("a listener"),
        )
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A node's "cloud": a namespace joined to the node by a veth (`10.215.<i>.1` on the node,
/// `.2` in it), holding the metadata address on its loopback; the node routes that
/// address there. Removed on drop.
struct Cloud {
    name: String,
    outside: String,
    _listener: Listener,
}

impl Cloud {
    fn attach(m: &Machine, i: u8) -> Cloud {
        let name = format!("bai-e2e-cloud{i}");
        let _ = Command::new("ip")
            .args(["netns", "del", &name])
            .stderr(Stdio::null())
            .status();
        ip(&["netns", "add", &name]);
        let (node_end, cloud_end) = (format!("baicl{i}n"), format!("baicl{i}c"));
        ip(&[
            "-n",
            m.name(),
            "link",
            "add",
            &node_end,
            "type",
            "veth",
            "peer",
            "name",
            &cloud_end,
            "netns",
            &name,
        ]);
        let node_addr = format!("10.215.{i}.1");
        let outside = format!("10.215.{i}.2");
        ip(&[
            "-n",
            m.name(),
            "addr",
            "add",
            &format!("{node_addr}/30"),
            "dev",
            &node_end,
        ]);
        ip(&["-n", m.name(), "link", "set", &node_end, "up"]);
        ip(&[
            "-n",
            &name,
            "addr",
            "add",
            &format!("{outside}/30"),
            "dev",
            &cloud_end,
        ]);
        ip(&["-n", &name, "link", "set", &cloud_end, "up"]);
        ip(&["-n", &name, "link", "set", "lo", "up"]);
        // On the namespace's loopback (this kernel may lack the dummy interface type).
        ip(&[
            "-n",
            &name,
            "addr",
            "add",
            &format!("{METADATA}/32"),
            "dev",
            "lo",
        ]);
        ip(&["-n", &name, "route", "add", "default", "via", &node_addr]);
        ip(&[
            "-n",
            m.name(),
            "route",
            "add",
            &format!("{METADATA}/32"),
            "via",
            &outside,
        ]);
        let mut cmd = Command::new("nsenter");
        cmd.arg(format!("--net=/var/run/netns/{name}"))
            .arg("--")
            .arg("python3");
        let listener = Listener::start(cmd, &[80]);
        Cloud {
            name,
            outside,
            _listener: listener,
        }
    }
}

impl Drop for Cloud {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

/// Everything the sessions dial, per node.
struct Site {
    s: Server,
    port: u16,
    machines: Vec<Machine>,
    clouds: Vec<Cloud>,
}

impl Site {
    fn node(&self, agent: &str) -> usize {
        if agent == "node-a" { 0 } else { 1 }
    }

    /// The targets seen from a kernel on node `i` (plus `peer`, a cluster peer's sshd).
    fn targets(&self, i: usize, peer: bool) -> Value {
        let (me, other) = (&self.machines[i], &self.machines[1 - i]);
        let mut t = vec![
            serde_json::json!(["own_host", me.addr().to_string(), PORT]),
            serde_json::json!(["manager", me.host_addr().to_string(), self.port]),
            serde_json::json!(["other_node", other.addr().to_string(), PORT]),
            serde_json::json!(["other_node_allowed", other.addr().to_string(), PORT_ALLOWED]),
            serde_json::json!(["metadata", METADATA, 80]),
            serde_json::json!(["outside", self.clouds[i].outside, 80]),
        ];
        if peer {
            t.push(serde_json::json!(["peer", "sub1", 2200]));
        }
        Value::Array(t)
    }

    /// Runs the probe in `session`'s main kernel; returns what each target did.
    fn probe(&self, session: &str) -> BTreeMap<String, String> {
        let info = self.s.info(&self.s.admin, session);
        let agent = info["kernels"][0]["agent"]
            .as_str()
            .or_else(|| info["agent"].as_str())
            .unwrap_or_else(|| panic!("{session} has no agent: {info:#}"));
        let peer = info["cluster_size"].as_u64().unwrap_or(1) > 1;
        let code = bai_e2e::probe::code(&self.targets(self.node(agent), peer));
        let r = self.s.bai(
            &self.s.admin,
            &["run", "-t", session, "-c", &code, "python"],
        );
        r.expect_ok();
        bai_e2e::probe::answer(&r.stdout).unwrap_or_else(|| panic!("no probe result: {r:?}"))
    }

    /// Starts a session on `node-a` (or spread, for multi-node) and waits until it runs.
    fn start(&self, name: &str, extra: &[&str]) {
        let mut args = vec![
            "start", "-q", "-t", name, "-r", "cpu=0.25", "-r", "mem=256m",
        ];
        if !extra.contains(&"multi-node") {
            args.extend(["--assign-agent", "node-a"]);
        }
        args.extend_from_slice(extra);
        args.push("python");
        self.s.bai(&self.s.admin, &args).expect_ok();
        self.s.wait_for(240, &format!("{name} to run"), || {
            (self.s.info(&self.s.admin, name)["status"] == "RUNNING").then_some(())
        });
    }

    fn policy(&self, args: &[&str]) {
        let mut a = vec!["admin", "resource-group", "update", "default"];
        a.extend_from_slice(args);
        self.s.bai(&self.s.admin, &a).expect_ok();
    }
}

/// What each policy gives, target by target (`peer` only for cluster sessions).
fn expected(policy: &str, peer: bool) -> BTreeMap<String, String> {
    let open = |yes: bool| if yes { "open" } else { "refused" }.to_string();
    let (default, closed) = (policy == "default", policy == "closed");
    let mut want = BTreeMap::from([
        ("own_host".to_string(), open(policy == "open")),
        ("manager".to_string(), open(policy == "open")),
        ("other_node".to_string(), open(policy == "open")),
        ("other_node_allowed".to_string(), open(!default)),
        ("metadata".to_string(), open(policy == "open")),
        ("outside".to_string(), open(!closed)),
    ]);
    if peer {
        want.insert("peer".into(), open(true));
    }
    want
}

fn check(site: &Site, session: &str, policy: &str) {
    let peer = site.s.info(&site.s.admin, session)["cluster_size"]
        .as_u64()
        .unwrap_or(1)
        > 1;
    let got = site.probe(session);
    assert_eq!(got, expected(policy, peer), "{session} under {policy}");
}

#[test]
fn kernels_reach_only_what_their_policy_allows() {
    let (s, port, token) = manager_for_machines(&[]);
    let machines: Vec<Machine> = [43u8, 44]
        .iter()
        .map(|&i| {
            let m = Machine::start(i);
            m.load_image(IMAGE);
            m
        })
        .collect();
    let _vxlan = Tunnel::between(&machines[0], &machines[1]);
    let _tcp = Tunnel::forward(&machines[0], &machines[1], &["-p", "tcp"]);
    let clouds: Vec<Cloud> = machines
        .iter()
        .zip([43u8, 44])
        .map(|(m, i)| Cloud::attach(m, i))
        .collect();
    let _listeners: Vec<Listener> = machines
        .iter()
        .map(|m| Listener::start(m.command("python3"), &[PORT, PORT_ALLOWED]))
        .collect();
    let mut nodes: Vec<Agent> = machines
        .iter()
        .zip(["node-a", "node-b"])
        .map(|(m, name)| Agent::start(m, name, port, &token, &[]))
        .collect();
    s.wait_for(120, "two remote agents", || {
        (agents(&s).iter().filter(|a| a.status == "ALIVE").count() == 2).then_some(())
    });
    for a in agents(&s) {
        assert_eq!(a.egress_error, None, "{} cannot enforce egress", a.id);
    }
    let site = Site {
        s,
        port,
        machines,
        clouds,
    };
    let s = &site.s;

    // open: every listener answers (so each refusal below is the policy's doing).
    site.policy(&["--egress", "open"]);
    let groups = s
        .bai(&s.admin, &["resource-groups"])
        .expect_ok()
        .stdout
        .clone();
    assert!(
        groups.contains("open") && groups.contains("metadata service"),
        "{groups}"
    );
    site.start("s-open", &[]);
    check(&site, "s-open", "open");

    // default (the policy of a new installation's group).
    site.policy(&["--egress", "default"]);
    site.start("s-default", &[]);
    check(&site, "s-default", "default");
    site.start("c-default", &["--cluster-size", "2"]);
    check(&site, "c-default", "default");
    site.start(
        "m-default",
        &["--cluster-size", "2", "--cluster-mode", "multi-node"],
    );
    check(&site, "m-default", "default");
    let info = s
        .bai(&s.admin, &["session", "info", "s-default"])
        .expect_ok()
        .stdout
        .clone();
    assert!(info.lines().any(|l| l == "egress: default"), "{info}");
    let info = s
        .bai(&s.admin, &["session", "info", "s-open"])
        .expect_ok()
        .stdout
        .clone();
    assert!(info.lines().any(|l| l == "egress: open"), "{info}");

    // kill -9 of node-a's agent and a new start: the rules were never gone, and the new
    // agent keeps them (and puts new kernels under them).
    nodes[0].kill();
    nodes[0].restart(&site.machines[0], port, &token);
    wait_status(s, "node-a", "ALIVE", 120);
    check(&site, "s-default", "default");
    check(&site, "s-open", "open");
    check(&site, "c-default", "default");
    for n in ["s-open", "s-default", "c-default", "m-default"] {
        s.bai(&s.admin, &["rm", n]).expect_ok();
    }

    // closed, with the other node's second port allowed.
    let allow: Vec<String> = site
        .machines
        .iter()
        .map(|m| format!("{}:{PORT_ALLOWED}", m.addr()))
        .collect();
    site.policy(&["--egress", "closed", "--egress-allow", &allow.join(",")]);
    site.start("s-closed", &[]);
    check(&site, "s-closed", "closed");
    site.start("c-closed", &["--cluster-size", "2"]);
    check(&site, "c-closed", "closed");
    site.start(
        "m-closed",
        &["--cluster-size", "2", "--cluster-mode", "multi-node"],
    );
    check(&site, "m-closed", "closed");
    // Each bridge's table is in its node's namespace while the bridge is there: the
    // multi-node session's bridges (`bbr…`) have theirs, and they go with them.
    let info = s.info(&s.admin, "m-closed");
    let holders: Vec<usize> = info["kernels"]
        .as_array()
        .map(|ks| {
            ks.iter()
                .filter_map(|k| k["agent"].as_str().map(|a| site.node(a)))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(holders.len(), 2, "{info:#}");
    for &i in &holders {
        let t = tables(&site.machines[i]);
        assert!(
            t.iter().any(|t| t.starts_with("bai_bbr")),
            "node {i}: {t:?}"
        );
    }
    let t = tables(&site.machines[0]);
    assert!(t.iter().any(|t| t.starts_with("bai_br_")), "{t:?}");
    for n in ["s-closed", "c-closed", "m-closed"] {
        s.bai(&s.admin, &["rm", n]).expect_ok();
    }
    for m in &site.machines {
        s.wait_for(120, "the overlay bridges' tables to go", || {
            (!tables(m).iter().any(|t| t.starts_with("bai_bbr"))).then_some(())
        });
    }

    // The engine of node-a stops and starts again (its bridges keep their names): the
    // tables still hold, and a new kernel is under its policy.
    let mut site = site;
    site.machines[0].restart_engine();
    let t = tables(&site.machines[0]);
    assert!(t.iter().any(|t| t.starts_with("bai_br_")), "{t:?}");
    site.start("s-after-engine", &[]);
    check(&site, "s-after-engine", "closed");
    site.s
        .bai(&site.s.admin, &["rm", "s-after-engine"])
        .expect_ok();
    drop(nodes);
}

/// The `inet` tables in a machine's namespace.
fn tables(m: &Machine) -> Vec<String> {
    let out = Command::new("ip")
        .args(["netns", "exec", m.name(), "nft", "list", "tables", "inet"])
        .output()
        .expect("nft");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
        .collect()
}

//! `--network-policies node` on the full-node tier: on a cluster whose network plugin
//! enforces no NetworkPolicy (this one's pods are on Docker's bridge), the agent loads each
//! kernel pod's egress policy and isolation into the pod's own network namespace before the
//! kernel starts. Probed from inside real pods, by connecting: under `default` the node
//! (its Kubernetes address and every other address of this machine) and the metadata
//! address are refused and an allowed destination is open; under `closed` only the allowed
//! one; under `open` the node answers. Under every policy another session's pod is refused,
//! while a cluster session's kernels reach each other (ssh's port) and the app proxy reaches
//! the kernel's web terminal from the node. A warm pool's pod, claimed, runs under its
//! session's rules.

use bai_e2e::Server;
use bai_e2e::kube::{Cluster, MANAGED, NamespaceGuard, env_of, joined_with};
use bai_e2e::remote::ttyd_page;
use std::collections::BTreeMap;
use std::io::Read;
use std::net::{IpAddr, TcpListener};

/// A port of this machine that accepts (and closes) every connection, on every address.
pub(super) fn listener() -> u16 {
    let l = TcpListener::bind("0.0.0.0:0").expect("listen");
    let port = l.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            let mut c = c;
            let _ = c.read(&mut [0u8; 1]);
        }
    });
    port
}

/// An address of this machine that is not the node's Kubernetes address, loopback or the
/// pods' bridge (`node_ip`).
fn other_host_address(node_ip: &str) -> String {
    let out = std::process::Command::new("ip")
        .args(["-j", "-4", "addr", "show"])
        .output()
        .expect("ip");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("ip -j");
    v.as_array()
        .into_iter()
        .flatten()
        .flat_map(|i| i["addr_info"].as_array().cloned().unwrap_or_default())
        .filter_map(|a| a["local"].as_str().map(str::to_string))
        .find(|a| a != node_ip && a.parse::<IpAddr>().is_ok_and(|ip| !ip.is_loopback()))
        .expect("this machine has an address besides loopback and the bridge")
}

fn start(s: &Server, name: &str, extra: &[&str]) {
    let mut args = vec![
        "start", "-q", "-t", name, "-r", "cpu=0.25", "-r", "mem=256m",
    ];
    args.extend_from_slice(extra);
    args.push("python");
    s.bai(&s.admin, &args).expect_ok();
    s.wait_for(240, &format!("{name} to run"), || {
        let i = s.info(&s.admin, name);
        assert_ne!(i["status"], "ERROR", "{i:#}");
        (i["status"] == "RUNNING").then_some(())
    });
}

pub(super) fn group(s: &Server, args: &[&str]) {
    let mut a = vec!["admin", "resource-group", "update", "default"];
    a.extend_from_slice(args);
    s.bai(&s.admin, &a).expect_ok();
}

/// Connects from session `name`'s main kernel to each (label, host, port) and checks that
/// each answers as expected (`open` or `refused`); `what` and the agent's `log` in a failure.
pub(super) fn connects(
    s: &Server,
    name: &str,
    cases: &[(&str, &str, u16, &str)],
    what: &str,
    log: &dyn Fn() -> String,
) {
    let list: Vec<serde_json::Value> = cases
        .iter()
        .map(|(n, h, p, _)| serde_json::json!([n, h, p]))
        .collect();
    let code = bai_e2e::probe::code(&serde_json::Value::from(list));
    let r = s.bai(&s.admin, &["run", "-t", name, "-c", &code, "python"]);
    r.expect_ok();
    let got = bai_e2e::probe::answer(&r.stdout).unwrap_or_else(|| panic!("no probe result: {r:?}"));
    for (target, _, _, answer) in cases {
        assert_eq!(
            got.get(*target).map(String::as_str),
            Some(*answer),
            "{what}: {target} in {got:?}\nagent log:\n{}",
            log()
        );
    }
}

/// The session (name annotation) of each of the agent's pool pods in `ns` (`bai-pool-…`),
/// claimed or not, by pod name.
fn pool_pods(cluster: &Cluster, ns: &str) -> BTreeMap<String, Option<String>> {
    let out = cluster.kubectl(&["get", "pods", "-n", ns, "-l", MANAGED, "-o", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    v["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
        .filter_map(|p| {
            let name = p["metadata"]["name"].as_str()?;
            name.starts_with("bai-pool-").then(|| {
                let session = p["metadata"]["annotations"]["ai.bai/session-name"].as_str();
                (name.to_string(), session.map(str::to_string))
            })
        })
        .collect()
}

#[test]
fn the_agent_enforces_egress_and_isolation_in_each_pods_network_namespace() {
    let cluster = Cluster::get();
    let ns = format!("bai-e2e-en-{}", std::process::id());
    let _ns = NamespaceGuard::new(&cluster, &ns);
    let (s, agent) = joined_with(
        "kube-en",
        &[("BAI_WARM_POOLS", "on")],
        &["--network-policies".into(), "node".into()],
        &cluster.kubeconfig,
        &ns,
    );
    let log = || agent.log();
    let node_ip = env_of(&cluster.kubeconfig, "BAI_KUBE_NODE_IP").expect("the node's address");
    let host_ip = other_host_address(&node_ip);
    let (closed_port, allowed_port) = (listener(), listener());
    let allow = format!("{node_ip}:{allowed_port}");

    // default, with one destination allowed: the node and this machine's other address
    // refused, the allowed port open, the metadata address refused at once.
    group(
        &s,
        &[
            "--egress",
            "default",
            "--egress-allow",
            &allow,
            "--warm-pool-auto",
            "0",
        ],
    );
    // Its bootstrap script (the first of the session's code, run as the kernel starts)
    // dials the node: refused, since the runner started nothing before the rules were in.
    let boot = s.work.path().join("boot.sh");
    let dial = bai_e2e::probe::code(&serde_json::json!([["node", node_ip, closed_port]]));
    std::fs::write(
        &boot,
        format!("python3 - > /home/work/boot-probe <<'PROBE'\n{dial}PROBE\n"),
    )
    .unwrap();
    start(&s, "en-a", &["--bootstrap-script", &boot.to_string_lossy()]);
    let r = s.bai(
        &s.admin,
        &[
            "run",
            "-t",
            "en-a",
            "-c",
            "print(open('boot-probe').read())",
            "python",
        ],
    );
    let booted = bai_e2e::probe::answer(&r.stdout);
    assert_eq!(
        booted
            .as_ref()
            .and_then(|b| b.get("node"))
            .map(String::as_str),
        Some("refused"),
        "the bootstrap script's dial: {r:?}\nagent log:\n{}",
        log()
    );
    connects(
        &s,
        "en-a",
        &[
            ("node", &node_ip, closed_port, "refused"),
            ("host", &host_ip, closed_port, "refused"),
            ("allowed", &node_ip, allowed_port, "open"),
            ("metadata", "169.254.169.254", 80, "refused"),
        ],
        "en-a under default",
        &log,
    );
    // A listener in en-a's pod, at its pod address.
    let r = s.bai(
        &s.admin,
        &[
            "run",
            "-t",
            "en-a",
            "-c",
            "import socket, subprocess, sys, time\n\
             subprocess.Popen([sys.executable, '-m', 'http.server', '8123'], start_new_session=True,\n\
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n\
             while True:\n    try:\n        socket.create_connection(('127.0.0.1', 8123), timeout=5).close(); break\n    except OSError:\n        time.sleep(0.2)\n\
             print('IP' + socket.gethostbyname(socket.gethostname()))\n",
            "python",
        ],
    );
    r.expect_ok();
    let a_ip = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("IP"))
        .unwrap_or_else(|| panic!("no address: {r:?}"))
        .to_string();
    assert_ne!(a_ip, "127.0.0.1", "{r:?}");
    // en-a reaches its own listener at its pod address, and bai reaches its apps from the
    // node (the app proxy's way in: the web terminal's page).
    connects(
        &s,
        "en-a",
        &[("itself", &a_ip, 8123, "open")],
        "en-a to itself",
        &log,
    );
    assert!(ttyd_page(&s, "en-a").contains("Terminal"), "{}", log());

    // A cluster session under default: its kernels reach each other (sshd on sub1), not
    // en-a's pod, nor the node.
    start(&s, "en-c", &["--cluster-size", "2"]);
    connects(
        &s,
        "en-c",
        &[
            ("sub1", "sub1", 2200, "open"),
            ("other-session", &a_ip, 8123, "refused"),
            ("node", &node_ip, closed_port, "refused"),
        ],
        "en-c under default",
        &log,
    );
    s.bai(&s.admin, &["rm", "en-c"]).expect_ok();

    // closed: only the allowed destination, and still not en-a's pod.
    group(&s, &["--egress", "closed", "--egress-allow", &allow]);
    start(&s, "en-b", &[]);
    connects(
        &s,
        "en-b",
        &[
            ("allowed", &node_ip, allowed_port, "open"),
            ("node", &node_ip, closed_port, "refused"),
            ("other-session", &a_ip, 8123, "refused"),
        ],
        "en-b under closed",
        &log,
    );
    s.bai(&s.admin, &["rm", "en-b"]).expect_ok();

    // open: the node answers (so each refusal above was the rules' doing), and another
    // session's pod is still refused.
    group(&s, &["--egress", "open"]);
    start(&s, "en-d", &[]);
    connects(
        &s,
        "en-d",
        &[
            ("node", &node_ip, closed_port, "open"),
            ("host", &host_ip, closed_port, "open"),
            ("other-session", &a_ip, 8123, "refused"),
        ],
        "en-d under open",
        &log,
    );
    s.bai(&s.admin, &["rm", "en-d"]).expect_ok();

    // A warm pool under default: its pod waits at its gate for the pool's rules (nothing
    // out), and a start of its shape is given that very pod with the session's rules in
    // place of the pool's: the allowed port opens (the pool's would refuse it), the node
    // and another session stay refused.
    group(
        &s,
        &[
            "--egress",
            "default",
            "--egress-allow",
            &allow,
            "--warm-pool",
            "python,cpu=0.25,mem=256m,count=1",
        ],
    );
    let pooled = s.wait_for(180, "a ready pool pod", || {
        let ready = s.bai(&s.admin, &["agents"]).stdout.contains("1 of 1 ready");
        let free: Vec<String> = pool_pods(&cluster, &ns)
            .into_iter()
            .filter_map(|(pod, session)| session.is_none().then_some(pod))
            .collect();
        (ready && free.len() == 1).then(|| free[0].clone())
    });
    start(&s, "en-p", &[]);
    assert_eq!(
        pool_pods(&cluster, &ns).get(&pooled),
        Some(&Some("en-p".to_string())),
        "en-p took the pool pod\nagent log:\n{}",
        log()
    );
    connects(
        &s,
        "en-p",
        &[
            ("allowed", &node_ip, allowed_port, "open"),
            ("node", &node_ip, closed_port, "refused"),
            ("host", &host_ip, closed_port, "refused"),
            ("other-session", &a_ip, 8123, "refused"),
        ],
        "en-p from the pool under default",
        &log,
    );
    group(&s, &["--warm-pool", ""]);
    for name in ["en-p", "en-a"] {
        s.bai(&s.admin, &["rm", name]).expect_ok();
    }
    assert!(
        log().contains("egress rules loaded into the pod's network namespace"),
        "{}",
        log()
    );
}

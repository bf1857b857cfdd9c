//! One agent process for many nodes (`--each-node --runner-reach network`): every node the
//! selector matches joins as an agent of its own, bai's scheduler places kernels node by
//! node, and the pods are detached (nothing of the agent's machine in them), their runners
//! reached over the "pod network". The test plays both nodes' kubelets: for each pod it
//! starts `bai-krunner` on this machine at a loopback address of its own (as the pod's IP),
//! handing it the kernel's Secret as the kubelet would mount it, and reports the pod running
//! at that address.

use super::world::*;
use bai_e2e::bin;
use bai_e2e::kube::{KubeAgent, manager_for_pods};
use bai_e2e::remote::{agent_command, wait_status};
use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A detached kernel's runner as the kubelet would start it: the pod's Secret written out
/// as its volume would show it, krunner at `ip`:2001 with its own home and run directory.
struct NetRunner {
    child: Child,
    dir: tempfile::TempDir,
}

impl NetRunner {
    fn start(cluster: &Cluster, ns: &str, pod: &str, ip: &str) -> NetRunner {
        let dir = tempfile::Builder::new()
            .prefix("bai-netrunner-")
            .tempdir()
            .unwrap();
        let secret: Value = serde_json::from_str(
            &cluster.ok(&["get", "secret", pod, "-n", ns, "-o", "json"], None),
        )
        .unwrap();
        let volume = dir.path().join("secret");
        for d in ["secret", "run", "work"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        for (key, b64) in secret["data"].as_object().expect("the Secret's data") {
            use base64::Engine;
            let data = base64::engine::general_purpose::STANDARD
                .decode(b64.as_str().unwrap())
                .unwrap();
            std::fs::write(volume.join(key), data).unwrap();
        }
        let child = Command::new(bin("bai-krunner"))
            .env("BAI_KRUNNER_SOCKET", dir.path().join("run/krunner.sock"))
            .env("BAI_KRUNNER_WORKDIR", dir.path().join("work"))
            .env("BAI_KRUNNER_SECRET", &volume)
            .env("BAI_KRUNNER_LISTEN", format!("{ip}:2001"))
            // No REPL: the agent only needs the runner to answer.
            .env("BAI_PYTHON", "/nonexistent/python3")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start bai-krunner");
        NetRunner { child, dir }
    }

    fn home(&self) -> std::path::PathBuf {
        self.dir.path().join("work")
    }
}

impl Drop for NetRunner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The pod of session `name` in `ns` once the scheduler bound it.
fn bound_pod_of(cluster: &Cluster, ns: &str, name: &str) -> Value {
    let mut found = None;
    let ok = bai_e2e::wait_until(Duration::from_secs(LIMIT), || {
        found = cluster.pods(ns).into_iter().find(|p| {
            p["metadata"]["annotations"]["ai.bai/session-name"] == name
                && p["spec"]["nodeName"].is_string()
        });
        found.is_some()
    });
    assert!(ok, "no bound pod of {name} in {ns}");
    found.unwrap()
}

/// Two nodes, one agent process: each node is an agent (`NAME-NODE`) offering its own room;
/// two sessions too large to share a node run one on each, each pod bound to its agent's
/// node, each detached (no hostPath, its Secret owned by it), each runner reached at its own
/// address with its own token; the owner's dotfile arrives with its mode through the
/// Secret, an upload through the network into the right kernel's home; `bai rm` leaves no
/// pod and no Secret.
#[test]
fn one_process_offers_every_node_each_as_an_agent() {
    let cluster = Cluster::get();
    let pid = std::process::id();
    let pool = format!("each-{pid}");
    let nodes: Vec<FakeNode> = (1..=2)
        .map(|i| FakeNode::register(&cluster, &format!("bai-fake-each{i}-{pid}"), 110))
        .collect();
    for n in &nodes {
        cluster.ok(
            &["label", "node", &n.name, &format!("bai-test-pool={pool}")],
            None,
        );
    }
    let ns = format!("bai-api-each-{pid}");
    let (s, port, token) = manager_for_pods(&[]);
    let agent = KubeAgent::start_with(
        "kapi-each",
        &format!("127.0.0.1:{port}"),
        &token,
        &cluster.kubeconfig,
        &ns,
        &[
            "--each-node".into(),
            "--node-selector".into(),
            format!("bai-test-pool={pool}"),
            "--runner-reach".into(),
            "network".into(),
            // Never pulled: no kubelet runs here.
            "--runner-image".into(),
            "bai-e2e/runner:played".into(),
        ],
    );
    let ids: Vec<String> = nodes
        .iter()
        .map(|n| format!("kapi-each-{}", n.name))
        .collect();
    for id in &ids {
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            wait_status(&s, id, "ALIVE", LIMIT)
        }));
        assert!(ok.is_ok(), "{id} did not join:\n{}", agent.log());
    }
    let listed = s.bai(&s.admin, &["agents"]);
    assert!(
        ids.iter().all(|id| listed.stdout.contains(id.as_str())),
        "{listed:?}"
    );

    std::fs::write(s.work.path().join("vimrc"), "set number\n").unwrap();
    s.bai(
        &s.admin,
        &["dotfile", "create", ".vimrc", "-f", "vimrc", "-p", "600"],
    )
    .expect_ok();
    // Six of each node's eight cores: the two sessions cannot share a node.
    let mut runners = Vec::new();
    let mut placed = Vec::new();
    for (i, name) in ["keach1", "keach2"].iter().enumerate() {
        let r = s.bai(
            &s.admin,
            &[
                "start",
                "--enqueue-only",
                "-t",
                name,
                "-r",
                "cpu=6",
                "-r",
                "mem=1g",
                "python",
            ],
        );
        assert!(r.ok(), "{r:?}\nagent:\n{}", agent.log());
        let pod = bound_pod_of(&cluster, &ns, name);
        let pod_name = pod_name(&pod);
        let node = pod["spec"]["nodeName"].as_str().unwrap().to_string();
        assert_eq!(
            pod["metadata"]["labels"]["ai.bai.agent"],
            format!("kapi-each-{node}").as_str(),
            "the pod of the node's own agent: {pod}"
        );
        let volumes = pod["spec"]["volumes"].as_array().unwrap();
        assert!(
            volumes.iter().all(|v| v.get("hostPath").is_none()),
            "{volumes:?}"
        );
        let secret: Value = serde_json::from_str(
            &cluster.ok(&["get", "secret", &pod_name, "-n", &ns, "-o", "json"], None),
        )
        .unwrap();
        assert_eq!(
            secret["metadata"]["ownerReferences"][0]["uid"], pod["metadata"]["uid"],
            "{secret}"
        );
        let ip = format!("127.0.57.{}", i + 1);
        runners.push(NetRunner::start(&cluster, &ns, &pod_name, &ip));
        let mut status = running();
        status["podIP"] = Value::String(ip.clone());
        cluster.set_status(&ns, &pod_name, status);
        let ok = bai_e2e::wait_until(Duration::from_secs(LIMIT), || {
            s.status(&s.admin, name) == "RUNNING"
        });
        assert!(
            ok,
            "{name} is not RUNNING: {}\nagent:\n{}",
            s.info(&s.admin, name),
            agent.log()
        );
        placed.push(node);
    }
    assert_ne!(placed[0], placed[1], "both sessions on one node");

    // The dotfile came through each kernel's Secret, unpacked by its runner with its mode.
    for r in &runners {
        let vimrc = r.home().join(".vimrc");
        assert_eq!(std::fs::read_to_string(&vimrc).unwrap(), "set number\n");
        assert_eq!(std::fs::metadata(&vimrc).unwrap().mode() & 0o777, 0o600);
    }
    // An upload goes to the kernel's own runner over the network, and only there.
    std::fs::write(s.work.path().join("payload.txt"), "to the second node\n").unwrap();
    s.bai(&s.admin, &["upload", "keach2", "payload.txt"])
        .expect_ok();
    assert_eq!(
        std::fs::read_to_string(runners[1].home().join("payload.txt"))
            .ok()
            .as_deref(),
        Some("to the second node\n")
    );
    assert!(!runners[0].home().join("payload.txt").exists());
    let files = s.bai(&s.admin, &["session", "files", "keach2"]);
    assert!(
        files.ok() && files.stdout.contains("payload.txt"),
        "{files:?}"
    );

    for name in ["keach1", "keach2"] {
        s.bai(&s.admin, &["rm", name]).expect_ok();
    }
    let gone = bai_e2e::wait_until(Duration::from_secs(LIMIT), || {
        let secrets = cluster.kubectl(&["get", "secrets", "-n", &ns, "-l", MANAGED, "-o", "name"]);
        cluster.pods(&ns).is_empty()
            && secrets.status.success()
            && secrets.stdout.iter().all(u8::is_ascii_whitespace)
    });
    assert!(
        gone,
        "pods or Secrets left in {ns}\nagent:\n{}",
        agent.log()
    );
    drop(runners);
    drop(agent);
    drop(s);
    let _ = cluster.kubectl(&["delete", "namespace", &ns, "--wait=false"]);
}

/// `--each-node` without `--runner-reach network`, network mode without `--runner-image`,
/// and a credential kept in a Secret without the Kubernetes backend: each one line, exit 2,
/// before anything joins.
#[test]
fn each_node_needs_the_runner_on_the_pod_network() {
    let cluster = Cluster::get();
    let dir = tempfile::tempdir().unwrap();
    let token = bai_e2e::remote::unissued_join_token();
    // `baid agent ARGS` is refused in one line, exit 2, saying `why`.
    let refused = |args: &[String], why: &str| {
        let out = agent_command(
            Command::new(bin("baid")),
            "k",
            "127.0.0.1:1",
            &token,
            dir.path(),
        )
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run baid agent");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "one line: {err}");
        assert!(lines[0].contains(why), "{err}");
    };
    let kubeconfig = cluster.kubeconfig.display().to_string();
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    refused(
        &args(&[
            "--backend",
            "kubernetes",
            "--each-node",
            "--kubeconfig",
            &kubeconfig,
        ]),
        "--each-node needs --runner-reach network",
    );

    // Network mode without the image its pods' runner comes from.
    let node = FakeNode::register(
        &cluster,
        &format!("bai-fake-noimage-{}", std::process::id()),
        110,
    );
    let selector = format!("kubernetes.io/hostname={}", node.name);
    refused(
        &args(&[
            "--backend",
            "kubernetes",
            "--runner-reach",
            "network",
            "--node-selector",
            &selector,
            "--kubeconfig",
            &kubeconfig,
        ]),
        "--runner-reach network needs --runner-image",
    );

    // A Secret to keep the credential in, but no cluster to keep it in.
    refused(
        &args(&["--credentials", "secret"]),
        "--credentials secret needs --backend kubernetes",
    );
}

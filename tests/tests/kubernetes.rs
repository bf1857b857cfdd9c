//! The Kubernetes agent backend (issue 57) end to end, on the full-node tier: a real
//! single-node cluster (`scripts/kube-cluster.sh`, kubelet on this machine's Docker engine),
//! a manager with no agent of its own, and `baid agent --backend kubernetes` joining it.
//! `bai run --rm -c 'print(1)'` runs in a pod of the agent's namespace, and nothing labelled
//! by bai is left there afterwards. A session's uploads, downloads, listing, dotfiles and
//! counters work on a pod, and so do its apps through the app proxy (SSH and SCP, the web
//! terminal, Jupyter, a preopen port: `kubernetes/apps.rs`). Detached pods
//! (`--runner-reach network`: the runner from an init container, the kernel's files in its
//! own Secret and through its runner) run the files, cluster-session and multi-node tests
//! again. The agent with only its least role: `kubernetes/least_role.rs`; in the cluster as
//! a DaemonSet (`kubernetes/in_cluster.rs`) and as one unprivileged Deployment for every node
//! (`kubernetes/in_cluster_each_node.rs`). The agent's own enforcement of egress policies
//! and isolation in each pod's network namespace (`--network-policies node`:
//! `kubernetes/egress_node.rs`). A kubeconfig that does not work is one line and exit 2.
//!
//! The cluster is `BAI_TEST_KUBECONFIG` when set (the test runner starts one for all tests);
//! otherwise the first test starts one, shared by the tests running beside it, and the last
//! one stops it. It reuses the machine's running kubelet cluster when there is one (only one
//! may run per machine).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

#[path = "kubernetes/apps.rs"]
mod apps;

#[path = "kubernetes/commit.rs"]
mod commit;

use bai_e2e::bin;
use bai_e2e::images::run_rm;
use bai_e2e::kube::{Cluster, MANAGED, joined, joined_with, runner_image};
use bai_e2e::remote::agent_command;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Held by the tests that take much of the one node's room (the preemption's 60 % of its
/// free CPU, the pool's 65 % of its memory, the in-cluster agents with their kernels), by
/// the detached pool's (its refills need room free), and by
/// the one whose two agents offer that same
/// node (each counts the node's free room as its own, so that test needs twice its kernels'
/// room free): never two of them at once, whatever order the runner picks.
pub static NODE_ROOM: Mutex<()> = Mutex::new(());

/// [`NODE_ROOM`], also after a test that held it failed.
pub fn node_room() -> std::sync::MutexGuard<'static, ()> {
    NODE_ROOM.lock().unwrap_or_else(|p| p.into_inner())
}

#[path = "kubernetes/egress_node.rs"]
mod egress_node;

#[path = "kubernetes/in_cluster.rs"]
mod in_cluster;

#[path = "kubernetes/in_cluster_node.rs"]
mod in_cluster_node;

#[path = "kubernetes/in_cluster_each_node.rs"]
mod in_cluster_each_node;

#[path = "kubernetes/least_role.rs"]
mod least_role;

#[path = "kubernetes/multi_node.rs"]
mod multi_node;

#[path = "kubernetes/pool.rs"]
mod pool;

#[path = "kubernetes/users.rs"]
mod users;

#[test]
fn a_session_runs_as_a_pod_and_leaves_nothing() {
    let cluster = Cluster::get();
    let ns = format!("bai-e2e-{}", std::process::id());
    let (s, agent) = joined("kube-1", &[], &cluster.kubeconfig, &ns);

    // Watch the namespace while the session runs: its pod must be there.
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (seen, stop) = (seen.clone(), stop.clone());
        let (kubectl, kc, ns) = (
            cluster.kubectl.clone(),
            cluster.kubeconfig.clone(),
            ns.clone(),
        );
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let c = Cluster {
                    kubeconfig: kc.clone(),
                    kubectl: kubectl.clone(),
                    owned: None,
                };
                for p in c.bai_pods(&ns) {
                    let mut seen = seen.lock().unwrap();
                    if !seen.contains(&p) {
                        seen.push(p);
                    }
                }
                std::thread::sleep(Duration::from_millis(300));
            }
        })
    };
    let t = Instant::now();
    let r = run_rm(
        &s,
        &s.admin,
        &["cpu=0.5", "mem=256m"],
        "import time; time.sleep(2); print(1)",
        "python",
    );
    let took = t.elapsed();
    stop.store(true, Ordering::Relaxed);
    watcher.join().unwrap();
    assert!(r.ok(), "bai run failed: {r:?}\nagent:\n{}", agent.log());
    assert_eq!(r.stdout.trim(), "1", "{r:?}");
    eprintln!("bai run --rm on Kubernetes took {took:?}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "one pod for the session: {seen:?}");
    assert!(seen[0].starts_with("pod/bai-k-"), "{seen:?}");

    // Nothing of bai is left in the namespace, and none of its containers runs on the node
    // (the kubelet removes stopped containers at its next garbage collection, within a
    // minute).
    cluster.wait_no_pods(&ns);
    let filter = format!("label=io.kubernetes.pod.namespace={ns}");
    let containers_gone = bai_e2e::wait_until(Duration::from_secs(30), || {
        let out = Command::new("docker")
            .args(["ps", "-q", "--filter", &filter])
            .output()
            .expect("docker ps");
        out.stdout.iter().all(u8::is_ascii_whitespace)
    });
    assert!(
        containers_gone,
        "the session's containers are still on the node"
    );
    let kernels = agent.data.path().join("kernels");
    let left = std::fs::read_dir(&kernels).map(|d| d.count()).unwrap_or(0);
    assert_eq!(
        left,
        0,
        "kernel directories left under {}",
        kernels.display()
    );

    drop(agent);
    drop(s);
    cluster.kubectl(&["delete", "namespace", &ns, "--wait=false"]);
}

/// A session's files and counters on the Kubernetes backend: an upload lands in the pod's
/// /home/work owned by the kernel's user, a folder made in the session comes back as a
/// download, a missing path is one clear line, and the runner's cgroup readings feed
/// `bai session stats` (what the utilization idle checker judges).
#[test]
fn a_pod_sessions_files_and_counters() {
    files_and_counters("socket");
}

/// The same with the runner reached over the pod network (`--runner-reach network`), as an
/// agent that does not share the kernel's node reaches it: code, listing, download and
/// counters all go to the pod's IP with the kernel's token; a connection without the token
/// is closed unanswered.
#[test]
fn a_pod_sessions_files_and_counters_with_the_runner_on_the_pod_network() {
    files_and_counters("network");
}

fn files_and_counters(reach: &str) {
    let cluster = Cluster::get();
    let ns = format!("bai-e2e-files-{reach}-{}", std::process::id());
    let mut args = vec!["--runner-reach".to_string(), reach.to_string()];
    if reach == "network" {
        args.extend(["--runner-image".to_string(), runner_image()]);
    }
    let (s, agent) = joined_with(
        &format!("kube-files-{reach}"),
        &[("BAI_MONITOR_INTERVAL_MS", "300")],
        &args,
        &cluster.kubeconfig,
        &ns,
    );
    std::fs::write(s.work.path().join("vimrc"), "set number\n").unwrap();
    s.bai(
        &s.admin,
        &["dotfile", "create", ".vimrc", "-f", "vimrc", "-p", "600"],
    )
    .expect_ok();
    agent.started(
        &s,
        &s.admin,
        "kfiles",
        &["-r", "cpu=0.5", "-r", "mem=256m", "python"],
        120,
    );

    std::fs::write(s.work.path().join("payload.txt"), "into the pod\n").unwrap();
    s.bai(&s.admin, &["upload", "kfiles", "payload.txt"])
        .expect_ok();
    let code = "import os; print(open('payload.txt').read().strip(), os.stat('payload.txt').st_uid); \
                os.makedirs('out', exist_ok=True); open('out/r.txt', 'w').write('result'); \
                st = os.stat('.vimrc'); print('vimrc', oct(st.st_mode & 0o777), st.st_uid, open('.vimrc').read().strip()); \
                print('hook', os.path.isfile('/etc/profile.d/zz-bai-environ.sh'))";
    let r = s.bai(&s.admin, &["run", "-t", "kfiles", "-c", code, "python"]);
    assert!(r.ok(), "{r:?}\nagent:\n{}", agent.log());
    assert!(r.stdout.contains("into the pod 1000"), "{r:?}");
    // The owner's dotfile is in the home before the session starts, and the login-shell
    // hook that keeps the session's PATH in the web terminal is mounted, as on Docker.
    assert!(r.stdout.contains("vimrc 0o600 1000 set number"), "{r:?}");
    assert!(r.stdout.contains("hook True"), "{r:?}");

    let ls = s.bai(&s.admin, &["session", "files", "kfiles", "out"]);
    assert!(ls.ok() && ls.stdout.contains("r.txt"), "{ls:?}");
    std::fs::create_dir_all(s.work.path().join("back")).unwrap();
    s.bai(&s.admin, &["download", "kfiles", "out", "--dest", "back"])
        .expect_ok();
    let back = std::fs::read_to_string(s.work.path().join("back/out/r.txt"));
    assert_eq!(back.ok().as_deref(), Some("result"));
    let missing = s.bai(
        &s.admin,
        &["download", "kfiles", "nope.txt", "--dest", "back"],
    );
    assert!(!missing.ok(), "{missing:?}");
    assert!(missing.stderr.contains("nope.txt"), "{missing:?}");
    if reach == "network" {
        over_the_pod_network_only_with_the_token(&cluster, &ns);
        // A larger upload than one request carries travels in pieces, whole.
        let big: Vec<u8> = (0..(20u32 << 20)).map(|i| (i % 251) as u8).collect();
        std::fs::write(s.work.path().join("big.bin"), &big).unwrap();
        s.bai(&s.admin, &["upload", "kfiles", "big.bin"])
            .expect_ok();
        let r = s.bai(
            &s.admin,
            &["run", "-t", "kfiles", "-c",
              "import os; d = open('big.bin', 'rb').read(); print(len(d), d == bytes(i % 251 for i in range(len(d))), os.stat('big.bin').st_uid)",
              "python"],
        );
        let want = format!("{} True 1000", big.len());
        assert!(r.ok() && r.stdout.contains(&want), "{r:?}\nwant {want}");
    }
    // A name that climbs out of the home is refused by the manager, whatever the client
    // (bai's own sends names relative to its base directory, so it is sent by hand).
    let (status, body) = upload_named(&s, &s.admin, "kfiles", "../x");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("must not contain '..'"), "{body}");

    // Counters from the pod's own cgroup, sampled by the manager.
    let stats = s.wait_for(120, "counters of the pod", || {
        let r = s.bai(&s.admin, &["session", "stats", "--json", "kfiles"]);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).ok()?;
        let enough = v["samples"].as_array().is_some_and(|a| a.len() >= 2);
        (enough && v["counters"]["cpu_used_ns"].as_u64() > Some(0)).then_some(v)
    });
    assert!(stats["counters"]["mem_bytes"].as_u64() > Some(0), "{stats}");
    assert!(
        stats["samples"]
            .as_array()
            .and_then(|a| a.last())
            .and_then(|l| l["mem_bytes"].as_u64())
            > Some(0),
        "{stats}"
    );

    s.bai(&s.admin, &["rm", "kfiles"]).expect_ok();
    cluster.wait_no_pods(&ns);
    drop(agent);
    drop(s);
    cluster.kubectl(&["delete", "namespace", &ns, "--wait=false"]);
}

/// `POST /session/{reference}/upload` of one part whose file name is `name`, signed as
/// `acct`: the answer's status and body.
fn upload_named(
    s: &bai_e2e::Server,
    acct: &bai_e2e::Account,
    reference: &str,
    name: &str,
) -> (u16, String) {
    let path = format!("/session/{reference}/upload");
    let form = reqwest::multipart::Form::new().part(
        "src",
        reqwest::multipart::Part::bytes(b"escaped".to_vec()).file_name(name.to_string()),
    );
    let ct = format!("multipart/form-data; boundary={}", form.boundary());
    let signed = s.client(acct).sign_headers("POST", &path, Some(&ct));
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        // `multipart` sets the Content-Type (the one signed) itself.
        let mut req = reqwest::Client::new()
            .post(format!("{}{path}", s.endpoint))
            .multipart(form);
        for (k, v) in signed.headers.iter().filter(|(k, _)| *k != "Content-Type") {
            req = req.header(*k, v);
        }
        let r = req.send().await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap_or_default())
    })
}

/// The kernel's pod listens on the pod network where the agent reaches it there, and a
/// connection from this machine (as another pod would) that does not open with the
/// kernel's token is closed unanswered; one that does is answered. The pod needs nothing of
/// the node's disk: no hostPath, the runner from an init container, the token in the
/// kernel's own Secret, owned by the pod.
fn over_the_pod_network_only_with_the_token(cluster: &Cluster, ns: &str) {
    use std::io::{Read, Write};
    let out = cluster.kubectl(&["-n", ns, "get", "pods", "-l", MANAGED, "-o", "json"]);
    let pods: serde_json::Value = serde_json::from_slice(&out.stdout).expect("pods");
    let pod = &pods["items"][0];
    let env = &pod["spec"]["containers"][0]["env"];
    let listen = env
        .as_array()
        .and_then(|e| e.iter().find(|v| v["name"] == "BAI_KRUNNER_LISTEN"))
        .map(|v| v["value"].clone());
    assert_eq!(listen, Some(serde_json::json!("0.0.0.0:2001")), "{pod}");
    let volumes = pod["spec"]["volumes"].as_array().expect("volumes");
    assert!(
        volumes.iter().all(|v| v.get("hostPath").is_none()),
        "a detached pod mounts nothing of the node: {volumes:?}"
    );
    assert_eq!(pod["spec"]["initContainers"][0]["name"], "runner", "{pod}");
    let name = pod["metadata"]["name"].as_str().expect("the pod's name");
    let secret = cluster.kubectl(&["-n", ns, "get", "secret", name, "-o", "json"]);
    let secret: serde_json::Value = serde_json::from_slice(&secret.stdout).expect("the Secret");
    assert_eq!(
        secret["metadata"]["ownerReferences"][0]["uid"], pod["metadata"]["uid"],
        "the kernel's Secret is its pod's: {secret}"
    );
    let token = secret["data"]["krunner.token"]
        .as_str()
        .and_then(|t| {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.decode(t).ok()
        })
        .map(|t| String::from_utf8_lossy(&t).trim().to_string())
        .expect("the runner's token in the kernel's Secret");
    let ip = pod["status"]["podIP"].as_str().expect("the pod's IP");
    let ask = |first: &str| {
        let mut c = std::net::TcpStream::connect((ip, 2001)).expect("the runner's port");
        c.write_all(format!("{first}\n{{\"op\":\"ping\"}}\n").as_bytes())
            .unwrap();
        let mut answer = String::new();
        let _ = c.read_to_string(&mut answer);
        answer
    };
    assert_eq!(ask(""), "", "answered without the token");
    assert_eq!(
        ask("0123456789abcdef0123456789abcdef"),
        "",
        "answered another token"
    );
    assert!(
        ask(&token).contains("pong"),
        "the kernel's token is answered"
    );
}

/// A cluster session of pods: `--cluster-size 2` makes two pods on the node (main1, sub1);
/// without cluster DNS each kernel finds the other by hostname (the session's host table at
/// `/etc/hosts`, at the pods' own addresses), and `ssh sub1` runs there with the session's
/// key, as on Docker; `bai rm` leaves no pod.
#[test]
fn a_cluster_session_of_pods_reaches_its_kernels_by_hostname_and_ssh() {
    cluster_session_by_hostname_and_ssh("socket");
}

/// The same with detached pods (`--runner-reach network`): the session's keys come in each
/// kernel's own Secret, and each host table is written by its kernel's runner as the pods
/// get their addresses; `bai rm` leaves no Secret either.
#[test]
fn a_cluster_session_of_detached_pods_reaches_its_kernels_by_hostname_and_ssh() {
    cluster_session_by_hostname_and_ssh("network");
}

fn cluster_session_by_hostname_and_ssh(reach: &str) {
    let cluster = Cluster::get();
    let ns = format!("bai-e2e-clu-{reach}-{}", std::process::id());
    let mut args = vec!["--runner-reach".to_string(), reach.to_string()];
    if reach == "network" {
        args.extend(["--runner-image".to_string(), runner_image()]);
    }
    let (s, agent) = joined_with(
        &format!("kube-clu-{reach}"),
        &[],
        &args,
        &cluster.kubeconfig,
        &ns,
    );
    agent.started(
        &s,
        &s.admin,
        "kclu",
        &[
            "--cluster-size",
            "2",
            "-r",
            "cpu=0.25",
            "-r",
            "mem=256m",
            "python",
        ],
        180,
    );
    // Each kernel's pod and its address, by hostname.
    let out = cluster.kubectl(&["get", "pods", "-n", &ns, "-l", MANAGED, "-o", "json"]);
    let pods: serde_json::Value = serde_json::from_slice(&out.stdout).expect("pods");
    let addr = |host: &str| {
        pods["items"]
            .as_array()
            .and_then(|a| a.iter().find(|p| p["spec"]["hostname"] == host))
            .and_then(|p| p["status"]["podIP"].as_str())
            .unwrap_or_else(|| panic!("no running pod for {host}: {pods}"))
            .to_string()
    };
    let (main1, sub1) = (addr("main1"), addr("sub1"));
    assert_ne!(main1, sub1);
    let code = "import socket, subprocess\n\
        def sh(*a):\n    r = subprocess.run(list(a), capture_output=True, text=True, timeout=120)\n    print(r.stdout.strip() or r.stderr.strip())\n\
        print('sub1', socket.gethostbyname('sub1'))\n\
        print('main1', socket.gethostbyname('main1'))\n\
        sh('ssh', 'sub1', 'hostname')\n\
        sh('ssh', 'sub1', 'ssh', 'main1', 'hostname')";
    let r = s.bai(&s.admin, &["run", "-t", "kclu", "-c", code, "python"]);
    assert!(r.ok(), "{r:?}\nagent:\n{}", agent.log());
    let lines: Vec<&str> = r.stdout.lines().map(str::trim).collect();
    assert_eq!(
        lines,
        vec![
            format!("sub1 {sub1}").as_str(),
            format!("main1 {main1}").as_str(),
            "sub1",
            "main1"
        ],
        "{r:?}"
    );

    s.bai(&s.admin, &["rm", "kclu"]).expect_ok();
    cluster.wait_no_pods(&ns);
    let no_secret = bai_e2e::wait_until(Duration::from_secs(120), || {
        let out = cluster.kubectl(&["-n", &ns, "get", "secrets", "-l", MANAGED, "-o", "name"]);
        out.status.success() && out.stdout.iter().all(u8::is_ascii_whitespace)
    });
    assert!(no_secret, "a kernel's Secret is left in {ns}");
    drop(agent);
    drop(s);
    cluster.kubectl(&["delete", "namespace", &ns, "--wait=false"]);
}

/// Preemption on the Kubernetes backend: in a group that preempts by priority, an urgent
/// session that needs most of the node preempts a low-priority batch session running as a
/// pod; the victim's processes get SIGTERM through its runner (a trap saves its work), it
/// ends as preempted with its log, and the urgent session then runs as a pod of its own.
#[test]
fn an_urgent_session_preempts_a_pod_which_gets_sigterm() {
    let _room = node_room();
    let cluster = Cluster::get();
    let ns = format!("bai-e2e-pre-{}", std::process::id());
    let (s, agent) = joined("kube-pre", &[], &cluster.kubeconfig, &ns);
    s.bai(
        &s.admin,
        &[
            "admin",
            "resource-group",
            "update",
            "default",
            "--preemption",
            "priority",
            "--preemption-grace",
            "10m",
        ],
    )
    .expect_ok();
    // Each asks for 60 % of the node, so one must go for the other (tests beside this one
    // may hold some of the node for a while: their pods are others' to this agent).
    let out = cluster.kubectl(&[
        "get",
        "nodes",
        "-o",
        "jsonpath={.items[0].status.allocatable.cpu}",
    ]);
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let milli: f64 = match text.strip_suffix('m') {
        Some(m) => m.parse::<f64>().unwrap(),
        None => text.parse::<f64>().unwrap() * 1000.0,
    };
    let all = format!("cpu={:.2}", (milli * 0.6).floor() / 1000.0);
    let start = |name: &str, code: &str, priority: &str| {
        let r = s.bai(
            &s.admin,
            &[
                "start",
                "--enqueue-only",
                "--type",
                "batch",
                "-t",
                name,
                "-c",
                code,
                "--priority",
                priority,
                "-r",
                &all,
                "-r",
                "mem=128m",
                "python",
            ],
        );
        assert!(r.ok(), "{r:?}\nagent:\n{}", agent.log());
    };
    start(
        "trapper",
        "trap 'echo saved-on-sigterm; exit 0' TERM; while :; do sleep 1; done",
        "5",
    );
    s.wait_status(&s.admin, "trapper", "RUNNING", 180);
    start("urgent", "sleep 1000", "80");
    let ended = s.wait_status(&s.admin, "trapper", "TERMINATED", 300);
    assert!(
        ended["status_info"]
            .as_str()
            .unwrap_or_default()
            .starts_with("preempted: "),
        "{ended:#}"
    );
    let logs = s.bai(&s.admin, &["logs", "trapper"]);
    assert!(logs.stdout.contains("saved-on-sigterm"), "{logs:?}");
    s.wait_status(&s.admin, "urgent", "RUNNING", 300);
    assert_eq!(
        cluster.bai_pods(&ns).len(),
        1,
        "{:?}",
        cluster.bai_pods(&ns)
    );
    s.bai(&s.admin, &["rm", "urgent"]).expect_ok();
    cluster.wait_no_pods(&ns);
    drop(agent);
    drop(s);
    cluster.kubectl(&["delete", "namespace", &ns, "--wait=false"]);
}

/// A kubeconfig whose API server does not answer: one line on stderr, exit 2, before any
/// manager is dialled.
#[test]
fn a_kubeconfig_that_does_not_work_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: x\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n",
    )
    .unwrap();
    let token = bai_e2e::remote::unissued_join_token();
    let missing = dir.path().join("missing");
    for (config, what) in [(&kc, "127.0.0.1:1"), (&missing, "missing")] {
        let out = agent_command(
            Command::new(bin("baid")),
            "k",
            "127.0.0.1:1",
            &token,
            dir.path(),
        )
        .args(["--backend", "kubernetes"])
        .arg("--kubeconfig")
        .arg(config)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run baid agent");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "one line: {stderr}");
        assert!(
            lines[0].contains("Kubernetes") && lines[0].contains(what),
            "{stderr}"
        );
    }
}

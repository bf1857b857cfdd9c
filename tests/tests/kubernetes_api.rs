//! The Kubernetes agent backend (issue 57) on the API-server-alone tier: etcd, kube-apiserver,
//! the controller manager and the real scheduler (`scripts/kube-cluster.sh start
//! --no-kubelet`), no kubelet. Each test registers a fake Node of its own (allocatable cpu,
//! memory, pods and `nvidia.com/gpu: 2`, Ready, its Lease renewed) and plays that node's
//! kubelet: it starts the kernel's runner (`bai-krunner` on this machine, on the socket of the
//! pod's hostPath directory) and patches the pod's status subresource (Running, a missing
//! image, OOMKilled). A real manager and `baid agent --backend kubernetes` (offering only the
//! test's node, `--node-selector`) run the sessions. Checked: the pod bai makes, the capacity
//! it offers beside another tenant's pod, a pod Kubernetes cannot place or never starts
//! (the session is not stuck: it ends with Kubernetes' reason), a missing image (ERROR naming
//! the image and the node), OOMKilled (out of memory), and nothing of bai left afterwards.
//!
//! The tests of this binary share one cluster while any of them runs (API-only clusters may
//! run beside each other and beside the machine's kubelet cluster); the last one stops it.
//! Waits poll for a condition under a generous limit; nothing is timed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::remote::{agent_command, agents, manager_for_machines, wait_status};
use bai_e2e::{Server, bin};
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const MANAGED: &str = "app.kubernetes.io/managed-by=bai";
const IMAGE: &str = "bai/python:3.11-bookworm";
/// The overall limit of every wait.
const LIMIT: u64 = 120;

/// An API-only cluster this binary started; stopped on drop.
struct Cluster {
    dir: PathBuf,
    kubeconfig: PathBuf,
    kubectl: String,
}

static SHARED: Mutex<std::sync::Weak<Cluster>> = Mutex::new(std::sync::Weak::new());

impl Cluster {
    fn get() -> Arc<Cluster> {
        bai_e2e::kube::shared(&SHARED, Cluster::start)
    }

    fn start() -> Cluster {
        static STARTS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = STARTS.fetch_add(1, Ordering::Relaxed);
        let dir = PathBuf::from(format!("/var/tmp/bai-e2e-kapi.{}.{n}", std::process::id()));
        let t = Instant::now();
        let out = Command::new(bai_e2e::kube::script())
            .args(["start", "--no-kubelet"])
            .arg(&dir)
            .stdin(Stdio::null())
            .output()
            .expect("run kube-cluster.sh");
        if !out.status.success() {
            let logs = std::fs::read_dir(dir.join("logs"))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| {
                    let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                    let tail: Vec<&str> = text.lines().rev().take(20).collect();
                    format!(
                        "--- {}\n{}",
                        e.path().display(),
                        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            let _ = Command::new(bai_e2e::kube::script())
                .arg("stop")
                .arg(&dir)
                .status();
            panic!(
                "cannot start an API-only cluster: {}\n{logs}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let kubeconfig = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        eprintln!("started an API-only cluster in {:?}", t.elapsed());
        let env = std::fs::read_to_string(dir.join("env")).unwrap_or_default();
        let kubectl = env
            .lines()
            .find_map(|l| l.trim().strip_prefix("KUBECTL="))
            .map(|v| v.trim_matches(|c| c == '"' || c == '\'').to_string())
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| "kubectl".into());
        Cluster {
            dir,
            kubeconfig,
            kubectl,
        }
    }

    fn kubectl_in(&self, args: &[&str], input: Option<&str>) -> std::process::Output {
        let mut c = Command::new(&self.kubectl);
        c.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            });
        let mut child = c.spawn().expect("run kubectl");
        if let Some(text) = input {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        child.wait_with_output().expect("kubectl output")
    }

    fn kubectl(&self, args: &[&str]) -> std::process::Output {
        self.kubectl_in(args, None)
    }

    /// Runs kubectl and panics with its stderr when it fails.
    #[track_caller]
    fn ok(&self, args: &[&str], input: Option<&str>) -> String {
        let out = self.kubectl_in(args, input);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn apply(&self, object: &Value) {
        self.ok(&["apply", "-f", "-"], Some(&object.to_string()));
    }

    /// Every pod of `ns` (bai's and others'), as JSON.
    fn pods(&self, ns: &str) -> Vec<Value> {
        let out = self.kubectl(&["get", "pods", "-n", ns, "-o", "json"]);
        serde_json::from_slice::<Value>(&out.stdout)
            .ok()
            .and_then(|v| v["items"].as_array().cloned())
            .unwrap_or_default()
    }

    /// The first pod of bai's in `ns` once the scheduler bound it to a node.
    fn bound_bai_pod(&self, ns: &str) -> Value {
        let mut found = None;
        let ok = bai_e2e::wait_until(Duration::from_secs(LIMIT), || {
            let out = self.kubectl(&["get", "pods", "-n", ns, "-l", MANAGED, "-o", "json"]);
            found = serde_json::from_slice::<Value>(&out.stdout)
                .ok()
                .and_then(|v| v["items"].as_array()?.first().cloned())
                .filter(|p| p["spec"]["nodeName"].is_string());
            found.is_some()
        });
        assert!(ok, "no pod of bai's was bound to a node in {ns}");
        found.unwrap()
    }

    /// The first pod of bai's in `ns` (bound or not).
    fn bai_pod(&self, ns: &str) -> Value {
        let mut found = None;
        let ok = bai_e2e::wait_until(Duration::from_secs(LIMIT), || {
            let out = self.kubectl(&["get", "pods", "-n", ns, "-l", MANAGED, "-o", "json"]);
            found = serde_json::from_slice::<Value>(&out.stdout)
                .ok()
                .and_then(|v| v["items"].as_array()?.first().cloned());
            found.is_some()
        });
        assert!(ok, "no pod of bai's in {ns}");
        found.unwrap()
    }

    /// Plays the kubelet: patches a pod's status subresource.
    fn set_status(&self, ns: &str, pod: &str, status: Value) {
        self.ok(
            &[
                "patch",
                "pod",
                pod,
                "-n",
                ns,
                "--subresource=status",
                "--type=strategic",
                "-p",
                &json!({ "status": status }).to_string(),
            ],
            None,
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(bai_e2e::kube::script())
            .arg("stop")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .status();
    }
}

/// Now as a Lease's `renewTime` (microseconds).
fn now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

/// Now as a condition's or a state's time (seconds).
fn stamp() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A fake Node, Ready, whose Lease a thread renews (else the node-lifecycle controller marks
/// it NotReady after about 40 s); deleted on drop.
struct FakeNode {
    cluster: Arc<Cluster>,
    name: String,
    stop: Arc<AtomicBool>,
    renewer: Option<std::thread::JoinHandle<()>>,
}

impl FakeNode {
    /// `pods`: how many pods the node allows.
    fn register(cluster: &Arc<Cluster>, name: &str, pods: u32) -> FakeNode {
        cluster.apply(&json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}
        }));
        let hb = stamp();
        let resources = json!({"cpu": "8", "memory": "32Gi", "pods": pods.to_string(),
            "nvidia.com/gpu": "2"});
        cluster.ok(
            &[
                "patch",
                "node",
                name,
                "--subresource=status",
                "--type=merge",
                "-p",
                &json!({"status": {
                    "capacity": resources, "allocatable": resources,
                    "images": [{"names": [IMAGE], "sizeBytes": 1_000_000_000u64}],
                    "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux",
                        "machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "",
                        "osImage": "", "containerRuntimeVersion": "", "kubeletVersion": "v1.20.2",
                        "kubeProxyVersion": ""},
                    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "lastHeartbeatTime": hb, "lastTransitionTime": hb}]
                }})
                .to_string(),
            ],
            None,
        );
        // The node-lifecycle controller may taint a node it saw without a Ready condition for
        // a moment; the scheduler must see it Ready and untainted before the agent joins.
        let usable = bai_e2e::wait_until(Duration::from_secs(LIMIT), || {
            let out = cluster.kubectl(&["get", "node", name, "-o", "json"]);
            let Ok(node) = serde_json::from_slice::<Value>(&out.stdout) else {
                return false;
            };
            let ready = node["status"]["conditions"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            });
            ready && node["spec"]["taints"].as_array().is_none_or(Vec::is_empty)
        });
        assert!(usable, "the fake node {name} is not Ready and untainted");
        let stop = Arc::new(AtomicBool::new(false));
        let renewer = {
            let (cluster, name, stop) = (cluster.clone(), name.to_string(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let lease = json!({
                        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                        "metadata": {"name": name, "namespace": "kube-node-lease"},
                        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40,
                            "renewTime": now()}
                    });
                    let _ = cluster.kubectl_in(&["apply", "-f", "-"], Some(&lease.to_string()));
                    for _ in 0..50 {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        std::thread::sleep(Duration::from_millis(100));
                    }
                }
            })
        };
        FakeNode {
            cluster: cluster.clone(),
            name: name.to_string(),
            stop,
            renewer: Some(renewer),
        }
    }
}

impl Drop for FakeNode {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.renewer.take() {
            let _ = t.join();
        }
        let _ = self
            .cluster
            .kubectl(&["delete", "node", &self.name, "--wait=false"]);
        let _ = self.cluster.kubectl(&[
            "delete",
            "lease",
            &self.name,
            "-n",
            "kube-node-lease",
            "--wait=false",
        ]);
    }
}

/// A `baid agent --backend kubernetes` offering only `node` (killed on drop).
struct KubeAgent {
    child: Child,
    data: tempfile::TempDir,
}

impl KubeAgent {
    fn log(&self) -> String {
        std::fs::read_to_string(self.data.path().join("agent.log")).unwrap_or_default()
    }

    /// The kernel directories left on the "node" (this machine).
    fn kernel_dirs(&self) -> usize {
        std::fs::read_dir(self.data.path().join("kernels"))
            .map(|d| d.count())
            .unwrap_or(0)
    }
}

impl Drop for KubeAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One test's world: a fake node, a manager, the agent offering the node, pods in `ns`.
/// (Fields drop in this order: the agent and the manager before the node and the cluster.)
struct World {
    agent: KubeAgent,
    s: Server,
    node: FakeNode,
    ns: String,
    cluster: Arc<Cluster>,
}

impl World {
    /// `before_join` runs once the node is there and before the agent joins (another
    /// tenant's pods, say).
    fn new(tag: &str, pods: u32, before_join: impl FnOnce(&Cluster, &str)) -> World {
        let cluster = Cluster::get();
        let pid = std::process::id();
        let node = FakeNode::register(&cluster, &format!("bai-fake-{tag}-{pid}"), pods);
        before_join(&cluster, &node.name);
        let ns = format!("bai-api-{tag}-{pid}");
        let (s, port, token) = manager_for_machines(&[]);
        s.bai(
            &s.admin,
            &[
                "admin",
                "resource-group",
                "update",
                "default",
                "--egress",
                "open",
            ],
        )
        .expect_ok();
        let data = tempfile::Builder::new()
            .prefix("bai-kapi-")
            .tempdir()
            .expect("tempdir");
        let log = std::fs::File::create(data.path().join("agent.log")).expect("log");
        let name = format!("kapi-{tag}");
        let mut c = agent_command(
            Command::new(bin("baid")),
            &name,
            &format!("127.0.0.1:{port}"),
            &token,
            data.path(),
        );
        c.args(["--backend", "kubernetes", "--namespace", &ns])
            .arg("--kubeconfig")
            .arg(&cluster.kubeconfig)
            .arg("--node-selector")
            .arg(format!("kubernetes.io/hostname={}", node.name))
            .stdout(log.try_clone().expect("log"))
            .stderr(log);
        let agent = KubeAgent {
            child: c.spawn().expect("spawn baid agent"),
            data,
        };
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            wait_status(&s, &name, "ALIVE", LIMIT)
        }));
        assert!(ok.is_ok(), "the agent did not join:\n{}", agent.log());
        World {
            agent,
            s,
            node,
            ns,
            cluster,
        }
    }

    /// Queues a session (it does not wait for it to run).
    fn start(&self, name: &str, resources: &[&str]) {
        let mut args = vec!["start", "--enqueue-only", "-t", name];
        for r in resources {
            args.extend(["-r", r]);
        }
        args.push("python");
        let r = self.s.bai(&self.s.admin, &args);
        assert!(r.ok(), "{r:?}\nagent:\n{}", self.agent.log());
    }

    /// Waits until the session is in one of `statuses`; returns its fields.
    fn wait_session(&self, name: &str, statuses: &[&str]) -> Value {
        let mut last = Value::Null;
        let ok = bai_e2e::wait_until(Duration::from_secs(LIMIT), || {
            last = self.s.info(&self.s.admin, name);
            statuses.iter().any(|st| last["status"] == *st)
        });
        assert!(
            ok,
            "session {name} is not {statuses:?} but {last}\nagent:\n{}\nmanager:\n{}",
            self.agent.log(),
            self.s.log()
        );
        last
    }

    /// Nothing of bai's is left in the namespace, nor a kernel directory on the node.
    fn assert_nothing_left(&self) {
        let gone = bai_e2e::wait_until(Duration::from_secs(LIMIT), || {
            self.cluster.pods(&self.ns).is_empty() && self.agent.kernel_dirs() == 0
        });
        assert!(
            gone,
            "left: pods {:?}, {} kernel directories\nagent:\n{}",
            self.cluster
                .pods(&self.ns)
                .iter()
                .map(|p| p["metadata"]["name"].clone())
                .collect::<Vec<_>>(),
            self.agent.kernel_dirs(),
            self.agent.log()
        );
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = self
            .cluster
            .kubectl(&["delete", "namespace", &self.ns, "--wait=false"]);
    }
}

/// The kernel's runner as the kubelet would start it: `bai-krunner` on this machine, on the
/// socket in the pod's `run` hostPath directory, its home the `work` one (killed on drop).
struct Runner(Child);

impl Runner {
    fn start(pod: &Value) -> Runner {
        let host = |volume: &str| {
            pod["spec"]["volumes"]
                .as_array()
                .and_then(|v| v.iter().find(|v| v["name"] == volume))
                .and_then(|v| v["hostPath"]["path"].as_str())
                .map(PathBuf::from)
                .unwrap_or_else(|| panic!("no hostPath volume {volume}: {pod}"))
        };
        let child = Command::new(bin("bai-krunner"))
            .env("BAI_KRUNNER_SOCKET", host("run").join("krunner.sock"))
            .env("BAI_KRUNNER_WORKDIR", host("work"))
            // No REPL: the agent only needs the runner to answer.
            .env("BAI_PYTHON", "/nonexistent/python3")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start bai-krunner");
        Runner(child)
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn pod_name(pod: &Value) -> String {
    pod["metadata"]["name"].as_str().unwrap().to_string()
}

/// The kubelet's word that the kernel's container runs.
fn running() -> Value {
    json!({
        "phase": "Running", "podIP": "127.0.0.1",
        "conditions": [{"type": "Ready", "status": "True"}],
        "containerStatuses": [{"name": "kernel", "image": IMAGE, "imageID": "", "ready": true,
            "restartCount": 0, "state": {"running": {"startedAt": stamp()}}}]
    })
}

/// The pod bai makes: requests = limits (millicores, bytes), `nvidia.com/gpu` from
/// `cuda.device`, a memory-backed /dev/shm of the session's shmem, a required affinity to the
/// node bai chose, not privileged, uid 1000. Played to Running, the session runs; removed,
/// nothing of bai is left in the namespace.
#[test]
fn the_pod_bai_makes_runs_and_leaves_nothing() {
    let w = World::new("spec", 110, |_, _| {});
    w.start(
        "kspec",
        &["cpu=0.5", "mem=256m", "shmem=64m", "cuda.device=1"],
    );
    let pod = w.cluster.bound_bai_pod(&w.ns);
    let spec = &pod["spec"];
    // The real scheduler bound it to the node bai chose.
    assert_eq!(spec["nodeName"], w.node.name.as_str(), "{pod}");
    let container = &spec["containers"][0];
    assert_eq!(container["name"], "kernel");
    assert_eq!(container["image"], IMAGE);
    let want = json!({"cpu": "500m", "memory": "268435456", "nvidia.com/gpu": "1"});
    assert_eq!(container["resources"]["requests"], want, "{pod}");
    assert_eq!(container["resources"]["limits"], want, "{pod}");
    assert_eq!(pod["status"]["qosClass"], "Guaranteed", "{pod}");
    let shm = spec["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "shm")
        .unwrap_or_else(|| panic!("no shm volume: {pod}"));
    assert_eq!(
        shm["emptyDir"],
        json!({"medium": "Memory", "sizeLimit": "67108864"})
    );
    let shm_mount = container["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "shm")
        .unwrap();
    assert_eq!(shm_mount["mountPath"], "/dev/shm");
    let terms = &spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"];
    assert_eq!(
        terms,
        &json!([{"matchFields": [{"key": "metadata.name", "operator": "In",
            "values": [w.node.name]}]}]),
        "{pod}"
    );
    let sc = &container["securityContext"];
    assert_eq!(sc["privileged"], false, "{pod}");
    assert_eq!(sc["allowPrivilegeEscalation"], false, "{pod}");
    assert_eq!(sc["runAsUser"], 1000, "{pod}");
    assert_eq!(spec["securityContext"]["runAsUser"], 1000, "{pod}");
    assert_eq!(spec["securityContext"]["runAsNonRoot"], true, "{pod}");
    assert_eq!(spec["automountServiceAccountToken"], false, "{pod}");

    let runner = Runner::start(&pod);
    w.cluster.set_status(&w.ns, &pod_name(&pod), running());
    w.wait_session("kspec", &["RUNNING"]);

    w.s.bai(&w.s.admin, &["rm", "kspec"]).expect_ok();
    w.assert_nothing_left();
    drop(runner);
    let ended = w.wait_session("kspec", &["TERMINATED"]);
    assert_ne!(ended["status_info"], "out-of-memory", "{ended}");
}

/// The agent offers the node's allocatable less what another tenant's pod on it requests;
/// a pod on another node and one that ended count for nothing.
#[test]
fn offered_capacity_is_allocatable_less_other_tenants_requests() {
    let tenant = format!("tenant-{}", std::process::id());
    let w = World::new("cap", 110, |cluster, node| {
        cluster.apply(&json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": tenant}}));
        let pod = |name: &str, node: &str, cpu: &str, mem: &str, gpu: &str| {
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": tenant},
                "spec": {"nodeName": node, "containers": [{"name": "c", "image": "other",
                    "resources": {
                        "requests": {"cpu": cpu, "memory": mem, "nvidia.com/gpu": gpu},
                        "limits": {"cpu": cpu, "memory": mem, "nvidia.com/gpu": gpu}}}]}})
        };
        cluster.apply(&pod("theirs", node, "1500m", "1Gi", "1"));
        cluster.apply(&pod("elsewhere", "some-other-node", "2", "2Gi", "1"));
        cluster.apply(&pod("ended", node, "3", "3Gi", "1"));
        cluster.set_status(
            &tenant,
            "ended",
            json!({"phase": "Succeeded", "containerStatuses": [{"name": "c", "image": "other",
                "imageID": "", "ready": false, "restartCount": 0,
                "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}),
        );
    });
    let a = agents(&w.s)
        .into_iter()
        .find(|a| a.id == "kapi-cap")
        .expect("the agent");
    let cpu: f64 = a.capacity.cpu.parse().unwrap();
    assert!((cpu - 6.5).abs() < 1e-9, "{:?}", a.capacity);
    assert_eq!(
        a.capacity.mem,
        (32u64 * 1024 * 1024 * 1024 - 1024 * 1024 * 1024).to_string(),
        "{:?}",
        a.capacity
    );
    let gpu: f64 = a.capacity.accelerators["cuda.device"].parse().unwrap();
    assert!((gpu - 1.0).abs() < 1e-9, "{:?}", a.capacity);
    // `bai agents` shows the same.
    let listed = w.s.bai(&w.s.admin, &["agents"]);
    assert!(
        listed.ok() && listed.stdout.contains("kapi-cap"),
        "{listed:?}"
    );
    drop(w);
    let _ = Cluster::get().kubectl(&["delete", "namespace", &tenant, "--wait=false"]);
}

/// Another tenant took the node's last pod: the scheduler says Unschedulable, and the session
/// is not left waiting: it ends with the scheduler's reason, and its pod goes.
#[test]
fn a_pod_kubernetes_cannot_place_ends_the_session_with_the_reason() {
    let tenant = format!("tenant-full-{}", std::process::id());
    let w = World::new("full", 1, |cluster, node| {
        cluster.apply(&json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": tenant}}));
        cluster.apply(&json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "theirs", "namespace": tenant},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "other",
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}));
    });
    w.start("kfull", &["cpu=0.5", "mem=256m"]);
    let ended = w.wait_session("kfull", &["ERROR", "TERMINATED", "CANCELLED"]);
    let why = ended["status_info"].as_str().unwrap_or("");
    eprintln!("the session ended: {why}");
    assert!(why.contains("Too many pods"), "{ended}");
    assert!(why.contains(&w.node.name), "{ended}");
    w.assert_nothing_left();
    drop(w);
    let _ = Cluster::get().kubectl(&["delete", "namespace", &tenant, "--wait=false"]);
}

/// A pod bound to its node whose kubelet never starts it (it stays Pending without a word):
/// the session is not stuck; it ends saying the pod is still Pending on that node.
#[test]
fn a_pod_that_stays_pending_does_not_hang_the_session() {
    let w = World::new("pend", 110, |_, _| {});
    w.start("kpend", &["cpu=0.5", "mem=256m"]);
    let pod = w.cluster.bai_pod(&w.ns);
    assert!(pod["metadata"]["name"].is_string());
    let ended = w.wait_session("kpend", &["ERROR", "TERMINATED", "CANCELLED"]);
    let why = ended["status_info"].as_str().unwrap_or("");
    eprintln!("the session ended: {why}");
    assert!(why.contains("Pending"), "{ended}");
    assert!(why.contains(&w.node.name), "{ended}");
    w.assert_nothing_left();
}

/// The image is not on the node (`ErrImageNeverPull`): the session is ERROR, naming the
/// image and the node.
#[test]
fn a_missing_image_fails_the_session_naming_image_and_node() {
    let w = World::new("img", 110, |_, _| {});
    w.start("kimg", &["cpu=0.5", "mem=256m"]);
    let pod = w.cluster.bound_bai_pod(&w.ns);
    w.cluster.set_status(
        &w.ns,
        &pod_name(&pod),
        json!({"phase": "Pending", "containerStatuses": [{"name": "kernel", "image": IMAGE,
            "imageID": "", "ready": false, "restartCount": 0, "state": {"waiting": {
                "reason": "ErrImageNeverPull",
                "message": format!("Container image \"{IMAGE}\" is not present with pull policy of Never")}}}]}),
    );
    let ended = w.wait_session("kimg", &["ERROR"]);
    let why = ended["status_info"].as_str().unwrap_or("");
    eprintln!("the session ended: {why}");
    assert!(why.contains(IMAGE), "{ended}");
    assert!(why.contains(&w.node.name), "{ended}");
    assert!(why.contains("ErrImageNeverPull"), "{ended}");
    w.assert_nothing_left();
}

/// The kernel runs, then its container is OOMKilled: the session ends as out of memory and
/// its pod goes.
#[test]
fn an_oom_killed_kernel_ends_the_session_as_out_of_memory() {
    let w = World::new("oom", 110, |_, _| {});
    w.start("koom", &["cpu=0.5", "mem=256m"]);
    let pod = w.cluster.bound_bai_pod(&w.ns);
    let runner = Runner::start(&pod);
    w.cluster.set_status(&w.ns, &pod_name(&pod), running());
    w.wait_session("koom", &["RUNNING"]);
    drop(runner);
    w.cluster.set_status(
        &w.ns,
        &pod_name(&pod),
        json!({"phase": "Failed", "containerStatuses": [{"name": "kernel", "image": IMAGE,
            "imageID": "", "ready": false, "restartCount": 0, "state": {"terminated": {
                "exitCode": 137, "reason": "OOMKilled"}}}]}),
    );
    let ended = w.wait_session("koom", &["TERMINATED"]);
    assert_eq!(ended["status_info"], "out-of-memory", "{ended}");
    w.assert_nothing_left();
}

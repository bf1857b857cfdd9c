//! The world of the API-server-alone tests: one API-only cluster shared by the binary's
//! tests, a fake Node each test registers (its Lease renewed), the manager and the
//! `baid agent --backend kubernetes` that offers only that node, and the kernel's runner
//! as the kubelet would start it. Waits poll for a condition under a generous limit.

use bai_e2e::kube::manager_for_pods;
use bai_e2e::remote::wait_status;
use bai_e2e::{Server, bin};
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const MANAGED: &str = "app.kubernetes.io/managed-by=bai";
pub const IMAGE: &str = "bai/python:3.11-bookworm";
/// The overall limit of every wait.
pub const LIMIT: u64 = 120;

/// An API-only cluster this binary started; stopped on drop.
pub struct Cluster {
    pub dir: PathBuf,
    pub kubeconfig: PathBuf,
    pub kubectl: String,
}

pub static SHARED: Mutex<std::sync::Weak<Cluster>> = Mutex::new(std::sync::Weak::new());

impl Cluster {
    pub fn get() -> Arc<Cluster> {
        bai_e2e::kube::shared(&SHARED, Cluster::start)
    }

    pub fn start() -> Cluster {
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

    pub fn kubectl_in(&self, args: &[&str], input: Option<&str>) -> std::process::Output {
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

    pub fn kubectl(&self, args: &[&str]) -> std::process::Output {
        self.kubectl_in(args, None)
    }

    /// Runs kubectl and panics with its stderr when it fails.
    #[track_caller]
    pub fn ok(&self, args: &[&str], input: Option<&str>) -> String {
        let out = self.kubectl_in(args, input);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn apply(&self, object: &Value) {
        self.ok(&["apply", "-f", "-"], Some(&object.to_string()));
    }

    /// Every pod of `ns` (bai's and others'), as JSON.
    pub fn pods(&self, ns: &str) -> Vec<Value> {
        let out = self.kubectl(&["get", "pods", "-n", ns, "-o", "json"]);
        serde_json::from_slice::<Value>(&out.stdout)
            .ok()
            .and_then(|v| v["items"].as_array().cloned())
            .unwrap_or_default()
    }

    /// The first pod of bai's in `ns` once the scheduler bound it to a node.
    pub fn bound_bai_pod(&self, ns: &str) -> Value {
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
    pub fn bai_pod(&self, ns: &str) -> Value {
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
    pub fn set_status(&self, ns: &str, pod: &str, status: Value) {
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
pub fn now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

/// Now as a condition's or a state's time (seconds).
pub fn stamp() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A fake Node, Ready, whose Lease a thread renews (else the node-lifecycle controller marks
/// it NotReady after about 40 s); deleted on drop.
pub struct FakeNode {
    pub cluster: Arc<Cluster>,
    pub name: String,
    pub stop: Arc<AtomicBool>,
    pub renewer: Option<std::thread::JoinHandle<()>>,
}

impl FakeNode {
    /// `pods`: how many pods the node allows.
    pub fn register(cluster: &Arc<Cluster>, name: &str, pods: u32) -> FakeNode {
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

/// A `baid agent --backend kubernetes` offering only one node (killed on drop).
pub struct KubeAgent(bai_e2e::kube::KubeAgent);

impl KubeAgent {
    pub fn log(&self) -> String {
        self.0.log()
    }

    /// The kernel directories left on the "node" (this machine).
    pub fn kernel_dirs(&self) -> usize {
        std::fs::read_dir(self.0.data.path().join("kernels"))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    /// Starts `baid agent --backend kubernetes` named `kapi-TAG`, offering only `node`,
    /// joining the manager `s` at `join` (address, token); waits until it is ALIVE.
    fn join(
        cluster: &Cluster,
        s: &Server,
        join: &(String, String),
        ns: &str,
        tag: &str,
        node: &str,
        agent_args: &[&str],
    ) -> KubeAgent {
        let name = format!("kapi-{tag}");
        let mut args = vec![
            "--node-selector".to_string(),
            format!("kubernetes.io/hostname={node}"),
        ];
        args.extend(agent_args.iter().map(|a| a.to_string()));
        let agent = KubeAgent(bai_e2e::kube::KubeAgent::start_with(
            &name,
            &join.0,
            &join.1,
            &cluster.kubeconfig,
            ns,
            &args,
        ));
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            wait_status(s, &name, "ALIVE", LIMIT)
        }));
        assert!(ok.is_ok(), "the agent did not join:\n{}", agent.log());
        agent
    }
}

/// A second node with its agent ([`World::another`]); the agent stops before the node goes.
pub struct Another {
    pub agent: KubeAgent,
    pub node: FakeNode,
}

/// One test's world: a fake node, a manager, the agent offering the node, pods in `ns`.
/// (Fields drop in this order: the agent and the manager before the node and the cluster.)
pub struct World {
    pub agent: KubeAgent,
    pub s: Server,
    pub node: FakeNode,
    pub ns: String,
    pub cluster: Arc<Cluster>,
    /// The manager's address for agents and the first agent's join token.
    join: (String, String),
}

impl World {
    /// `before_join` runs once the node is there and before the agent joins (another
    /// tenant's pods, say).
    pub fn new(tag: &str, pods: u32, before_join: impl FnOnce(&Cluster, &str)) -> World {
        World::with_env(tag, pods, &[], before_join)
    }

    /// As [`World::new`], the manager started with `env` too.
    pub fn with_env(
        tag: &str,
        pods: u32,
        env: &[(&str, &str)],
        before_join: impl FnOnce(&Cluster, &str),
    ) -> World {
        World::with_agent_args(tag, pods, env, &[], before_join)
    }

    /// As [`World::with_env`], the agent started with `agent_args` too.
    pub fn with_agent_args(
        tag: &str,
        pods: u32,
        env: &[(&str, &str)],
        agent_args: &[&str],
        before_join: impl FnOnce(&Cluster, &str),
    ) -> World {
        let cluster = Cluster::get();
        let pid = std::process::id();
        let node = FakeNode::register(&cluster, &format!("bai-fake-{tag}-{pid}"), pods);
        before_join(&cluster, &node.name);
        let ns = format!("bai-api-{tag}-{pid}");
        let (s, port, token) = manager_for_pods(env);
        let join = (format!("127.0.0.1:{port}"), token);
        let agent = KubeAgent::join(&cluster, &s, &join, &ns, tag, &node.name, agent_args);
        World {
            agent,
            s,
            node,
            ns,
            cluster,
            join,
        }
    }

    /// A second fake node and an agent offering it, in the same resource group and
    /// namespace (`before_join` runs once the node is there).
    pub fn another(&self, tag: &str, before_join: impl FnOnce(&Cluster, &str)) -> Another {
        let node = FakeNode::register(
            &self.cluster,
            &format!("bai-fake-{tag}-{}", std::process::id()),
            110,
        );
        before_join(&self.cluster, &node.name);
        let join = (self.join.0.clone(), bai_e2e::remote::join_token(&self.s));
        let agent = KubeAgent::join(
            &self.cluster,
            &self.s,
            &join,
            &self.ns,
            tag,
            &node.name,
            &[],
        );
        Another { agent, node }
    }

    /// Sets the node's Ready condition (`True`, `False`), as its kubelet would.
    pub fn set_ready(&self, status: &str) {
        let hb = stamp();
        self.cluster.ok(
            &[
                "patch",
                "node",
                &self.node.name,
                "--subresource=status",
                "--type=strategic",
                "-p",
                &json!({"status": {"conditions": [{"type": "Ready", "status": status,
                    "reason": "Test", "lastHeartbeatTime": hb, "lastTransitionTime": hb}]}})
                .to_string(),
            ],
            None,
        );
    }

    /// Queues a session (it does not wait for it to run).
    pub fn start(&self, name: &str, resources: &[&str]) {
        let mut args = vec!["start", "--enqueue-only", "-t", name];
        for r in resources {
            args.extend(["-r", r]);
        }
        args.push("python");
        let r = self.s.bai(&self.s.admin, &args);
        assert!(r.ok(), "{r:?}\nagent:\n{}", self.agent.log());
    }

    /// Waits until the session is in one of `statuses`; returns its fields.
    pub fn wait_session(&self, name: &str, statuses: &[&str]) -> Value {
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
    pub fn assert_nothing_left(&self) {
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
pub struct Runner(Child);

impl Runner {
    pub fn start(pod: &Value) -> Runner {
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

pub fn pod_name(pod: &Value) -> String {
    pod["metadata"]["name"].as_str().unwrap().to_string()
}

/// The kubelet's word that the kernel's container runs.
pub fn running() -> Value {
    json!({
        "phase": "Running", "podIP": "127.0.0.1",
        "conditions": [{"type": "Ready", "status": "True"}],
        "containerStatuses": [{"name": "kernel", "image": IMAGE, "imageID": "", "ready": true,
            "restartCount": 0, "state": {"running": {"startedAt": stamp()}}}]
    })
}

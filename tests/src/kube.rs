//! What the Kubernetes test binaries share: the cluster script, one cluster held by the
//! tests of a binary while any of them runs, and the full-node tier's cluster, agent and
//! joined manager ([`Cluster`], [`KubeAgent`], [`joined`]).

use crate::remote::{agent_command, manager_for_machines, wait_status};
use crate::{Account, Server, bin};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

/// `scripts/kube-cluster.sh` of this checkout.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/kube-cluster.sh")
}

/// The `T` in `slot` while a test holds it, else a new one from `make`: tests run side by
/// side share one (one start), and it is dropped (stopped) with the last holder.
pub fn shared<T>(slot: &Mutex<Weak<T>>, make: impl FnOnce() -> T) -> Arc<T> {
    let mut held = slot.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = held.upgrade() {
        return c;
    }
    let c = Arc::new(make());
    *held = Arc::downgrade(&c);
    c
}

pub const MANAGED: &str = "app.kubernetes.io/managed-by=bai";

/// The cluster the test uses; stopped on drop when the test started it.
pub struct Cluster {
    pub kubeconfig: PathBuf,
    pub kubectl: String,
    /// The folder of a cluster this test started (stopped at the end).
    pub owned: Option<PathBuf>,
}

/// `KUBECTL` from the cluster's `env` file, else `kubectl` on the PATH.
pub fn kubectl_of(kubeconfig: &Path) -> String {
    env_of(kubeconfig, "KUBECTL").unwrap_or_else(|| "kubectl".into())
}

/// `KEY` from the `env` file `scripts/kube-cluster.sh start` writes beside the kubeconfig
/// (`BAI_KUBE_NODE`, `BAI_KUBE_NODE_IP`, `BAI_KUBE_SERVER` …), when set and not empty.
pub fn env_of(kubeconfig: &Path, key: &str) -> Option<String> {
    let env = kubeconfig.with_file_name("env");
    let prefix = format!("{key}=");
    std::fs::read_to_string(env)
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                let v = l.trim().strip_prefix("export ").unwrap_or(l.trim());
                v.strip_prefix(&prefix)
                    .map(|v| v.trim_matches(|c| c == '"' || c == '\'').to_string())
            })
        })
        .filter(|k| !k.is_empty())
}

/// `dist/kubernetes/NAME` of this checkout (the manifests shipped).
pub fn dist(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../dist/kubernetes")
        .join(name)
}

/// Held by a test that uses `dist/kubernetes/rbac.yaml` as it is (the namespace `bai`, the
/// cluster-wide role `bai-agent`): one such test at a time in a binary.
static DIST_OBJECTS: Mutex<()> = Mutex::new(());

/// The right to use the objects of `dist/kubernetes/rbac.yaml` as they are (see
/// [`DIST_OBJECTS`]), once the namespace `bai` an earlier run left terminating is gone.
pub fn dist_objects(cluster: &Cluster) -> MutexGuard<'static, ()> {
    let held = DIST_OBJECTS.lock().unwrap_or_else(|p| p.into_inner());
    let free = crate::wait_until(Duration::from_secs(120), || {
        let out = cluster.kubectl(&["get", "namespace", "bai", "-o", "jsonpath={.status.phase}"]);
        String::from_utf8_lossy(&out.stdout).trim() != "Terminating"
    });
    assert!(free, "the namespace bai is still terminating");
    held
}

/// The cluster the tests of this binary share while any of them runs (tests run side by side:
/// one start, stopped when the last one drops it).
pub static SHARED: Mutex<std::sync::Weak<Cluster>> = Mutex::new(std::sync::Weak::new());

impl Cluster {
    pub fn get() -> Arc<Cluster> {
        shared(&SHARED, Cluster::start)
    }

    pub fn start() -> Cluster {
        if let Some(kc) = std::env::var_os("BAI_TEST_KUBECONFIG").filter(|v| !v.is_empty()) {
            let kubeconfig = PathBuf::from(kc);
            return Cluster {
                kubectl: kubectl_of(&kubeconfig),
                kubeconfig,
                owned: None,
            };
        }
        let dir = PathBuf::from(format!("/var/tmp/bai-e2e-kube.{}", std::process::id()));
        let t = Instant::now();
        let out = Command::new(script())
            .arg("start")
            .arg(&dir)
            .stdin(Stdio::null())
            .output()
            .expect("run kube-cluster.sh");
        if out.status.success() {
            let kubeconfig = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            eprintln!("started a cluster in {:?}", t.elapsed());
            return Cluster {
                kubectl: kubectl_of(&kubeconfig),
                kubeconfig,
                owned: Some(dir),
            };
        }
        // One kubelet cluster per machine: use the running one.
        let running = std::fs::read_to_string("/run/bai-kube/kubelet-cluster").unwrap_or_default();
        let kubeconfig = Path::new(running.trim()).join("kubeconfig");
        assert!(
            !running.trim().is_empty() && kubeconfig.is_file(),
            "cannot start a cluster: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("using the running cluster {}", running.trim());
        Cluster {
            kubectl: kubectl_of(&kubeconfig),
            kubeconfig,
            owned: None,
        }
    }

    pub fn kubectl(&self, args: &[&str]) -> std::process::Output {
        Command::new(&self.kubectl)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run kubectl")
    }

    /// The names of bai's pods in `ns`.
    pub fn bai_pods(&self, ns: &str) -> Vec<String> {
        let out = self.kubectl(&["get", "pods", "-n", ns, "-l", MANAGED, "-o", "name"]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Waits until bai has no pod left in `ns` (the kubelet takes a while to end them).
    pub fn wait_no_pods(&self, ns: &str) {
        let gone = crate::wait_until(Duration::from_secs(60), || self.bai_pods(ns).is_empty());
        assert!(gone, "pods left: {:?}", self.bai_pods(ns));
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(dir) = &self.owned {
            let _ = Command::new(script()).arg("stop").arg(dir).status();
        }
    }
}

/// Deletes a test's namespace however the test ends, so a failure leaves no pod holding the
/// node's room for the tests after it.
pub struct NamespaceGuard<'a>(&'a Cluster, String);

impl<'a> NamespaceGuard<'a> {
    pub fn new(cluster: &'a Cluster, ns: &str) -> NamespaceGuard<'a> {
        NamespaceGuard(cluster, ns.to_string())
    }
}

impl Drop for NamespaceGuard<'_> {
    fn drop(&mut self) {
        self.0
            .kubectl(&["delete", "namespace", &self.1, "--wait=false"]);
    }
}

/// A `baid agent --backend kubernetes` (killed on drop), its log kept in its data dir.
pub struct KubeAgent {
    pub child: std::process::Child,
    pub data: tempfile::TempDir,
}

impl KubeAgent {
    pub fn start(name: &str, manager: &str, token: &str, kubeconfig: &Path, ns: &str) -> KubeAgent {
        KubeAgent::start_with(name, manager, token, kubeconfig, ns, &[])
    }

    /// As [`KubeAgent::start`], with more arguments for `baid agent` (`--storage-host …`).
    pub fn start_with(
        name: &str,
        manager: &str,
        token: &str,
        kubeconfig: &Path,
        ns: &str,
        extra: &[String],
    ) -> KubeAgent {
        let data = tempfile::Builder::new()
            .prefix("bai-kagent-")
            .tempdir()
            .expect("tempdir");
        let log = std::fs::File::create(data.path().join("agent.log")).expect("log");
        let mut c = agent_command(Command::new(bin("baid")), name, manager, token, data.path());
        c.args(["--backend", "kubernetes", "--namespace", ns])
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(extra)
            .stdout(log.try_clone().expect("log"))
            .stderr(log);
        KubeAgent {
            child: c.spawn().expect("spawn baid agent"),
            data,
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.data.path().join("agent.log")).unwrap_or_default()
    }

    /// `bai start -t NAME ARGS` by `account` on `s` (the agent's log shown when it fails),
    /// waited for until it runs.
    pub fn started(&self, s: &Server, account: &Account, name: &str, args: &[&str], secs: u64) {
        let mut a = vec!["start", "-t", name];
        a.extend_from_slice(args);
        let started = s.bai(account, &a);
        assert!(started.ok(), "{started:?}\nagent:\n{}", self.log());
        s.wait_for(secs, &format!("{name} to run"), || {
            (s.status(account, name) == "RUNNING").then_some(())
        });
    }
}

impl Drop for KubeAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // A warm pool's shared kernels directory and the folders its claims mounted.
        crate::host::unmount_under(self.data.path());
    }
}

/// A manager with no agent of its own (`env` added to its environment) for agents of the
/// Kubernetes backend: its port and a join token, as [`manager_for_machines`]. Without
/// `--network-policies enforced` the backend takes only sessions of open groups, so the
/// default group is made open.
pub fn manager_for_pods(env: &[(&str, &str)]) -> (Server, u16, String) {
    let (s, port, token) = manager_for_machines(env);
    s.set_egress("default", "open");
    (s, port, token)
}

/// A manager from [`manager_for_pods`] and `baid agent --backend kubernetes` named `name`
/// joined to it with `kubeconfig`, its pods in `ns`.
pub fn joined(
    name: &str,
    env: &[(&str, &str)],
    kubeconfig: &Path,
    ns: &str,
) -> (Server, KubeAgent) {
    joined_with(name, env, &[], kubeconfig, ns)
}

/// As [`joined`], with more arguments for `baid agent` (`agent_args`).
pub fn joined_with(
    name: &str,
    env: &[(&str, &str)],
    agent_args: &[String],
    kubeconfig: &Path,
    ns: &str,
) -> (Server, KubeAgent) {
    let (s, port, token) = manager_for_pods(env);
    let agent = KubeAgent::start_with(
        name,
        &format!("127.0.0.1:{port}"),
        &token,
        kubeconfig,
        ns,
        agent_args,
    );
    let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_status(&s, name, "ALIVE", 60)
    }));
    assert!(ok.is_ok(), "the agent did not join:\n{}", agent.log());
    (s, agent)
}

/// The image whose runner detached kernel pods copy in (`--runner-image`): the agent's image
/// (`images/agent/build.sh`) from this build's binaries, tagged `bai-e2e/runner:<pid>`, made
/// once per test process on this machine's Docker engine (the test cluster's node); the
/// images earlier test processes left are removed first.
pub fn runner_image() -> String {
    static BUILT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let image = format!("bai-e2e/runner:{}", std::process::id());
            let old = Command::new("docker")
                .args([
                    "images",
                    "--format",
                    "{{.Repository}}:{{.Tag}}",
                    "bai-e2e/runner",
                ])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
                .unwrap_or_default();
            for stale in old.lines().filter(|l| *l != image && !l.is_empty()) {
                let _ = Command::new("docker").args(["rmi", "-f", stale]).output();
            }
            build_agent_image(&image);
            image
        })
        .clone()
}

/// `images/agent/build.sh TAG` from this build's binaries, on this machine's Docker engine
/// (the test cluster's node); its output in the failure.
pub fn build_agent_image(tag: &str) {
    let bindir = bin("baid").parent().expect("target dir").to_path_buf();
    let built =
        Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("../images/agent/build.sh"))
            .arg(tag)
            .arg(&bindir)
            // No registry answers here: the base is made from the local python image.
            .env("BAI_AGENT_BASE_FROM", "bai/python:3.11-bookworm")
            .stdin(Stdio::null())
            .output()
            .expect("run images/agent/build.sh");
    assert!(
        built.status.success(),
        "images/agent/build.sh: {}{}",
        String::from_utf8_lossy(&built.stdout),
        String::from_utf8_lossy(&built.stderr)
    );
}

//! The agent in the cluster: `dist/kubernetes/rbac.yaml` and `dist/kubernetes/agent.yaml`
//! applied as shipped (with the test's values in place of the image, the manager, the data
//! dir and the commented API-server lines), the image built by `images/agent/build.sh` from
//! this build's binaries. The DaemonSet's pod uses the in-cluster config (its
//! ServiceAccount's token; no kubeconfig anywhere in it), joins the test's manager at the
//! node's address, runs a session end to end, and a new pod of the DaemonSet re-adopts a
//! running kernel after the old one is deleted.

use bai_e2e::images::run_rm;
use bai_e2e::kube::{Cluster, dist, dist_objects, env_of, manager_for_pods};
use bai_e2e::remote::wait_status;
use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

pub(super) const AGENT_LABEL: &str = "app.kubernetes.io/name=bai-agent";

pub(super) fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `kubectl ARGS` with `input` on its stdin.
pub(super) fn kubectl_in(cluster: &Cluster, args: &[&str], input: &str) -> Output {
    let mut c = Command::new(&cluster.kubectl)
        .arg("--kubeconfig")
        .arg(&cluster.kubeconfig)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kubectl");
    c.stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write to kubectl");
    c.wait_with_output().expect("kubectl")
}

/// The agent pods labelled `label` (the DaemonSet's: [`AGENT_LABEL`]): (name, phase).
pub(super) fn agent_pods(cluster: &Cluster, label: &str) -> Vec<(String, String)> {
    let out = cluster.kubectl(&["get", "pods", "-n", "bai", "-l", label, "-o", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    v["items"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    let s = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
                    (s(&p["metadata"]["name"]), s(&p["status"]["phase"]))
                })
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn agent_log(cluster: &Cluster, pod: &str) -> String {
    text(&cluster.kubectl(&["logs", "-n", "bai", pod, "-c", "agent"]))
}

/// What the test applied, removed on drop (also when it fails): the agent's workload and its
/// pods first (they use the data dir), then the Secrets, the objects of the RBAC files (the
/// last one, rbac.yaml, takes the namespace) and the image.
pub(super) struct Installed<'a> {
    pub cluster: &'a Cluster,
    pub manifest: String,
    pub image: String,
    /// The agent pods' label.
    pub label: &'static str,
    /// The RBAC files of dist/kubernetes, rbac.yaml last (applied in the reverse order).
    pub rbac: &'static [&'static str],
}

impl Installed<'_> {
    /// Waits until agent `id` of the manager `s` is ALIVE (its pod joined; the pods
    /// described and their logs shown if not), and answers the one agent pod's name.
    pub fn joined(&self, s: &bai_e2e::Server, id: &str) -> String {
        let c = self.cluster;
        let joined = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            wait_status(s, id, "ALIVE", 120)
        }));
        let pods = agent_pods(c, self.label);
        assert!(
            joined.is_ok(),
            "the agent pod did not join as {id}: {pods:?}\n{}\n{}",
            text(&c.kubectl(&["describe", "pods", "-n", "bai", "-l", self.label])),
            pods.iter()
                .map(|(p, _)| agent_log(c, p))
                .collect::<String>()
        );
        assert_eq!(pods.len(), 1, "one agent pod: {pods:?}");
        pods[0].0.clone()
    }

    /// Applies the RBAC files (rbac.yaml first: it makes the namespace), the join token's
    /// Secret, and the manifest.
    pub fn apply(&self, token: &str) {
        let c = self.cluster;
        for file in self.rbac.iter().rev() {
            let rbac = dist(file);
            let applied = c.kubectl(&["apply", "-f", &rbac.to_string_lossy()]);
            assert!(applied.status.success(), "{file}: {}", text(&applied));
        }
        let secret = c.kubectl(&[
            "create",
            "secret",
            "generic",
            "bai-agent-token",
            "-n",
            "bai",
            &format!("--from-literal=token={token}"),
        ]);
        assert!(secret.status.success(), "{}", text(&secret));
        let applied = kubectl_in(c, &["apply", "-f", "-"], &self.manifest);
        assert!(applied.status.success(), "{}", text(&applied));
    }
}

impl Drop for Installed<'_> {
    fn drop(&mut self) {
        let c = self.cluster;
        kubectl_in(
            c,
            &["delete", "-f", "-", "--ignore-not-found"],
            &self.manifest,
        );
        bai_e2e::wait_until(Duration::from_secs(60), || {
            agent_pods(c, self.label).is_empty()
        });
        c.kubectl(&[
            "delete",
            "secret",
            "bai-agent-token",
            "-n",
            "bai",
            "--ignore-not-found",
        ]);
        c.kubectl(&[
            "delete",
            "secrets",
            "-n",
            "bai",
            "-l",
            "app.kubernetes.io/component=agent-credential",
        ]);
        for file in self.rbac {
            let rbac = dist(file);
            c.kubectl(&["delete", "-f", &rbac.to_string_lossy(), "--wait=false"]);
        }
        let _ = Command::new("docker")
            .args(["rmi", "-f", &self.image])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// What the test puts into a shipped manifest, from the cluster's env file.
pub(super) struct ClusterEnv {
    /// The one node's name.
    pub node: String,
    /// Its address, where the test's manager listens for agents.
    pub node_ip: String,
    /// The API server's address (pods cannot reach it at its Service: no kube-proxy).
    pub api_host: String,
    pub api_port: String,
}

impl ClusterEnv {
    pub fn of(cluster: &Cluster) -> ClusterEnv {
        let kc = &cluster.kubeconfig;
        let var =
            |name: &str| env_of(kc, name).unwrap_or_else(|| panic!("{name} in the cluster's env"));
        let server = var("BAI_KUBE_SERVER");
        let (host, port) = server
            .trim_start_matches("https://")
            .trim_end_matches('/')
            .rsplit_once(':')
            .expect("the API server's host:port");
        ClusterEnv {
            node: var("BAI_KUBE_NODE"),
            node_ip: var("BAI_KUBE_NODE_IP"),
            api_host: host.to_string(),
            api_port: port.to_string(),
        }
    }

    /// The shipped manifest `file` with the test's image, its manager's agent `port` at the
    /// node's address, and the API server's address `api` (HOST, PORT) in place of the
    /// commented lines.
    pub fn manifest(&self, file: &str, image: &str, port: u16, api: (&str, &str)) -> String {
        let manifest = std::fs::read_to_string(dist(file)).expect("the shipped manifest");
        let manifest = put(manifest, "bai/agent:latest", image);
        let manifest = put(
            manifest,
            "manager.example.org:5002",
            &format!("{}:{port}", self.node_ip),
        );
        let manifest = put(
            manifest,
            "# KUBERNETES_SERVICE_HOST: \"10.96.0.1\"",
            &format!("KUBERNETES_SERVICE_HOST: \"{}\"", api.0),
        );
        put(
            manifest,
            "# KUBERNETES_SERVICE_PORT: \"443\"",
            &format!("KUBERNETES_SERVICE_PORT: \"{}\"", api.1),
        )
    }
}

/// `text` with `from` replaced by `to` (every time), which must be there (a changed file
/// fails here, not later in a pod that runs with a placeholder).
pub(super) fn put(text: String, from: &str, to: &str) -> String {
    assert!(text.contains(from), "the manifest has no `{from}` any more");
    text.replace(from, to)
}

#[test]
fn the_agent_runs_in_the_cluster_as_a_daemonset() {
    // Its agent pod and kernels hold a good share of the one node.
    let _room = super::node_room();
    // The cluster first: held while waiting, it is not stopped and started again.
    let cluster = Cluster::get();
    let _dist = dist_objects(&cluster);
    let env = ClusterEnv::of(&cluster);
    let node = env.node.clone();

    // The image, from this build's binaries (the base's layers are reused).
    let image = format!("bai-e2e/agent:{}", std::process::id());
    bai_e2e::kube::build_agent_image(&image);

    let (s, port, token) = manager_for_pods(&[]);
    let data = tempfile::Builder::new()
        .prefix("bai-kagent-pod-")
        .tempdir()
        .expect("tempdir");
    let data_dir = data.path().to_string_lossy().to_string();
    // On the host network: the API server at its loopback address.
    let manifest = env.manifest("agent.yaml", &image, port, (&env.api_host, &env.api_port));
    let manifest = put(manifest, "/var/lib/bai", &data_dir);
    let installed = Installed {
        cluster: &cluster,
        manifest,
        image,
        label: AGENT_LABEL,
        rbac: &["rbac.yaml"],
    };
    installed.apply(&token);

    // The DaemonSet's pod joins the manager as the node's agent.
    let first = installed.joined(&s, &node);
    let describe = || text(&cluster.kubectl(&["describe", "pods", "-n", "bai", "-l", AGENT_LABEL]));

    // It runs as shipped: on the host network, root with three capabilities, read-only root,
    // and with no kubeconfig: the client is the in-cluster one, at the service address the
    // ConfigMap gave, with the ServiceAccount's token.
    let out = cluster.kubectl(&["get", "pod", "-n", "bai", &first, "-o", "json"]);
    let pod: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the agent's pod");
    assert_eq!(pod["spec"]["hostNetwork"], true, "{pod}");
    assert_eq!(pod["spec"]["serviceAccountName"], "bai-agent", "{pod}");
    let agent = &pod["spec"]["containers"][0];
    let sc = &agent["securityContext"];
    assert_eq!(sc["privileged"], false, "{sc}");
    assert_eq!(sc["readOnlyRootFilesystem"], true, "{sc}");
    assert_eq!(
        sc["capabilities"]["add"],
        serde_json::json!(["CHOWN", "DAC_OVERRIDE", "FOWNER"]),
        "{sc}"
    );
    assert!(!agent.to_string().contains("kubeconfig"), "{agent}");
    // The pod's status may lag its container: its log is read once the kubelet says so.
    let log = bai_e2e::poll(Duration::from_secs(60), Duration::from_millis(300), || {
        let log = agent_log(&cluster, &first);
        log.contains("joined the manager").then_some(log)
    })
    .unwrap_or_else(|| agent_log(&cluster, &first));
    assert!(
        log.contains("connected to the Kubernetes API server")
            && log.contains(&format!("https://{}:{}/", env.api_host, env.api_port)),
        "{log}\n{}\n{}",
        describe(),
        text(&cluster.kubectl(&["get", "events", "-n", "bai"]))
    );
    let token = cluster.kubectl(&[
        "exec",
        "-n",
        "bai",
        &first,
        "-c",
        "agent",
        "--",
        "cat",
        "/var/run/secrets/kubernetes.io/serviceaccount/namespace",
    ]);
    assert_eq!(
        text(&token).trim(),
        "bai",
        "the ServiceAccount's token is mounted"
    );

    // A session end to end through the agent in the pod; nothing of it is left.
    let r = run_rm(
        &s,
        &s.admin,
        &["cpu=0.25", "mem=256m"],
        "import os; print('in the cluster', os.getuid())",
        "python",
    );
    assert!(r.ok(), "{r:?}\nagent:\n{}", agent_log(&cluster, &first));
    assert_eq!(r.stdout.trim(), "in the cluster 1000", "{r:?}");
    cluster.wait_no_pods("bai");
    let kernels = data.path().join("kernels");
    let left = || std::fs::read_dir(&kernels).map(|d| d.count()).unwrap_or(0);
    assert_eq!(
        left(),
        0,
        "kernel directories left under {}",
        kernels.display()
    );

    // A cluster session of two pods (their host table is rewritten in place as each gets
    // its address: a file already handed to uid 1000, which FOWNER lets the agent chmod).
    // The agent's pod deleted: the DaemonSet's next one re-adopts the running kernels.
    s.bai(
        &s.admin,
        &[
            "start",
            "-t",
            "kept",
            "--cluster-size",
            "2",
            "-r",
            "cpu=0.25",
            "-r",
            "mem=256m",
            "python",
        ],
    )
    .expect_ok();
    let info = s.wait_status(&s.admin, "kept", "RUNNING", 180);
    assert_eq!(info["agent"], node.as_str(), "{info}");
    let kernel_pods = cluster.bai_pods("bai");
    assert_eq!(kernel_pods.len(), 2, "{kernel_pods:?}");
    let out = cluster.kubectl(&[
        "get",
        "pods",
        "-n",
        "bai",
        "-l",
        "app.kubernetes.io/managed-by=bai",
        "-o",
        "jsonpath={range .items[?(@.spec.hostname==\"sub1\")]}{.status.podIP}{end}",
    ]);
    let sub1 = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(!sub1.is_empty(), "{}", text(&out));
    let deleted = cluster.kubectl(&["delete", "pod", "-n", "bai", &first]);
    assert!(deleted.status.success(), "{}", text(&deleted));
    let second = s.wait_for(120, "a new agent pod that joined", || {
        agent_pods(&cluster, AGENT_LABEL)
            .into_iter()
            .find(|(p, phase)| {
                p != &first
                    && phase == "Running"
                    && agent_log(&cluster, p).contains("joined the manager")
            })
            .map(|(p, _)| p)
    });
    let code = "import socket; print(6 * 7, socket.gethostbyname('sub1'))";
    let r = s.bai(&s.admin, &["run", "-t", "kept", "-c", code, "python"]);
    assert!(r.ok(), "{r:?}\nagent:\n{}", agent_log(&cluster, &second));
    assert_eq!(r.stdout.trim(), format!("42 {sub1}"), "{r:?}");
    assert_eq!(cluster.bai_pods("bai"), kernel_pods, "the same kernel pods");
    s.bai(&s.admin, &["rm", "kept"]).expect_ok();
    cluster.wait_no_pods("bai");
    let cleaned = bai_e2e::wait_until(Duration::from_secs(30), || left() == 0);
    assert!(
        cleaned,
        "kernel directories left under {}",
        kernels.display()
    );

    drop(installed);
    drop(s);
}

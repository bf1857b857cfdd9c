//! One agent for every node, in the cluster: `dist/kubernetes/rbac.yaml`,
//! `rbac-network.yaml` and `agent-each-node.yaml` applied as shipped (with the test's values
//! in place of the image, the manager and the commented API-server lines, and a forwarder
//! standing in for the `kubernetes` Service, as the test cluster has no kube-proxy). The Deployment's
//! one pod, with no root, no capability, no host network and no hostPath, joins the test's
//! manager as the node's agent `bai-NODE`, keeping its credential in a Secret; a session
//! runs in a detached pod; the agent's pod deleted, the Deployment's next one (a new emptyDir
//! for a data dir) joins under the same id with the kept credential, where a new data dir
//! alone would be refused, and re-adopts the running kernel.

use super::in_cluster::{ClusterEnv, Installed, agent_log, agent_pods, put, text};
use bai_e2e::cut::CutLink;
use bai_e2e::kube::{Cluster, dist_objects, manager_for_pods};
use bai_e2e::remote::wait_status;

const LABEL: &str = "app.kubernetes.io/name=bai-agent-each-node";

#[test]
fn the_agent_runs_in_the_cluster_as_one_deployment_for_every_node() {
    let _room = super::node_room();
    let cluster = Cluster::get();
    let _dist = dist_objects(&cluster);
    let env = ClusterEnv::of(&cluster);
    let id = format!("bai-{}", env.node);

    let image = format!("bai-e2e/agent-each:{}", std::process::id());
    bai_e2e::kube::build_agent_image(&image);
    let (s, port, token) = manager_for_pods(&[]);
    // The pod is on the pod network (the docker bridge), where the test cluster's API server
    // (on loopback, no kube-proxy) is not: a forwarder from the node's bridge address stands
    // in for the `kubernetes` Service, reached by a name its certificate holds.
    let api = CutLink::from_to(
        env.node_ip.parse().expect("the node's address"),
        format!("127.0.0.1:{}", env.api_port)
            .parse()
            .expect("the API server's address"),
    );
    let manifest = env.manifest(
        "agent-each-node.yaml",
        &image,
        port,
        ("kubernetes", &api.port().to_string()),
    );
    let manifest = put(
        manifest,
        "      enableServiceLinks: false\n",
        &format!(
            "      enableServiceLinks: false\n      hostAliases: [{{ip: \"{}\", hostnames: [kubernetes]}}]\n",
            env.node_ip
        ),
    );
    let installed = Installed {
        cluster: &cluster,
        manifest,
        image,
        label: LABEL,
        rbac: &["rbac-network.yaml", "rbac.yaml"],
    };
    installed.apply(&token);

    let first = installed.joined(&s, &id);

    // As shipped: not on the host network, not root, nothing added, nothing of the node.
    let out = cluster.kubectl(&["get", "pod", "-n", "bai", &first, "-o", "json"]);
    let pod: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the agent's pod");
    assert_ne!(pod["spec"]["hostNetwork"], true, "{pod}");
    assert_eq!(
        pod["spec"]["securityContext"]["runAsNonRoot"], true,
        "{pod}"
    );
    let volumes = pod["spec"]["volumes"].as_array().expect("volumes");
    assert!(
        volumes.iter().all(|v| v.get("hostPath").is_none()),
        "{volumes:?}"
    );
    let sc = &pod["spec"]["containers"][0]["securityContext"];
    assert_eq!(
        sc["capabilities"]["drop"],
        serde_json::json!(["ALL"]),
        "{sc}"
    );
    assert!(sc["capabilities"].get("add").is_none(), "{sc}");

    // Its credential is kept in the namespace, under its own id.
    let secret = format!("bai-agent-credential-{id}");
    let out = cluster.kubectl(&[
        "get",
        "secret",
        "-n",
        "bai",
        &secret,
        "-o",
        "jsonpath={.data.agent-id}",
    ]);
    use base64::Engine;
    let kept = base64::engine::general_purpose::STANDARD
        .decode(String::from_utf8_lossy(&out.stdout).trim())
        .unwrap_or_default();
    assert_eq!(String::from_utf8_lossy(&kept), id, "{}", text(&out));

    // A session in a detached pod (nothing of the node in it).
    s.bai(
        &s.admin,
        &[
            "start", "-t", "kept", "-r", "cpu=0.25", "-r", "mem=256m", "python",
        ],
    )
    .expect_ok();
    let info = s.wait_status(&s.admin, "kept", "RUNNING", 180);
    assert_eq!(info["agent"], id.as_str(), "{info}");
    let kernels = cluster.bai_pods("bai");
    assert_eq!(kernels.len(), 1, "{kernels:?}");
    // `pod/NAME`, as kubectl names it.
    let out = cluster.kubectl(&["get", "-n", "bai", &kernels[0], "-o", "json"]);
    let kpod: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the kernel's pod");
    let kvolumes = kpod["spec"]["volumes"].as_array().expect("volumes");
    assert!(
        kvolumes.iter().all(|v| v.get("hostPath").is_none()),
        "{kvolumes:?}"
    );
    let r = s.bai(
        &s.admin,
        &["run", "-t", "kept", "-c", "print(6 * 7)", "python"],
    );
    assert!(r.ok(), "{r:?}\nagent:\n{}", agent_log(&cluster, &first));
    assert_eq!(r.stdout.trim(), "42", "{r:?}");

    // The agent's pod deleted: the next one has a new, empty data dir, joins under the same
    // id with the credential of the Secret, and re-adopts the running kernel.
    let deleted = cluster.kubectl(&["delete", "pod", "-n", "bai", &first]);
    assert!(deleted.status.success(), "{}", text(&deleted));
    let second = s.wait_for(180, "a new agent pod that joined", || {
        agent_pods(&cluster, LABEL)
            .into_iter()
            .find(|(p, phase)| {
                p != &first
                    && phase == "Running"
                    && agent_log(&cluster, p).contains("joined the manager")
            })
            .map(|(p, _)| p)
    });
    let log = agent_log(&cluster, &second);
    assert!(!log.contains("belongs to another agent"), "{log}");
    wait_status(&s, &id, "ALIVE", 60);
    let r = s.bai(
        &s.admin,
        &["run", "-t", "kept", "-c", "print(7 * 6)", "python"],
    );
    assert!(r.ok(), "{r:?}\nagent:\n{}", agent_log(&cluster, &second));
    assert_eq!(r.stdout.trim(), "42", "{r:?}");
    assert_eq!(cluster.bai_pods("bai"), kernels, "the same kernel pod");

    // Ended: no kernel pod and no kernel Secret left; the agent's credential stays.
    s.bai(&s.admin, &["rm", "kept"]).expect_ok();
    cluster.wait_no_pods("bai");
    let gone = bai_e2e::wait_until(std::time::Duration::from_secs(60), || {
        let out = cluster.kubectl(&[
            "get",
            "secrets",
            "-n",
            "bai",
            "-l",
            bai_e2e::kube::MANAGED,
            "-o",
            "name",
        ]);
        out.status.success() && out.stdout.iter().all(u8::is_ascii_whitespace)
    });
    assert!(gone, "kernel Secrets left in bai");
    let kept = cluster.kubectl(&["get", "secret", "-n", "bai", &secret]);
    assert!(kept.status.success(), "{}", text(&kept));

    drop(installed);
    drop(s);
}

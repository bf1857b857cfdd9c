//! `--network-policies node` with the agent in the cluster: `dist/kubernetes/agent.yaml`
//! applied with its lines marked "node" in (the node's processes, three more capabilities,
//! `BAI_KUBE_NETWORK_POLICIES: "node"`). The DaemonSet's pod, not privileged, loads each
//! kernel pod's rules into the pod's network namespace: probed from a kernel under
//! `default` with one destination allowed, the node and the metadata address are refused
//! and the allowed port answers.

use super::egress_node::{connects, group, listener};
use super::in_cluster::{AGENT_LABEL, ClusterEnv, Installed, agent_log, put};
use bai_e2e::kube::{Cluster, build_agent_image, dist_objects, manager_for_pods};

#[test]
fn the_agent_in_the_cluster_enforces_egress_in_each_pods_network_namespace() {
    let _room = super::node_room();
    let cluster = Cluster::get();
    let _dist = dist_objects(&cluster);
    let env = ClusterEnv::of(&cluster);
    let image = format!("bai-e2e/agent-node:{}", std::process::id());
    build_agent_image(&image);

    let (s, port, token) = manager_for_pods(&[]);
    let data = tempfile::Builder::new()
        .prefix("bai-kagent-node-")
        .tempdir()
        .expect("tempdir");
    let manifest = env.manifest("agent.yaml", &image, port, (&env.api_host, &env.api_port));
    let manifest = put(manifest, "/var/lib/bai", &data.path().to_string_lossy());
    let manifest = put(
        manifest,
        "# BAI_KUBE_NETWORK_POLICIES: \"enforced\"",
        "BAI_KUBE_NETWORK_POLICIES: \"node\"",
    );
    let manifest = put(manifest, "# hostPID: true", "hostPID: true");
    let manifest = put(
        manifest,
        "            add: [CHOWN, DAC_OVERRIDE, FOWNER]\n",
        "",
    );
    let node_caps = "add: [CHOWN, DAC_OVERRIDE, FOWNER, NET_ADMIN, SYS_ADMIN, SYS_PTRACE]";
    let manifest = put(manifest, &format!("# {node_caps}"), node_caps);
    let installed = Installed {
        cluster: &cluster,
        manifest,
        image,
        label: AGENT_LABEL,
        rbac: &["rbac.yaml"],
    };
    installed.apply(&token);
    let pod = installed.joined(&s, &env.node);
    let log = || agent_log(&cluster, &pod);

    // Not privileged, the node's processes in view.
    let out = cluster.kubectl(&["get", "pod", "-n", "bai", &pod, "-o", "json"]);
    let spec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the agent's pod");
    assert_eq!(spec["spec"]["hostPID"], true, "{spec}");
    assert_eq!(
        spec["spec"]["containers"][0]["securityContext"]["privileged"], false,
        "{spec}"
    );

    let (closed_port, allowed_port) = (listener(), listener());
    let allow = format!("{}:{allowed_port}", env.node_ip);
    group(&s, &["--egress", "default", "--egress-allow", &allow]);
    s.bai(
        &s.admin,
        &[
            "start", "-q", "-t", "en-pod", "-r", "cpu=0.25", "-r", "mem=256m", "python",
        ],
    )
    .expect_ok();
    let info = s.wait_status(&s.admin, "en-pod", "RUNNING", 180);
    assert_eq!(info["agent"], env.node.as_str(), "{info}");
    connects(
        &s,
        "en-pod",
        &[
            ("node", &env.node_ip, closed_port, "refused"),
            ("allowed", &env.node_ip, allowed_port, "open"),
            ("metadata", "169.254.169.254", 80, "refused"),
        ],
        "a kernel of the agent in the cluster, under default",
        &log,
    );
    assert!(
        log().contains("egress rules loaded into the pod's network namespace"),
        "{}",
        log()
    );
    s.bai(&s.admin, &["rm", "en-pod"]).expect_ok();
    cluster.wait_no_pods("bai");
    drop(installed);
    drop(s);
}

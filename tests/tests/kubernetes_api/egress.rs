//! Network policies on the Kubernetes backend, at the API-server tier: the NetworkPolicy each
//! kernel pod gets (its egress rules, its ingress isolation from other sessions, its owner,
//! its end with the session), and an agent without `--network-policies enforced` passed
//! over for sessions of groups that are not `open`.
//! The test cluster has no network plugin that enforces NetworkPolicy (pods sit on the
//! docker bridge), so what is checked is the object the API server holds, not packets.

use super::world::*;
use serde_json::{Value, json};

/// The NetworkPolicies of `ns`, as JSON.
fn policies(cluster: &Cluster, ns: &str) -> Vec<Value> {
    let out = cluster.ok(&["get", "networkpolicies", "-n", ns, "-o", "json"], None);
    serde_json::from_str::<Value>(&out)
        .ok()
        .and_then(|v| v["items"].as_array().cloned())
        .unwrap_or_default()
}

/// Runs a session under the group's current policy until RUNNING and returns its pod and
/// the NetworkPolicy made for it (checked to select exactly that pod, be owned by it and let
/// in only its session's pods and its node).
fn run_and_read(w: &World, name: &str) -> (Value, Value, Runner) {
    w.start(name, &["cpu=0.5", "mem=256m"]);
    let pod = w.cluster.bound_bai_pod(&w.ns);
    let kernel = pod["metadata"]["labels"]["ai.bai.kernel"].clone();
    let found = policies(&w.cluster, &w.ns);
    assert_eq!(found.len(), 1, "{found:#?}");
    let np = found[0].clone();
    let runner = Runner::start(&pod);
    w.cluster.set_status(&w.ns, &pod_name(&pod), running());
    w.wait_session(name, &["RUNNING"]);
    // Read again: the pod is its owner once the pod exists.
    let np = policies(&w.cluster, &w.ns)
        .into_iter()
        .find(|p| p["metadata"]["name"] == np["metadata"]["name"])
        .unwrap_or_else(|| panic!("the policy went: {np}"));
    assert_eq!(np["metadata"]["name"], pod["metadata"]["name"], "{np}");
    assert_eq!(
        np["spec"]["podSelector"],
        json!({"matchLabels": {"ai.bai.kernel": kernel}}),
        "{np}"
    );
    let session = pod["metadata"]["labels"]["ai.bai.session"].clone();
    assert_eq!(
        np["spec"]["ingress"],
        json!([{"from": [{"podSelector": {"matchLabels": {"ai.bai.session": session}}}]},
               {"from": [{"ipBlock": {"cidr": "10.99.0.5/32"}}]}]),
        "{np:#}"
    );
    let owners = &np["metadata"]["ownerReferences"];
    assert_eq!(owners.as_array().map(Vec::len), Some(1), "{np}");
    assert_eq!(owners[0]["kind"], "Pod", "{np}");
    assert_eq!(owners[0]["name"], pod["metadata"]["name"], "{np}");
    assert_eq!(owners[0]["uid"], pod["metadata"]["uid"], "{np}");
    (pod, np, runner)
}

fn ports(p: u16) -> Value {
    json!([{"port": p, "protocol": "TCP"}, {"port": p, "protocol": "UDP"}])
}

/// A kernel of a `default` group and one of a `closed` group with an allow list each get a
/// NetworkPolicy of the right shape, owned by their pod; one of an `open` group gets its
/// ingress isolation alone; `bai rm` leaves none.
#[test]
fn kernels_under_default_and_closed_get_their_network_policy() {
    let w = World::with_agent_args(
        "egress",
        110,
        &[],
        &["--network-policies", "enforced"],
        |_, _| {},
    );
    // The node's own address, as its kubelet would report it.
    w.cluster.ok(
        &[
            "patch",
            "node",
            &w.node.name,
            "--subresource=status",
            "--type=merge",
            "-p",
            &json!({"status": {"addresses": [{"type": "InternalIP", "address": "10.99.0.5"},
                {"type": "Hostname", "address": w.node.name}]}})
            .to_string(),
        ],
        None,
    );
    let group = |args: &[&str]| {
        let mut all = vec!["admin", "resource-group", "update", "default"];
        all.extend(args);
        w.s.bai(&w.s.admin, &all).expect_ok();
    };
    group(&["--egress", "default"]);
    let (pod, np, runner) = run_and_read(&w, "kdef");
    let session = pod["metadata"]["labels"]["ai.bai.session"].clone();
    assert_eq!(
        np["spec"]["policyTypes"],
        json!(["Ingress", "Egress"]),
        "{np:#}"
    );
    let rules = np["spec"]["egress"].as_array().expect("egress rules");
    assert_eq!(rules.len(), 3, "{np:#}");
    let v4 = &rules[0]["to"][0]["ipBlock"];
    assert_eq!(v4["cidr"], "0.0.0.0/0", "{np:#}");
    let except: Vec<&str> = v4["except"]
        .as_array()
        .expect("except")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    // The kernel's node, the manager's host and this agent as the manager sees it (both on
    // 127.0.0.1 here), link-local and metadata.
    for closed in [
        "10.99.0.5/32",
        "127.0.0.1/32",
        "169.254.0.0/16",
        "100.100.100.200/32",
    ] {
        assert!(except.contains(&closed), "{closed} not closed: {np:#}");
    }
    assert_eq!(rules[0]["to"][1]["ipBlock"]["cidr"], "::/0", "{np:#}");
    assert_eq!(rules[1], json!({"ports": ports(53)}), "{np:#}");
    assert_eq!(
        rules[2],
        json!({"to": [{"podSelector": {"matchLabels": {"ai.bai.session": session}}}]})
    );
    w.s.bai(&w.s.admin, &["rm", "kdef"]).expect_ok();
    w.assert_nothing_left();
    drop(runner);
    assert!(policies(&w.cluster, &w.ns).is_empty(), "a policy is left");

    group(&[
        "--egress",
        "closed",
        "--egress-allow",
        "10.1.2.3:3128,192.168.0.0/16",
    ]);
    let (pod, np, runner) = run_and_read(&w, "kclo");
    let session = pod["metadata"]["labels"]["ai.bai.session"].clone();
    assert_eq!(
        np["spec"]["policyTypes"],
        json!(["Ingress", "Egress"]),
        "{np:#}"
    );
    assert_eq!(
        np["spec"]["egress"],
        json!([
            {"to": [{"podSelector": {"matchLabels": {"ai.bai.session": session}}}]},
            {"to": [{"ipBlock": {"cidr": "10.1.2.3/32"}}], "ports": ports(3128)},
            {"to": [{"ipBlock": {"cidr": "192.168.0.0/16"}}]}
        ]),
        "{np:#}"
    );
    w.s.bai(&w.s.admin, &["rm", "kclo"]).expect_ok();
    w.assert_nothing_left();
    drop(runner);
    assert!(policies(&w.cluster, &w.ns).is_empty(), "a policy is left");

    // Open: every destination stays open, and other sessions still cannot dial the kernel.
    w.s.set_egress("default", "open");
    let (_, np, runner) = run_and_read(&w, "kopen");
    assert_eq!(np["spec"]["policyTypes"], json!(["Ingress"]), "{np:#}");
    assert!(np["spec"].get("egress").is_none(), "{np:#}");
    w.s.bai(&w.s.admin, &["rm", "kopen"]).expect_ok();
    w.assert_nothing_left();
    drop(runner);
    assert!(policies(&w.cluster, &w.ns).is_empty(), "a policy is left");
}

/// Without `--network-policies enforced` the agent says it cannot enforce egress policies,
/// and a session of a `default` group is not placed there: its pending reason says why, and
/// no pod or policy is made. A port range in an allow list is refused with the reason.
#[test]
fn an_agent_that_does_not_enforce_takes_no_session_of_a_default_group() {
    let w = World::new("noegress", 110, |_, _| {});
    let bad = w.s.bai(
        &w.s.admin,
        &[
            "admin",
            "resource-group",
            "update",
            "default",
            "--egress",
            "closed",
            "--egress-allow",
            "10.1.2.3:8000-8080",
        ],
    );
    bad.expect_fail("port ranges are not supported");
    assert_eq!(bad.stderr.trim().lines().count(), 1, "{bad:?}");
    w.s.set_egress("default", "default");
    w.start("kwait", &["cpu=0.5", "mem=256m"]);
    let i = w.s.wait_for(LIMIT, "kwait's pending reason", || {
        let i = w.s.info(&w.s.admin, "kwait");
        i["pending"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("egress"))
            .then_some(i)
    });
    assert_eq!(i["status"], "PENDING", "{i:#}");
    let why = i["pending"]["reason"].as_str().unwrap_or("");
    assert!(
        why.contains("can enforce its egress policy default")
            && why.contains("--network-policies enforced"),
        "{i:#}"
    );
    assert!(w.cluster.pods(&w.ns).is_empty(), "a pod was made");
    assert!(policies(&w.cluster, &w.ns).is_empty(), "a policy was made");
    // The group opened: the same session runs there.
    w.s.set_egress("default", "open");
    let pod = w.cluster.bound_bai_pod(&w.ns);
    let runner = Runner::start(&pod);
    w.cluster.set_status(&w.ns, &pod_name(&pod), running());
    w.wait_session("kwait", &["RUNNING"]);
    assert!(
        policies(&w.cluster, &w.ns).is_empty(),
        "an open kernel got a policy"
    );
    w.s.bai(&w.s.admin, &["rm", "kwait"]).expect_ok();
    w.assert_nothing_left();
    drop(runner);
}

//! A node that goes down (NotReady) under running sessions: handled as a lost agent.

use super::world::*;

/// NotReady: the session is RUNNING_DEGRADED at once (`agent-lost`, the node named), and
/// Kubernetes would never evict its pod for it (the pod tolerates a down node: bai decides).
/// Ready again before the gone time: RUNNING again. NotReady for the gone time (20 s here):
/// the session ends with `agent-lost`, and its pod is deleted.
#[test]
fn a_node_down_degrades_its_sessions_then_resumes_or_ends_them() {
    let w = World::with_env("down", 110, &[("BAI_AGENT_GONE_AFTER", "20s")], |_, _| {});
    w.start("kdown", &["cpu=0.5", "mem=256m"]);
    let pod = w.cluster.bound_bai_pod(&w.ns);
    let tolerations = pod["spec"]["tolerations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let t = tolerations
            .iter()
            .find(|t| t["key"] == key && t["effect"] == "NoExecute")
            .unwrap_or_else(|| panic!("no NoExecute toleration of {key}: {pod}"));
        assert!(t.get("tolerationSeconds").is_none(), "{pod}");
    }
    let runner = Runner::start(&pod);
    w.cluster.set_status(&w.ns, &pod_name(&pod), running());
    w.wait_session("kdown", &["RUNNING"]);

    // Down, and back in time.
    w.set_ready("False");
    let degraded = w.wait_session("kdown", &["RUNNING_DEGRADED"]);
    let why = degraded["status_info"].as_str().unwrap_or("");
    assert!(why.starts_with("agent-lost"), "{degraded}");
    assert!(
        why.contains(&w.node.name) && why.contains("not Ready"),
        "{degraded}"
    );
    w.set_ready("True");
    w.wait_session("kdown", &["RUNNING"]);
    assert_eq!(w.cluster.pods(&w.ns).len(), 1, "the pod stays");

    // Down for good: the session ends, and its pod goes.
    w.set_ready("False");
    w.wait_session("kdown", &["RUNNING_DEGRADED"]);
    let ended = w.wait_session("kdown", &["TERMINATED"]);
    let why = ended["status_info"].as_str().unwrap_or("");
    eprintln!("the session ended: {why}");
    assert!(why.starts_with("agent-lost"), "{ended}");
    assert!(why.contains(&w.node.name), "{ended}");
    drop(runner);
    w.assert_nothing_left();
}

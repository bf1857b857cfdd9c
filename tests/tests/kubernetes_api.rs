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
//! the image and the node), OOMKilled (out of memory), the offer following the node after the
//! join (a tenant's pod, cordon, NotReady), a node that goes down (its sessions degraded,
//! resumed or ended as a lost agent's), the NetworkPolicy of a kernel under an egress policy
//! (`egress.rs`), time-sliced GPUs as `cuda.shares` (`gpus.rs`), one process offering two
//! nodes as two agents with detached pods (`each_node.rs`), and nothing of bai left
//! afterwards.
//!
//! The tests of this binary share one cluster while any of them runs (API-only clusters may
//! run beside each other and beside the machine's kubelet cluster); the last one stops it.
//! Waits poll for a condition under a generous limit; nothing is timed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

#[path = "kubernetes_api/world.rs"]
mod world;

#[path = "kubernetes_api/node_down.rs"]
mod node_down;

#[path = "kubernetes_api/egress.rs"]
mod egress;

#[path = "kubernetes_api/gpus.rs"]
mod gpus;

#[path = "kubernetes_api/each_node.rs"]
mod each_node;

use bai_e2e::remote::agents;
use serde_json::json;
use world::*;

/// The pod bai makes: requests = limits (millicores, bytes), `nvidia.com/gpu` from
/// `cuda.device`, a memory-backed /dev/shm of the session's shmem, a required affinity to the
/// node bai chose, not privileged, uid 1000. Its runner answering, the session runs (before
/// the pod's status says Running); removed, nothing of bai is left in the namespace.
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

    // Ready when its runner answers, before the kubelet says the pod runs (the kubelet
    // reports a started container only at its next relist, up to a second later).
    let runner = Runner::start(&pod);
    w.wait_session("kspec", &["RUNNING"]);
    assert_eq!(w.cluster.bai_pod(&w.ns)["status"]["phase"], "Pending");
    w.cluster.set_status(&w.ns, &pod_name(&pod), running());

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

/// After the agent joined, its offer follows the node: another tenant's pod made later is
/// taken off; a cordoned node withholds the offer (its size kept, so a session that fits
/// it is queued, not refused), a session waits and starts there once the node is
/// uncordoned; a NotReady node withholds it too; the tenant's pod gone gives the room back.
#[test]
fn the_offer_follows_the_node_after_the_agent_joined() {
    let tenant = format!("tenant-live-{}", std::process::id());
    let w = World::new("live", 110, |_, _| {});
    let agent = |w: &World| {
        agents(&w.s)
            .into_iter()
            .find(|a| a.id == "kapi-live")
            .expect("the agent")
    };
    let cpu = |a: &bai_api::resources::Agent| a.capacity.cpu.parse::<f64>().unwrap_or(-1.0);
    let wait_offer = |what: &str, f: &dyn Fn(&bai_api::resources::Agent) -> bool| {
        w.s.wait_for(LIMIT, what, || Some(agent(&w)).filter(|a| f(a)))
    };
    assert_eq!(cpu(&agent(&w)), 8.0);

    // A tenant's pod on the node, made after the join.
    w.cluster
        .apply(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": tenant}}));
    w.cluster.apply(&json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "theirs", "namespace": tenant},
        "spec": {"nodeName": w.node.name, "containers": [{"name": "c", "image": "other",
            "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}]}}));
    wait_offer("the tenant's pod taken off the offer", &|a| {
        cpu(a) == 5.0 && a.withheld.is_none()
    });
    // A session larger than what is left, but not than the node, waits for the room
    // (it is not refused as too large).
    w.start("kbig", &["cpu=6", "mem=256m"]);
    let i = w.s.wait_for(LIMIT, "kbig's pending reason", || {
        let i = w.s.info(&w.s.admin, "kbig");
        i["pending"]["reason"].is_string().then_some(i)
    });
    assert_eq!(i["status"], "PENDING", "{i:#}");
    assert!(w.cluster.pods(&w.ns).is_empty(), "a pod was made");
    w.s.bai(&w.s.admin, &["rm", "kbig"]).expect_ok();
    w.wait_session("kbig", &["CANCELLED", "TERMINATED"]);

    // Cordoned: withheld, with the reason, its size kept.
    w.cluster.ok(&["cordon", &w.node.name], None);
    let a = wait_offer("the offer withheld", &|a| {
        a.withheld
            .as_deref()
            .is_some_and(|r| r.contains("cordoned"))
    });
    assert_eq!(cpu(&a), 5.0, "{a:?}");
    let listed = w.s.bai(&w.s.admin, &["agents"]);
    listed.expect_ok();
    assert!(
        listed.stdout.contains("withheld") && listed.stdout.contains("is cordoned"),
        "{}",
        listed.stdout
    );
    // A session that fits the node is queued, and waits saying no agent is available.
    w.start("kwait", &["cpu=0.5", "mem=256m"]);
    let i = w.s.wait_for(LIMIT, "kwait's pending reason", || {
        let i = w.s.info(&w.s.admin, "kwait");
        i["pending"]["reason"].is_string().then_some(i)
    });
    assert_eq!(i["status"], "PENDING", "{i:#}");
    assert!(
        i["pending"]["reason"]
            .as_str()
            .unwrap_or("")
            .contains("no agent of the resource group is available"),
        "{i:#}"
    );
    assert!(w.cluster.pods(&w.ns).is_empty(), "a pod was made");

    // Uncordoned: the session gets its pod on that node, and runs.
    w.cluster.ok(&["uncordon", &w.node.name], None);
    let pod = w.cluster.bound_bai_pod(&w.ns);
    assert_eq!(pod["spec"]["nodeName"], w.node.name.as_str());
    let runner = Runner::start(&pod);
    w.cluster.set_status(&w.ns, &pod_name(&pod), running());
    w.wait_session("kwait", &["RUNNING"]);
    assert!(agent(&w).withheld.is_none());

    // NotReady: withheld; Ready again: offered.
    w.set_ready("False");
    wait_offer("the offer withheld while NotReady", &|a| {
        a.withheld
            .as_deref()
            .is_some_and(|r| r.contains("not Ready"))
    });
    w.set_ready("True");
    wait_offer("the offer back when Ready", &|a| a.withheld.is_none());

    // The tenant's pod goes: its room comes back.
    w.cluster.ok(
        &[
            "delete",
            "pod",
            "theirs",
            "-n",
            &tenant,
            "--grace-period=0",
            "--force",
        ],
        None,
    );
    wait_offer("the tenant's room back", &|a| cpu(a) == 8.0);

    w.s.bai(&w.s.admin, &["rm", "kwait"]).expect_ok();
    drop(runner);
    w.assert_nothing_left();
    drop(w);
    let _ = Cluster::get().kubectl(&["delete", "namespace", &tenant, "--wait=false"]);
}

//! GPUs that NVIDIA's device plugin time-slices, on the API-server tier: the test's node
//! carries GPU feature discovery's labels (`nvidia.com/gpu.replicas=4`, two H200s) and
//! advertises eight `nvidia.com/gpu.shared` slices, as the plugin does with
//! `renameByDefault`. bai offers them as `cuda.shares` (two GPUs, in steps of 0.25), refuses
//! a request that is no whole number of slices before it is queued, and makes a pod of
//! `cuda.shares=0.5` ask for two slices. A node that shares its GPUs with MPS is read the
//! same way, but a kernel there gets one slice at most (the device plugin would fail a pod
//! asking for more): the manager knows it, refuses such a request where the group has no
//! other node, and places it on a time-sliced node where the group has one.

use super::world::*;
use bai_e2e::remote::agents;
use serde_json::json;

/// The test's node as NVIDIA's plugin and GPU feature discovery would leave it: `labels`,
/// and `resources` (JSON; `null` takes one away) as its capacity and allocatable.
fn gpu_node(cluster: &Cluster, node: &str, labels: &[&str], resources: serde_json::Value) {
    let mut args = vec!["label", "node", node];
    args.extend_from_slice(labels);
    cluster.ok(&args, None);
    let status = json!({"status": {"capacity": resources, "allocatable": resources}});
    cluster.ok(
        &[
            "patch",
            "node",
            node,
            "--subresource=status",
            "--type=merge",
            "-p",
            &status.to_string(),
        ],
        None,
    );
}

#[test]
fn a_time_sliced_gpu_node_serves_cuda_shares_as_its_slices() {
    let w = World::new("slices", 110, |cluster, node| {
        // The plugin advertises slices under the renamed resource and no whole GPU.
        gpu_node(
            cluster,
            node,
            &[
                "nvidia.com/gpu.replicas=4",
                "nvidia.com/gpu.count=2",
                "nvidia.com/gpu.product=NVIDIA-H200",
            ],
            json!({"nvidia.com/gpu": null, "nvidia.com/gpu.shared": "8"}),
        );
    });
    let offer = accelerators(&w, "kapi-slices");
    assert_eq!(
        offer.get("cuda.shares").map(String::as_str),
        Some("2"),
        "{offer:?}"
    );
    assert!(!offer.contains_key("cuda.device"), "{offer:?}");

    // Not a whole number of slices: refused at once, naming the step.
    refused(
        &w,
        "kslicebad",
        &["cuda.shares=0.3"],
        "cuda.shares=0.3 is not a multiple of 0.25",
    );

    // Half a GPU is two slices: requests = limits.
    runs_as_a_pod_of(
        &w,
        "kslice",
        "cuda.shares=0.5",
        json!({"cpu": "500m", "memory": "268435456", "nvidia.com/gpu.shared": "2"}),
    );
}

#[test]
fn an_mps_gpu_node_gives_a_kernel_one_slice_at_most() {
    let mps = |cluster: &Cluster, node: &str| {
        // Not renamed: nvidia.com/gpu counts the MPS slices (two GPUs, four each).
        gpu_node(
            cluster,
            node,
            &[
                "nvidia.com/gpu.replicas=4",
                "nvidia.com/gpu.sharing-strategy=mps",
            ],
            json!({"nvidia.com/gpu": "8"}),
        );
    };
    let w = World::new("mps", 110, mps);
    let offer = accelerators(&w, "kapi-mps");
    assert_eq!(
        offer.get("cuda.shares").map(String::as_str),
        Some("2"),
        "{offer:?}"
    );
    // The manager knows the limit, and the admin sees it.
    let listed = w.s.bai(&w.s.admin, &["agents"]).expect_ok().stdout.clone();
    assert!(
        listed.contains(
            "kapi-mps: a kernel may have at most cuda.shares=0.25 here: its GPUs are shared \
             with MPS 4 ways, which gives a kernel one slice at most"
        ),
        "{listed}"
    );

    // Two slices, where the group's only node gives a kernel one: refused at once, in one
    // line, before it is queued; no pod is made.
    refused(
        &w,
        "kmpsbig",
        &["cuda.shares=0.5"],
        "a kernel may have at most cuda.shares=0.25 on kapi-mps (its GPUs are shared with MPS 4 \
         ways, which gives a kernel one slice at most); ask for cuda.shares=0.25 or less",
    );
    w.assert_nothing_left();

    // One slice: a pod asking for one nvidia.com/gpu.
    runs_as_a_pod_of(
        &w,
        "kmps",
        "cuda.shares=0.25",
        json!({"cpu": "500m", "memory": "268435456", "nvidia.com/gpu": "1"}),
    );

    // A time-sliced node joins the group: two slices are taken now, and always go there,
    // never to the MPS node (where the device plugin would fail the pod).
    let sliced = w.another("sliced", |cluster, node| {
        gpu_node(
            cluster,
            node,
            &["nvidia.com/gpu.replicas=4"],
            json!({"nvidia.com/gpu": "8"}),
        );
    });
    // Sent to the MPS node by hand (`--assign-agent`), two slices are refused at once, in one
    // line, although the group now has a node for them.
    let args = [
        "start",
        "-t",
        "kmpsput",
        "--assign-agent",
        "kapi-mps",
        "-r",
        "cpu=0.5",
        "-r",
        "mem=256m",
        "-r",
        "cuda.shares=0.5",
        "python",
    ];
    let r = w.s.bai(&w.s.admin, &args);
    assert!(!r.ok(), "{r:?}");
    assert!(
        r.stderr.contains(
            "agent \"kapi-mps\" cannot take this session: a kernel may have at most \
             cuda.shares=0.25 on kapi-mps"
        ) && r.stderr.trim().lines().count() == 1,
        "{r:?}"
    );
    let none = w.s.bai(&w.s.admin, &["session", "info", "kmpsput"]);
    assert!(!none.ok(), "no session was made: {none:?}");

    for name in ["kslic1", "kslic2"] {
        w.start(name, &["cpu=0.5", "mem=256m", "cuda.shares=0.5"]);
        let pod = w.cluster.bound_bai_pod(&w.ns);
        assert_eq!(pod["spec"]["nodeName"], sliced.node.name.as_str(), "{pod}");
        let want = json!({"cpu": "500m", "memory": "268435456", "nvidia.com/gpu": "2"});
        assert_eq!(
            pod["spec"]["containers"][0]["resources"]["limits"], want,
            "{pod}"
        );
        let runner = Runner::start(&pod);
        w.wait_session(name, &["RUNNING"]);
        w.s.bai(&w.s.admin, &["rm", name]).expect_ok();
        let gone = bai_e2e::wait_until(std::time::Duration::from_secs(LIMIT), || {
            w.cluster.pods(&w.ns).is_empty() && sliced.agent.kernel_dirs() == 0
        });
        assert!(
            gone,
            "left: {:?}\n{}",
            w.cluster.pods(&w.ns),
            sliced.agent.log()
        );
        drop(runner);
    }
}

/// NVIDIA's device plugin under the `mixed` MIG strategy offers each MIG profile as its own
/// resource (`nvidia.com/mig-1g.18gb`, an H200 cut in seven): bai offers it as Backend.AI's
/// slot `cuda.device:1g.18gb-mig`, in whole instances, and a kernel of one becomes a pod of
/// that resource.
#[test]
fn a_mig_node_offers_its_instances_by_profile() {
    // NVIDIA's mixed strategy on a node of two GPUs: one whole, one cut into seven instances.
    let w = World::new("mig", 110, |cluster, node| {
        gpu_node(
            cluster,
            node,
            &["nvidia.com/mig.strategy=mixed"],
            json!({"nvidia.com/gpu": "1", "nvidia.com/mig-1g.18gb": "7"}),
        );
    });
    let offer = accelerators(&w, "kapi-mig");
    assert_eq!(
        offer.get("cuda.device:1g.18gb-mig").map(String::as_str),
        Some("7"),
        "{offer:?}"
    );
    assert_eq!(
        offer.get("cuda.device").map(String::as_str),
        Some("1"),
        "{offer:?}"
    );

    // Half an instance: refused at once, saying what an instance is.
    refused(
        &w,
        "kmighalf",
        &["cuda.device:1g.18gb-mig=0.5"],
        "each is one MIG instance of a GPU, ask for 1",
    );
    // Two instances: CUDA would use one of them; refused at once.
    refused(
        &w,
        "kmigtwo",
        &["cuda.device:1g.18gb-mig=2"],
        "a kernel takes one MIG instance at most",
    );
    // An instance and the whole GPU beside it: one kind of GPU per kernel (Backend.AI's rule).
    refused(
        &w,
        "kmigmixed",
        &["cuda.device:1g.18gb-mig=1", "cuda.device=1"],
        "a kernel takes one kind of GPU, but this asks for both cuda.device and \
         cuda.device:1g.18gb-mig",
    );
    w.assert_nothing_left();

    // One instance: a pod of one nvidia.com/mig-1g.18gb, requests = limits.
    runs_as_a_pod_of(
        &w,
        "kmig",
        "cuda.device:1g.18gb-mig=1",
        json!({"cpu": "500m", "memory": "268435456", "nvidia.com/mig-1g.18gb": "1"}),
    );
}

/// The accelerator slots the agent `id` offers, as `bai agents` has them.
fn accelerators(w: &World, id: &str) -> std::collections::BTreeMap<String, String> {
    agents(&w.s)
        .into_iter()
        .find(|a| a.id == id)
        .expect("the agent")
        .capacity
        .accelerators
}

/// `bai start` of a session `name` of half a core, 256 MiB and `gpus` (each a `-r`) fails at
/// once in one line that says `words`, and no session is made.
fn refused(w: &World, name: &str, gpus: &[&str], words: &str) {
    let mut args = vec!["start", "-t", name, "-r", "cpu=0.5", "-r", "mem=256m"];
    for g in gpus {
        args.extend(["-r", g]);
    }
    args.push("python");
    let r = w.s.bai(&w.s.admin, &args);
    assert!(!r.ok(), "{r:?}");
    assert!(
        r.stderr.contains(words) && r.stderr.trim().lines().count() == 1,
        "{r:?}"
    );
    let none = w.s.bai(&w.s.admin, &["session", "info", name]);
    assert!(!none.ok(), "no session was made: {none:?}");
}

/// A session `name` of half a core, 256 MiB and `gpus` becomes a pod bound to the test's node
/// whose requests and limits are both `want`; with its runner answering it runs, and removed
/// it leaves nothing.
fn runs_as_a_pod_of(w: &World, name: &str, gpus: &str, want: serde_json::Value) {
    w.start(name, &["cpu=0.5", "mem=256m", gpus]);
    let pod = w.cluster.bound_bai_pod(&w.ns);
    assert_eq!(pod["spec"]["nodeName"], w.node.name.as_str(), "{pod}");
    let container = &pod["spec"]["containers"][0];
    assert_eq!(container["resources"]["requests"], want, "{pod}");
    assert_eq!(container["resources"]["limits"], want, "{pod}");
    let runner = Runner::start(&pod);
    w.wait_session(name, &["RUNNING"]);
    w.s.bai(&w.s.admin, &["rm", name]).expect_ok();
    w.assert_nothing_left();
    drop(runner);
}

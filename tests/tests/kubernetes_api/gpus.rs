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
    let a = agents(&w.s)
        .into_iter()
        .find(|a| a.id == "kapi-slices")
        .expect("the agent");
    let shares: f64 = a.capacity.accelerators["cuda.shares"].parse().unwrap();
    assert!((shares - 2.0).abs() < 1e-9, "{:?}", a.capacity);
    assert!(
        !a.capacity.accelerators.contains_key("cuda.device"),
        "{:?}",
        a.capacity
    );

    // Not a whole number of slices: refused at once, naming the step.
    let bad = w.s.bai(
        &w.s.admin,
        &[
            "start",
            "-t",
            "kslicebad",
            "-r",
            "cpu=0.5",
            "-r",
            "mem=256m",
            "-r",
            "cuda.shares=0.3",
            "python",
        ],
    );
    assert!(!bad.ok(), "{bad:?}");
    assert!(
        bad.stderr
            .contains("cuda.shares=0.3 is not a multiple of 0.25"),
        "{bad:?}"
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
    let a = agents(&w.s)
        .into_iter()
        .find(|a| a.id == "kapi-mps")
        .expect("the agent");
    let shares: f64 = a.capacity.accelerators["cuda.shares"].parse().unwrap();
    assert!((shares - 2.0).abs() < 1e-9, "{:?}", a.capacity);
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
    let big = [
        "start",
        "-t",
        "kmpsbig",
        "-r",
        "cpu=0.5",
        "-r",
        "mem=256m",
        "-r",
        "cuda.shares=0.5",
        "python",
    ];
    let refused = w.s.bai(&w.s.admin, &big);
    assert!(!refused.ok(), "{refused:?}");
    assert!(
        refused.stderr.contains(
            "a kernel may have at most cuda.shares=0.25 on kapi-mps (its GPUs are shared with \
             MPS 4 ways, which gives a kernel one slice at most); ask for cuda.shares=0.25 or less"
        ) && refused.stderr.trim().lines().count() == 1,
        "{refused:?}"
    );
    let none = w.s.bai(&w.s.admin, &["session", "info", "kmpsbig"]);
    assert!(!none.ok(), "no session was made: {none:?}");
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

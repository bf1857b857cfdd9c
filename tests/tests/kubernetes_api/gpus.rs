//! GPUs that NVIDIA's device plugin time-slices, on the API-server tier: the test's node
//! carries GPU feature discovery's labels (`nvidia.com/gpu.replicas=4`, two H200s) and
//! advertises eight `nvidia.com/gpu.shared` slices, as the plugin does with
//! `renameByDefault`. bai offers them as `cuda.shares` (two GPUs, in steps of 0.25), refuses
//! a request that is no whole number of slices before it is queued, and makes a pod of
//! `cuda.shares=0.5` ask for two slices. A node that shares its GPUs with MPS is read the
//! same way, but a kernel there gets one slice at most (the device plugin would fail a pod
//! asking for more): bai says so instead of making that pod.

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
    let w = World::new("mps", 110, |cluster, node| {
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
    });
    let a = agents(&w.s)
        .into_iter()
        .find(|a| a.id == "kapi-mps")
        .expect("the agent");
    let shares: f64 = a.capacity.accelerators["cuda.shares"].parse().unwrap();
    assert!((shares - 2.0).abs() < 1e-9, "{:?}", a.capacity);

    // Two slices: refused with the reason, and no pod is made for it.
    w.start("kmpsbig", &["cpu=0.5", "mem=256m", "cuda.shares=0.5"]);
    let ended = w.wait_session("kmpsbig", &["ERROR", "CANCELLED"]);
    let why = ended["status_info"].as_str().unwrap_or("");
    assert!(
        why.contains("shared with MPS 4 ways, which gives a kernel one slice at most")
            && why.contains("ask for cuda.shares=0.25"),
        "{ended}"
    );
    w.assert_nothing_left();

    // One slice: a pod asking for one nvidia.com/gpu.
    runs_as_a_pod_of(
        &w,
        "kmps",
        "cuda.shares=0.25",
        json!({"cpu": "500m", "memory": "268435456", "nvidia.com/gpu": "1"}),
    );
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

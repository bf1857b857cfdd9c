use super::*;
use serde_json::json;

fn node(cordoned: bool, ready: &str) -> Node {
    serde_json::from_value(json!({
        "metadata": {"name": "n1"},
        "spec": {"unschedulable": cordoned},
        "status": {
            "allocatable": {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "2", "pods": "110"},
            "conditions": [{"type": "Ready", "status": ready}],
            "images": [{"names": ["bai/python@sha256:abc", "bai/python:3.11-bookworm"], "sizeBytes": 1000}]
        }
    }))
    .unwrap()
}

fn pod(node: &str, bai: bool, phase: &str, cpu: &str, mem: &str, gpu: Option<&str>) -> Pod {
    let mut req = json!({"cpu": cpu, "memory": mem});
    if let Some(g) = gpu {
        req["nvidia.com/gpu"] = json!(g);
    }
    let labels = if bai {
        json!({"app.kubernetes.io/managed-by": "bai", "ai.bai.agent": "me", "ai.bai.kernel": uuid::Uuid::from_u128(3).to_string()})
    } else {
        json!({"app": "other"})
    };
    serde_json::from_value(json!({
        "metadata": {"name": "p", "labels": labels},
        "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": req}}]},
        "status": {"phase": phase}
    }))
    .unwrap()
}

#[test]
fn others_requests_are_taken_off_and_bai_kernels_are_not() {
    let pods = vec![
        pod("n1", false, "Running", "500m", "1Gi", Some("1")),
        pod("n1", true, "Running", "1", "1Gi", None),
        pod("n2", false, "Running", "1", "1Gi", None),
        pod("n1", false, "Succeeded", "1", "1Gi", None),
    ];
    let got = offered(&node(false, "True"), &pods, "me");
    assert_eq!(got.cpu_milli, 3500);
    assert_eq!(got.mem, 7 << 30);
    assert_eq!(got.accel[CUDA_DEVICE], 1000);
}

#[test]
fn init_containers_count_when_larger() {
    let mut p = pod("n1", false, "Pending", "100m", "1Mi", None);
    let init: Container = serde_json::from_value(
        json!({"name": "i", "resources": {"requests": {"cpu": "2", "memory": "1Mi"}}}),
    )
    .unwrap();
    p.spec.as_mut().unwrap().init_containers = Some(vec![init]);
    assert_eq!(offered(&node(false, "True"), &[p], "me").cpu_milli, 2000);
}

#[test]
fn a_cordoned_or_not_ready_node_is_not_offered() {
    assert_eq!(unusable(&node(false, "True")), None);
    assert!(unusable(&node(true, "True")).unwrap().contains("cordoned"));
    assert!(
        unusable(&node(false, "Unknown"))
            .unwrap()
            .contains("not Ready")
    );
}

#[test]
fn images_are_the_tagged_names() {
    let i = images(&node(false, "True"));
    assert_eq!(i.len(), 1);
    assert_eq!(i[0].name, "bai/python:3.11-bookworm");
    assert_eq!(i[0].digest, "sha256:abc");
}

/// A node whose GPUs NVIDIA's device plugin time-slices: `labels` from GPU feature
/// discovery, `allocatable` as the plugin advertises the slices.
fn sliced(labels: serde_json::Value, allocatable: serde_json::Value) -> Node {
    serde_json::from_value(json!({
        "metadata": {"name": "n1", "labels": labels},
        "status": {"allocatable": allocatable, "conditions": [{"type": "Ready", "status": "True"}]}
    }))
    .unwrap()
}

#[test]
fn time_sliced_gpus_are_offered_as_cuda_shares_less_others_slices() {
    let n = sliced(
        json!({"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.count": "2",
               "nvidia.com/gpu.product": "NVIDIA-H200", "nvidia.com/gpu.memory": "143771"}),
        json!({"cpu": "8", "memory": "32Gi", "nvidia.com/gpu.shared": "8"}),
    );
    let sharing = crate::kubernetes::gpus::gpu_sharing(&n).unwrap();
    assert_eq!(sharing.resource, "nvidia.com/gpu.shared");
    assert_eq!(sharing.replicas, 4);
    assert!(!sharing.mps, "no strategy label: time-slicing");
    assert_eq!(sharing.most_slices(), None);
    assert_eq!(sharing.slices(500), Some(2));
    assert_eq!(sharing.slices(300), None);
    let got = offered(&n, &[], "me");
    assert_eq!(
        got.accel[CUDA_SHARES], 2000,
        "8 slices of 4 per GPU: 2 GPUs"
    );
    assert!(!got.accel.contains_key(CUDA_DEVICE));
    // Another tenant's pod holding three slices leaves five (1.25 GPUs).
    let mut other = pod("n1", false, "Running", "100m", "1Mi", None);
    other.spec.as_mut().unwrap().containers[0]
        .resources
        .as_mut()
        .unwrap()
        .requests
        .as_mut()
        .unwrap()
        .insert("nvidia.com/gpu.shared".into(), Quantity("3".into()));
    assert_eq!(offered(&n, &[other], "me").accel[CUDA_SHARES], 1250);
    // The devices the manager checks a request's step against: one per physical GPU.
    let devices = devices_of(&n);
    assert_eq!(devices.len(), 2);
    assert!(devices.iter().all(|d| d.slot == CUDA_SHARES
        && d.quantum_milli == 250
        && d.capacity_milli == 1000
        && d.model == "NVIDIA-H200"
        && d.memory == 143_771 << 20));
}

#[test]
fn gpus_shared_with_mps_are_offered_as_time_sliced_ones_are_but_one_slice_a_kernel() {
    let n = sliced(
        json!({"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "mps"}),
        json!({"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "8"}),
    );
    let sharing = crate::kubernetes::gpus::gpu_sharing(&n).unwrap();
    assert!(sharing.mps);
    assert_eq!(sharing.resource, NVIDIA_GPU);
    assert_eq!(sharing.most_slices(), Some(1));
    assert_eq!(offered(&n, &[], "me").accel[CUDA_SHARES], 2000);
    let devices = devices_of(&n);
    assert_eq!(devices.len(), 2, "8 slices of 4 per GPU, no count label");
    assert!(
        devices
            .iter()
            .all(|d| d.quantum_milli == 250 && d.model == "NVIDIA GPU (shared with MPS)")
    );
    // Told time-slicing in so many words: as without the label.
    let n = sliced(
        json!({"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"}),
        json!({"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "8"}),
    );
    assert!(!crate::kubernetes::gpus::gpu_sharing(&n).unwrap().mps);
}

#[test]
fn unrenamed_slices_are_shares_and_unsliced_or_odd_gpus_stay_whole() {
    // Not renamed: nvidia.com/gpu counts slices.
    let n = sliced(
        json!({"nvidia.com/gpu.replicas": "2"}),
        json!({"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "4"}),
    );
    let got = offered(&n, &[], "me");
    assert_eq!(got.accel[CUDA_SHARES], 2000);
    assert!(!got.accel.contains_key(CUDA_DEVICE));
    assert_eq!(devices_of(&n).len(), 2);
    // Sliced three ways: a slice is no whole number of thousandths, and a slice is not a
    // GPU either: nothing is offered.
    let n = sliced(
        json!({"nvidia.com/gpu.replicas": "3"}),
        json!({"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "6"}),
    );
    assert!(offered(&n, &[], "me").accel.is_empty());
    assert!(devices_of(&n).is_empty());
    // One replica (no sharing) or no number: whole GPUs, as on any node.
    for replicas in ["1", "many"] {
        let n = sliced(
            json!({"nvidia.com/gpu.replicas": replicas}),
            json!({"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "4"}),
        );
        let got = offered(&n, &[], "me");
        assert_eq!(got.accel[CUDA_DEVICE], 4000, "replicas {replicas}");
        assert!(!got.accel.contains_key(CUDA_SHARES));
        assert!(devices_of(&n).is_empty());
    }
}

/// The devices a node's time-sliced GPUs report (none where it does not slice them).
fn devices_of(n: &Node) -> Vec<bai_core::accel::DeviceInfo> {
    crate::kubernetes::gpus::gpu_sharing(n)
        .map(|s| crate::kubernetes::gpus::devices(n, &s))
        .unwrap_or_default()
}

/// MIG instances (the device plugin's mixed strategy) are offered per profile by
/// Backend.AI's slot names, as whole devices, less what others' pods (init containers
/// counted as for cpu) hold; a profile all taken is not offered, and a resource that only
/// looks like one is not read.
#[test]
fn mig_instances_are_offered_per_profile_less_others() {
    let mut n = node(false, "True");
    let all = n.status.as_mut().unwrap().allocatable.as_mut().unwrap();
    all.insert("nvidia.com/mig-1g.18gb".into(), Quantity("7".into()));
    all.insert("nvidia.com/mig-3g.71gb".into(), Quantity("1".into()));
    all.insert("nvidia.com/mig-".into(), Quantity("4".into()));
    let holding = |resource: &str, count: &str, bai: bool| {
        let mut p = pod("n1", bai, "Running", "100m", "1Mi", None);
        let c = &mut p.spec.as_mut().unwrap().containers[0];
        c.resources
            .as_mut()
            .unwrap()
            .requests
            .as_mut()
            .unwrap()
            .insert(resource.into(), Quantity(count.into()));
        p
    };
    let pods = vec![
        holding("nvidia.com/mig-1g.18gb", "2", false),
        holding("nvidia.com/mig-1g.18gb", "1", true),
        holding("nvidia.com/mig-3g.71gb", "1", false),
    ];
    let got = offered(&n, &pods, "me");
    assert_eq!(got.accel["cuda.device:1g.18gb-mig"], 5000, "{got:?}");
    assert!(
        !got.accel.contains_key("cuda.device:3g.71gb-mig"),
        "{got:?}"
    );
    assert_eq!(
        got.accel.len(),
        2,
        "cuda.device and one MIG profile: {got:?}"
    );
    assert_eq!(
        crate::kubernetes::gpus::mig_resource("cuda.device:1g.18gb-mig").as_deref(),
        Some("nvidia.com/mig-1g.18gb")
    );
    assert_eq!(
        crate::kubernetes::gpus::mig_resource("cuda.device:a/b-mig"),
        None
    );
}

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

use super::*;
use serde_json::json;

fn node(cordoned: bool, ready: &str, images: &[&str]) -> Node {
    serde_json::from_value(json!({
        "metadata": {"name": "n1", "resourceVersion": "7"},
        "spec": {"unschedulable": cordoned},
        "status": {
            "allocatable": {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "1"},
            "conditions": [{"type": "Ready", "status": ready}],
            "images": [{"names": images, "sizeBytes": 1000}],
            "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux",
                "machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "",
                "osImage": "", "containerRuntimeVersion": "", "kubeletVersion": "",
                "kubeProxyVersion": ""}
        }
    }))
    .unwrap()
}

fn tenant(cpu: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": "theirs", "labels": {"app": "other"}},
        "spec": {"nodeName": "n1", "containers": [{"name": "c",
            "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]},
        "status": {"phase": "Running"}
    }))
    .unwrap()
}

const IMG: &[&str] = &["bai/python:3.11"];

#[test]
fn a_usable_node_offers_its_allocatable_less_others() {
    let o = of(
        "n1",
        "me",
        Some(&node(false, "True", IMG)),
        &[tenant("1")],
        "9".into(),
    );
    assert_eq!(o.capacity.cpu_milli, 3000);
    assert_eq!(o.size.cpu_milli, 4000);
    assert_eq!(o.capacity.mem, 7 << 30);
    assert_eq!(o.withheld, None);
    assert_eq!(o.arch.as_deref(), Some("amd64"));
    assert_eq!(o.images.len(), 1);
    assert_eq!(o.versions, ("7".to_string(), "9".to_string()));
}

#[test]
fn a_cordoned_not_ready_or_gone_node_withholds_its_offer_and_says_why() {
    for (n, words) in [
        (Some(node(true, "True", IMG)), "cordoned"),
        (Some(node(false, "False", IMG)), "not Ready"),
        (None, "gone"),
    ] {
        let o = of("n1", "me", n.as_ref(), &[], String::new());
        let why = o.withheld.clone().unwrap_or_default();
        assert!(why.contains(words) && why.contains("n1"), "{o:?}");
        // A node that is there keeps its size (a session that fits it waits for it).
        assert_eq!(
            o.capacity.cpu_milli,
            if n.is_some() { 4000 } else { 0 },
            "{o:?}"
        );
    }
}

#[test]
fn only_a_change_is_reported() {
    let ready = of("n1", "me", Some(&node(false, "True", IMG)), &[], "1".into());
    // Same offer, new versions (a heartbeat): nothing.
    let again = of("n1", "me", Some(&node(false, "True", IMG)), &[], "2".into());
    assert!(changes(&ready, &again).is_empty());
    // A tenant's pod came: the smaller offer.
    let taken = of(
        "n1",
        "me",
        Some(&node(false, "True", IMG)),
        &[tenant("3")],
        "3".into(),
    );
    assert_eq!(taken.capacity.cpu_milli, 1000);
    assert_eq!(
        changes(&ready, &taken),
        vec![AgentEvent::OfferChanged {
            capacity: taken.capacity.clone(),
            size: Some(ready.capacity.clone()),
            withheld: None,
            kernels_unreachable: false,
            kernel_most: Default::default(),
        }]
    );
    // Cordoned: withheld, with the reason.
    let cordoned = of(
        "n1",
        "me",
        Some(&node(true, "True", IMG)),
        &[tenant("3")],
        "4".into(),
    );
    let ev = changes(&taken, &cordoned);
    assert!(
        matches!(ev.as_slice(), [AgentEvent::OfferChanged { capacity, withheld: Some(w),
                kernels_unreachable: false, .. }]
            if *capacity == taken.capacity && w.contains("cordoned")),
        "{ev:?}"
    );
    // NotReady (and cordoned): its kernels cannot be reached.
    let down = of(
        "n1",
        "me",
        Some(&node(true, "Unknown", IMG)),
        &[tenant("3")],
        "4".into(),
    );
    let ev = changes(&cordoned, &down);
    assert!(
        matches!(
            ev.as_slice(),
            [AgentEvent::OfferChanged {
                kernels_unreachable: true,
                ..
            }]
        ),
        "{ev:?}"
    );
    // Gone: withheld, and its size and images kept for its return.
    let gone = of("n1", "me", None, &[], "5".into());
    let ev = changes(&cordoned, &gone);
    assert!(
        matches!(ev.as_slice(), [AgentEvent::OfferChanged { capacity, size: Some(size), withheld: Some(w),
                kernels_unreachable: true, .. }]
            if *capacity == taken.capacity && *size == ready.capacity && w.contains("gone")),
        "{ev:?}"
    );
    // Back, the tenant gone and a new image on the node: both said.
    let back = of(
        "n1",
        "me",
        Some(&node(false, "True", &["bai/python:3.11", "bai/r:4"])),
        &[],
        "6".into(),
    );
    let ev = changes(&gone, &back);
    assert_eq!(ev.len(), 2, "{ev:?}");
    assert_eq!(
        ev[0],
        AgentEvent::OfferChanged {
            capacity: ready.capacity.clone(),
            size: Some(ready.capacity.clone()),
            withheld: None,
            kernels_unreachable: false,
            kernel_most: Default::default(),
        }
    );
    assert!(matches!(&ev[1], AgentEvent::ImagesChanged { images } if images.len() == 2));
}

#[test]
fn others_are_listed_without_this_agents_own_kernels() {
    let lp = others_on("n1", "me");
    assert_eq!(lp.field_selector.as_deref(), Some("spec.nodeName=n1"));
    assert_eq!(lp.label_selector.as_deref(), Some("ai.bai.agent!=me"));
}

/// A node whose GPUs come to be shared with MPS (the device plugin reconfigured, the label
/// set): the offer's change says how much of `cuda.shares` one kernel may have there, and
/// its return to time-slicing takes that limit away again.
#[test]
fn a_node_that_comes_to_share_its_gpus_with_mps_reports_a_kernels_limit() {
    let shared = |strategy: &str| -> Node {
        let mut n = node(false, "True", IMG);
        n.metadata.labels = Some(
            [
                ("nvidia.com/gpu.replicas".to_string(), "4".to_string()),
                (
                    "nvidia.com/gpu.sharing-strategy".to_string(),
                    strategy.to_string(),
                ),
            ]
            .into(),
        );
        n
    };
    let sliced = of("n1", "me", Some(&shared("time-slicing")), &[], "1".into());
    let mps = of("n1", "me", Some(&shared("mps")), &[], "2".into());
    assert_eq!(sliced.capacity, mps.capacity, "the same slices offered");
    let ev = changes(&sliced, &mps);
    let [AgentEvent::OfferChanged { kernel_most, .. }] = ev.as_slice() else {
        panic!("{ev:?}");
    };
    let most = &kernel_most["cuda.shares"];
    assert_eq!(most.amount, 250);
    assert_eq!(
        most.why,
        "its GPUs are shared with MPS 4 ways, which gives a kernel one slice at most"
    );
    let ev = changes(&mps, &sliced);
    assert!(
        matches!(ev.as_slice(), [AgentEvent::OfferChanged { kernel_most, .. }] if kernel_most.is_empty()),
        "{ev:?}"
    );
    // Gone, it keeps its limit for its return.
    let gone = of("n1", "me", None, &[], "3".into());
    assert!(
        matches!(changes(&mps, &gone).as_slice(), [AgentEvent::OfferChanged { kernel_most, .. }] if kernel_most.len() == 1)
    );
}

//! Cluster requests as the HTTP edge reads them and the lifecycle plans them: refused before
//! anything is stored. How cluster sessions run is tested beside the control plane
//! (`bai-control/tests/cluster.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod support;

use bai_core::status::SessionStatus as S;
use serde_json::json;
use support::{Harness, IMAGE, plan};

#[tokio::test(start_paused = true)]
async fn cluster_requests_are_checked_before_anything_is_stored() {
    let h = Harness::start().await;
    let body = |extra: serde_json::Value| {
        let mut b = json!({"name": "cluster-check", "image": IMAGE, "enqueueOnly": true,
                           "config": {"resources": {"cpu": 1, "mem": "1g"}}});
        for (k, v) in extra.as_object().expect("object") {
            b[k] = v.clone();
        }
        b
    };
    for (extra, words) in [
        (json!({"clusterSize": 0}), "clusterSize 0"),
        (json!({"clusterSize": 65}), "asks for 65 containers"),
        (json!({"clusterSize": "two"}), "clusterSize"),
        (
            json!({"clusterSize": 2, "clusterMode": "sideways"}),
            "sideways",
        ),
        // Multi-node: one kernel must fit a node, all of them the group.
        (
            json!({"clusterSize": 9, "clusterMode": "multi-node"}),
            "9 kernels ask for 9 cores",
        ),
        (
            json!({"clusterSize": 2, "clusterMode": "multi-node",
                   "config": {"resources": {"cpu": 9, "mem": "1g"}}}),
            "each of its 2 kernels",
        ),
        // 9 kernels of 1 core do not fit on the 8-core node.
        (json!({"clusterSize": 9}), "9 kernels together"),
    ] {
        let e = plan(&h.m.lifecycle, &h.user, &body(extra.clone())).expect_err("refused");
        assert!(e.msg.contains(words), "{extra}: {}", e.msg);
        if extra["clusterSize"] == 65 {
            assert_eq!(e.error_code.as_deref(), Some("session_create_unavailable"));
        }
    }
    // The official client's spelling of the mode is accepted.
    assert!(
        plan(
            &h.m.lifecycle,
            &h.user,
            &body(json!({"clusterSize": 2, "clusterMode": "SINGLE_NODE"}))
        )
        .is_ok()
    );

    // A policy's max_containers_per_session.
    h.store
        .put_policy(&bai_store::PolicyRow {
            name: "small".into(),
            max_containers_per_session: Some(2),
            ..Default::default()
        })
        .expect("policy");
    h.store
        .set_keypair_policy("AKUSER", "small")
        .expect("assign");
    let e = plan(&h.m.lifecycle, &h.user, &body(json!({"clusterSize": 3}))).expect_err("refused");
    assert_eq!(
        e.error_code.as_deref(),
        Some("session_create_unavailable"),
        "{}",
        e.msg
    );
    assert!(plan(&h.m.lifecycle, &h.user, &body(json!({"clusterSize": 2}))).is_ok());
    assert!(
        h.store
            .sessions_in(&[S::Pending])
            .expect("sessions")
            .is_empty()
    );
}

//! Egress policies through the control plane, with the dummy agent: every kernel is given its
//! group's policy at launch and the cluster's nodes, the session records the policy it was
//! launched under (a later change of the group leaves it as it was), and an agent that
//! cannot enforce policies takes only sessions of open groups.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod harness;

use bai_core::cluster::PEER_MANAGER;
use bai_core::egress::{EgressMode, EgressPolicy};
use bai_core::status::SessionStatus as S;
use harness::Plane;

fn set_policy(h: &Plane, policy: EgressPolicy) {
    let mut g = h
        .store
        .resource_group("default")
        .expect("store")
        .expect("the default group");
    g.egress = policy;
    h.store.put_resource_group(&g).expect("group saved");
}

#[tokio::test(start_paused = true)]
async fn kernels_start_under_the_groups_policy_of_the_moment() {
    let h = Plane::start().await;
    let first = h.create("first", |s| s.cluster_size = 2);
    let row = h.wait_status(first.id, S::Running).await;
    assert_eq!(row.state.egress, Some(EgressPolicy::default()));
    let spec = h.agent.spec(row.main_kernel_id).expect("main1's spec");
    assert_eq!(spec.egress.policy.mode, EgressMode::Default);
    assert!(
        spec.egress.nodes.iter().any(|n| n == PEER_MANAGER),
        "the manager's host is among the closed nodes: {:?}",
        spec.egress.nodes
    );
    let sub = h.store.sub_kernels(row.id).expect("subs")[0].id;
    assert_eq!(h.agent.spec(sub).expect("sub1").egress, spec.egress);

    let closed = EgressPolicy::parse("closed", &["10.1.0.0/16:3128".into()]).expect("policy");
    set_policy(&h, closed.clone());
    let second = h.create("second", |_| {});
    let row2 = h.wait_status(second.id, S::Running).await;
    assert_eq!(row2.state.egress.as_ref(), Some(&closed));
    assert_eq!(
        h.agent
            .spec(row2.main_kernel_id)
            .expect("spec")
            .egress
            .policy,
        closed
    );
    // The first session keeps what it runs under.
    assert_eq!(h.row(first.id).state.egress, Some(EgressPolicy::default()));
}

#[tokio::test(start_paused = true)]
async fn an_agent_that_cannot_enforce_takes_only_open_groups() {
    let h = Plane::start().await;
    let agent = h.agents.get("dummy-a").expect("the agent");
    agent
        .info
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .egress_error = Some("cannot run nft".into());
    let s = h.create("waits", |_| {});
    // The scheduler passes it over, saying why it waits: the policy and the agent's own word.
    let row = h
        .wait(s.id, "the scheduler to pass it over", |r| {
            r.state.status != S::Pending
                || r.state.status_info.as_deref().is_some_and(|i| {
                    i.contains("can enforce its egress policy default")
                        && i.contains("cannot run nft")
                })
        })
        .await;
    assert_eq!(row.state.status, S::Pending, "{:?}", row.state.status_info);
    assert!(h.agent.live().is_empty());
    set_policy(&h, EgressPolicy::parse("open", &[]).expect("open"));
    let row = h.wait_status(s.id, S::Running).await;
    assert_eq!(row.state.egress.map(|e| e.mode), Some(EgressMode::Open));
}

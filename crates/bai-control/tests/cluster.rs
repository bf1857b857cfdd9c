//! Cluster sessions in process, with the dummy agent: every kernel is made at once or none
//! is, each gets its place in the cluster and one share of the resources, a dead kernel ends
//! the session naming it, and the queue holds a cluster until all of it fits.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod harness;

use bai_agent::CreateStep;
use bai_core::cluster::ClusterMode;
use bai_core::cluster::ClusterRole;
use bai_core::spec::SessionSpec;
use bai_core::status::SessionStatus as S;
use harness::Plane;

/// A cluster of `size` kernels of `cpu` cores (and 1 GiB) each, in `mode`.
fn cluster_in(mode: ClusterMode, size: u32, cpu: u64) -> impl Fn(&mut SessionSpec) {
    move |s| {
        s.cluster_mode = mode;
        s.cluster_size = size;
        s.resources.slots.cpu_milli = cpu * 1000;
    }
}

/// A single-node cluster of `size` kernels of `cpu` cores each.
fn cluster(size: u32, cpu: u64) -> impl Fn(&mut SessionSpec) {
    cluster_in(ClusterMode::SingleNode, size, cpu)
}

#[tokio::test(start_paused = true)]
async fn a_cluster_session_makes_all_its_kernels_and_ends_them_together() {
    let h = Plane::start().await;
    let s = h.create("trio", cluster(3, 2));
    assert_eq!(
        (s.spec.cluster_size, s.spec.requested_slots.cpu_milli),
        (3, 6000)
    );
    let row = h.wait_status(s.id, S::Running).await;
    let subs = h.store.sub_kernels(row.id).expect("subs");
    assert_eq!(subs.len(), 2);
    let mut ids = vec![row.main_kernel_id];
    ids.extend(subs.iter().map(|k| k.id));
    let mut live = h.agent.live();
    live.sort();
    let mut want = ids.clone();
    want.sort();
    assert_eq!(live, want, "every kernel runs on the agent");

    let specs: Vec<_> = ids
        .iter()
        .map(|k| h.agent.spec(*k).expect("spec"))
        .collect();
    let places: Vec<_> = specs
        .iter()
        .map(|s| {
            let c = s
                .cluster
                .clone()
                .expect("a cluster kernel knows its cluster");
            (c.place.role, c.place.hostname, c.size, s.slots.cpu_milli)
        })
        .collect();
    assert_eq!(
        places,
        vec![
            (ClusterRole::Main, "main1".to_string(), 3, 2000),
            (ClusterRole::Sub, "sub1".to_string(), 3, 2000),
            (ClusterRole::Sub, "sub2".to_string(), 3, 2000),
        ]
    );
    let keys: Vec<_> = specs
        .iter()
        .map(|s| {
            s.cluster
                .as_ref()
                .and_then(|c| c.keys.clone())
                .expect("keys")
        })
        .collect();
    assert!(
        keys.iter().all(|k| *k == keys[0]),
        "one key pair per session"
    );
    let nets: Vec<_> = specs
        .iter()
        .map(|s| s.cluster.as_ref().and_then(|c| c.network.clone()))
        .collect();
    assert!(nets.iter().all(|n| n.is_some() && *n == nets[0]));
    assert!(
        subs.iter()
            .all(|k| k.container_id.is_some() && k.agent_id.as_deref() == Some("dummy-a")),
        "{subs:?}"
    );

    // A second cluster gets other keys and another network.
    let other = h.create("duet", cluster(2, 1));
    let other = h.wait_status(other.id, S::Running).await;
    let o = h
        .agent
        .spec(other.main_kernel_id)
        .and_then(|s| s.cluster)
        .expect("cluster");
    assert_ne!(o.keys.as_ref(), Some(&keys[0]));
    assert_ne!(o.network, nets[0]);

    assert_eq!(h.terminate(row.id).await, S::Terminated);
    let destroyed = h.agent.destroyed();
    assert!(
        ids.iter().all(|k| destroyed.contains(k)),
        "every kernel destroyed"
    );
    assert!(ids.iter().all(|k| !h.agent.live().contains(k)));

    // Each sub kernel's own events, with its id: being made, up, ended.
    use bai_core::event::EventKind as E;
    let events = h.store.events_of(row.id).expect("events");
    for (k, host) in ids.iter().zip(["main1", "sub1", "sub2"]).skip(1) {
        let of: Vec<_> = events
            .iter()
            .filter(|e| e.kernel_id == Some(*k))
            .map(|e| (e.kind, e.reason.clone()))
            .collect();
        assert_eq!(
            of,
            vec![
                (
                    E::KernelCreating,
                    format!("kernel {host} is being made on agent dummy-a")
                ),
                (
                    E::KernelStarted,
                    format!("kernel {host} is up on agent dummy-a")
                ),
                (E::KernelTerminated, format!("kernel {host} ended")),
            ],
            "{host}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_kernel_that_fails_to_start_rolls_back_the_others() {
    let h = Plane::start().await;
    h.script([
        CreateStep::Start,
        CreateStep::Fail("no room for this one".into()),
        CreateStep::Start,
    ]);
    let s = h.create("broken", cluster(3, 1));
    let row = h.wait_status(s.id, S::Error).await;
    let info = row.state.status_info.unwrap_or_default();
    assert!(
        info.contains("kernel ") && info.contains("no room for this one"),
        "{info}"
    );
    assert!(h.agent.live().is_empty(), "nothing of the cluster is left");
}

#[tokio::test(start_paused = true)]
async fn a_sub_kernel_that_dies_ends_the_session_and_names_it() {
    let h = Plane::start().await;
    let s = h.create("fragile", cluster(3, 1));
    let row = h.wait_status(s.id, S::Running).await;
    let subs = h.store.sub_kernels(row.id).expect("subs");
    assert!(h.agent.exit(subs[1].id, 137, false));
    let row = h.wait_status(s.id, S::Terminated).await;
    let info = row.state.status_info.unwrap_or_default();
    assert!(info.contains("sub2") && info.contains("137"), "{info}");
    assert!(
        h.agent.live().is_empty(),
        "main1 and sub1 were destroyed too"
    );
}

#[tokio::test(start_paused = true)]
async fn a_cluster_waits_until_all_of_it_fits_on_one_node() {
    let h = Plane::start().await;
    // 8 cores: a 4-core session leaves room for two of the three 2-core kernels.
    let big = h.create("bigone", |s| s.resources.slots.cpu_milli = 4000);
    h.wait_status(big.id, S::Running).await;
    let gang = h.create("gang", cluster(3, 2));
    let pending = h
        .wait(gang.id, "a pending reason", |r| {
            r.state.status == S::Pending
                && r.state
                    .status_info
                    .as_deref()
                    .is_some_and(|i| i != "enqueued")
        })
        .await;
    assert_eq!(
        h.agent.live().len(),
        1,
        "no kernel of the cluster is placed early"
    );
    let why = pending.state.status_info.unwrap_or_default();
    assert!(why.contains("cpu"), "the reason says what is short: {why}");
    h.terminate(big.id).await;
    h.wait_status(gang.id, S::Running).await;
    assert_eq!(h.agent.live().len(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_batch_cluster_ends_with_main1s_command_and_its_exit_code() {
    let h = Plane::start().await;
    let s = h.create("batchgang", |s| {
        cluster(2, 1)(s);
        s.session_type = bai_core::status::SessionType::Batch;
        s.startup_command = Some("sleep 100000".into());
    });
    let row = h.wait_status(s.id, S::Running).await;
    let sub = h.store.sub_kernels(row.id).expect("subs")[0].id;
    let main_spec = h.agent.spec(row.main_kernel_id).expect("main1");
    let sub_spec = h.agent.spec(sub).expect("sub1");
    assert_eq!(main_spec.startup_command.as_deref(), Some("sleep 100000"));
    assert_eq!(
        sub_spec.startup_command, None,
        "only main1 runs the command"
    );
    assert!(h.agent.exit(row.main_kernel_id, 3, false));
    let row = h.wait_status(s.id, S::Terminated).await;
    assert_eq!(
        row.state
            .status_info
            .as_deref()
            .map(bai_core::Reason::parse),
        Some(bai_core::Reason::TaskFailed(3))
    );
    assert_eq!(row.state.exit_code, Some(3));
    assert!(h.agent.destroyed().contains(&sub), "sub1 goes with main1");
    assert!(h.agent.live().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_multi_node_cluster_spreads_over_agents_on_one_overlay() {
    let agents = vec![
        harness::agent_with("node-a", 2),
        harness::agent_with("node-b", 2),
    ];
    let h = Plane::start_on_many(harness::store(), agents.clone(), harness::config()).await;
    let multi = |size, cpu| cluster_in(ClusterMode::MultiNode, size, cpu);
    // Two kernels of 2 cores: one per 2-core node (single-node would never fit).
    let s = h.create("duet", multi(2, 2));
    let row = h.wait_status(s.id, S::Running).await;
    let subs = h.store.sub_kernels(row.id).expect("subs");
    assert_eq!(subs.len(), 1);
    assert_ne!(row.state.agent_id, subs[0].agent_id, "one kernel per node");
    let main_spec = agents
        .iter()
        .find_map(|a| a.spec(row.main_kernel_id))
        .expect("main1 made");
    let sub_spec = agents
        .iter()
        .find_map(|a| a.spec(subs[0].id))
        .expect("sub1 made");
    let (mo, so) = (
        main_spec.cluster.and_then(|c| c.overlay).expect("overlay"),
        sub_spec.cluster.and_then(|c| c.overlay).expect("overlay"),
    );
    assert_eq!((mo.vni, &mo.subnet), (so.vni, &so.subnet), "one overlay");
    assert_ne!(mo.address, so.address);
    assert_ne!(mo.gateway, so.gateway, "each node its own bridge address");
    assert_eq!(mo.hosts, so.hosts);
    // In-process agents are on the manager's host.
    assert_eq!(mo.peers, vec!["manager".to_string()]);

    // Both nodes are full now: a third session waits, then a gang of two waits naming the
    // kernel that found no room.
    let big = h.create("next", multi(2, 1));
    let waiting = h
        .wait(big.id, "a pending reason", |r| {
            r.state
                .status_info
                .as_deref()
                .is_some_and(|i| i.contains("no-available-instances"))
        })
        .await;
    assert!(
        waiting
            .state
            .status_info
            .as_deref()
            .is_some_and(|i| i.contains("kernel main1 found no room")),
        "{:?}",
        waiting.state.status_info
    );
    assert_eq!(h.terminate(s.id).await, S::Terminated);
    let next = h.wait_status(big.id, S::Running).await;
    let other = h.store.sub_kernels(next.id).expect("subs");
    // A new overlay slot is not needed to differ, but it is the session's own while it runs.
    assert_eq!(other.len(), 1);
    assert!(agents.iter().all(|a| a.live().len() <= 1));
}

#[tokio::test(start_paused = true)]
async fn select_agent_holds_main1_of_a_multi_node_session_and_the_rest_spread() {
    let agents = vec![
        harness::agent_with("node-a", 4),
        harness::agent_with("node-b", 4),
        harness::agent_with("node-c", 4),
    ];
    let h = Plane::start_on_many(harness::store(), agents.clone(), harness::config()).await;
    let s = h.create("picked", |s| {
        cluster_in(ClusterMode::MultiNode, 3, 1)(s);
        s.agent = Some("node-b".into());
    });
    let row = h.wait_status(s.id, S::Running).await;
    assert_eq!(
        row.state.agent_id.as_deref(),
        Some("node-b"),
        "main1 where selected"
    );
    let mut sub_agents: Vec<_> = h
        .store
        .sub_kernels(row.id)
        .expect("subs")
        .into_iter()
        .filter_map(|k| k.agent_id)
        .collect();
    sub_agents.sort();
    assert_eq!(sub_agents, vec!["node-a", "node-c"], "the others spread");

    // The selected agent must hold one kernel, not the whole session: 3 cores on a 4-core
    // node is fine for main1 of a 3 × 3-core multi-node session, 5 cores is not.
    let fits = h.create("bigger", |s| {
        cluster_in(ClusterMode::MultiNode, 3, 3)(s);
        s.agent = Some("node-a".into());
    });
    assert_eq!(fits.spec.designated_agent.as_deref(), Some("node-a"));
    let mut too_big = harness::spec("toobig");
    cluster_in(ClusterMode::MultiNode, 2, 5)(&mut too_big);
    too_big.agent = Some("node-a".into());
    let too_big = h.plan(&too_big);
    assert!(
        too_big.is_err(),
        "a kernel bigger than the selected node is refused"
    );
}

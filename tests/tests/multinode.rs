//! Multi-node cluster sessions end to end: a manager without an agent of its own and two
//! `baid agent`s, each in its own network namespace with its own Docker engine. The hosts
//! forward only the VXLAN port between them (as two servers on one network). A session of
//! two kernels spreads over both nodes; its kernels reach each other by hostname over the
//! overlay, ssh and MPI work across nodes; a second session's kernels cannot reach the first's;
//! a killed agent degrades the session naming its kernel; a gang that does not fit waits
//! naming the kernel without room and starts when room appears; nothing is left after.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::Server;
use bai_e2e::netns::Machine;
use bai_e2e::remote::{
    Agent, IMAGE, agents, containers, kernel_agents, manager_for_machines, query, wait_status,
};
use bai_e2e::tunnel::Tunnel;
use serde_json::Value;

const SH: &str = "import subprocess, sys\n\
def sh(*a):\n    r = subprocess.run(list(a), capture_output=True, text=True, timeout=300)\n    print(r.stdout.strip() or r.stderr.strip().splitlines()[-1:])\n";

/// Starts a multi-node session of `size` kernels of `cpu` cores each, queued.
fn start_multi(s: &Server, name: &str, size: &str, cpu: &str) {
    s.bai(
        &s.admin,
        &[
            "start",
            "-q",
            "--enqueue-only",
            "-t",
            name,
            "--cluster-mode",
            "multi-node",
            "--cluster-size",
            size,
            "-r",
            &format!("cpu={cpu}"),
            "-r",
            "mem=256m",
            "python",
        ],
    )
    .expect_ok();
}

fn wait_running(s: &Server, name: &str) -> Value {
    s.wait_for(240, &format!("{name} to run"), || {
        let i = s.info(&s.admin, name);
        (i["status"] == "RUNNING").then_some(i)
    })
}

/// The VXLAN devices in a machine's namespace.
fn vxlan_devices(m: &Machine) -> usize {
    let out = std::process::Command::new("ip")
        .args(["-n", m.name(), "-o", "link", "show", "type", "vxlan"])
        .output()
        .expect("ip");
    String::from_utf8_lossy(&out.stdout).lines().count()
}

#[test]
fn multi_node_cluster_across_namespaces() {
    let (s, port, token) = manager_for_machines(&[
        ("BAI_AGENT_LOST_AFTER", "10s"),
        ("BAI_AGENT_GONE_AFTER", "600s"),
    ]);
    let machines: Vec<Machine> = [41u8, 42]
        .iter()
        .map(|&i| {
            let m = Machine::start(i);
            m.load_image(IMAGE);
            m
        })
        .collect();
    let _tunnel = Tunnel::between(&machines[0], &machines[1]);
    let mut nodes: Vec<Agent> = machines
        .iter()
        .zip(["node-a", "node-b"])
        .map(|(m, name)| Agent::start(m, name, port, &token, &[]))
        .collect();
    let list = s.wait_for(120, "two remote agents", || {
        let list = agents(&s);
        (list.iter().filter(|a| a.status == "ALIVE").count() == 2).then_some(list)
    });
    let cores = list[0]
        .capacity
        .cpu
        .parse::<f64>()
        .expect("an agent's cores");

    // Two kernels, one on each node (dispersed), each told the cluster's names.
    start_multi(&s, "duet", "2", "0.5");
    let info = wait_running(&s, "duet");
    let placed = kernel_agents(&info);
    assert_eq!(placed.len(), 2, "{info:#}");
    assert_eq!(placed[0].0, "main1");
    assert_eq!(placed[1].0, "sub1");
    assert_ne!(placed[0].1, placed[1].1, "kernels on two nodes: {placed:?}");
    let listed = info["agents"].as_array().map(|a| a.len()).unwrap_or(0);
    assert_eq!(listed, 2, "both nodes in the session's agents: {info:#}");
    let main_node = placed[0].1.clone();
    let sub_node = placed[1].1.clone();
    let on = |agent: &str| if agent == "node-a" { 0 } else { 1 };
    assert_eq!(containers(&machines[on(&main_node)], &main_node), 1);
    assert_eq!(containers(&machines[on(&sub_node)], &sub_node), 1);

    // Across the nodes: the hostname, ssh without a password both ways, and MPI.
    let out = query(
        &s,
        "duet",
        &format!(
            "{SH}sh('ssh', 'sub1', 'hostname')\nsh('ssh', 'sub1', 'ssh', 'main1', 'hostname')\n\
             sh('mpirun', '-np', '2', '-H', 'main1,sub1', 'python3', '-c', \
             'from mpi4py import MPI; c = MPI.COMM_WORLD; print(\"rank\", c.Get_rank(), \"of\", c.Get_size(), MPI.Get_processor_name(), c.allreduce(c.Get_rank() + 1))')"
        ),
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.first().copied(), Some("sub1"), "{out}");
    assert_eq!(lines.get(1).copied(), Some("main1"), "{out}");
    let mut ranks: Vec<&str> = lines.iter().skip(2).copied().collect();
    ranks.sort();
    assert_eq!(
        ranks,
        vec!["rank 0 of 2 main1 3", "rank 1 of 2 sub1 3"],
        "{out}"
    );

    // Another multi-node session is on another overlay: the first's kernels are not
    // reachable from it.
    start_multi(&s, "other", "2", "0.25");
    wait_running(&s, "other");
    let duo_sub = query(
        &s,
        "duet",
        "import socket; print(socket.gethostbyname('sub1'))",
    );
    let probe = query(
        &s,
        "other",
        &format!(
            "import socket\ntry:\n    socket.create_connection(('{}', 2200), timeout=5)\n    print('reached')\nexcept OSError as e:\n    print('unreachable', type(e).__name__)",
            duo_sub.trim()
        ),
    );
    assert!(probe.contains("unreachable"), "{probe}");
    s.bai(&s.admin, &["rm", "other"]).expect_ok();

    // kill -9 of the node holding sub1: the session is degraded, naming the kernel; when
    // the node comes back the session runs again.
    let i_sub = on(&sub_node);
    nodes[i_sub].kill();
    wait_status(&s, &sub_node, "LOST", 120);
    let degraded = s.wait_for(60, "duet to be degraded", || {
        let i = s.info(&s.admin, "duet");
        (i["status"] == "RUNNING_DEGRADED").then_some(i)
    });
    let why = degraded["status_info"].as_str().unwrap_or("");
    assert!(
        why.starts_with("agent-lost") && why.contains("kernel sub1"),
        "{why}"
    );
    nodes[i_sub].restart(&machines[i_sub], port, &token);
    wait_status(&s, &sub_node, "ALIVE", 120);
    wait_running(&s, "duet");
    let again = query(&s, "duet", &format!("{SH}sh('ssh', 'sub1', 'hostname')"));
    assert_eq!(again.trim(), "sub1", "{again}");

    // A gang of three kernels of half a node each: with duet holding half a core on each
    // node only two fit, so it waits naming the kernel without room; once duet ends, it
    // starts (two kernels on one node, one on the other).
    let half = format!("{}", cores / 2.0);
    start_multi(&s, "trio", "3", &half);
    let waiting = s.wait_for(60, "trio's pending reason", || {
        let i = s.info(&s.admin, "trio");
        let info = i["status_info"].as_str().unwrap_or("").to_string();
        info.contains("no-available-instances").then_some(info)
    });
    assert!(waiting.contains("kernel sub2 found no room"), "{waiting}");
    assert_eq!(s.status(&s.admin, "trio"), "PENDING");
    s.bai(&s.admin, &["rm", "duet"]).expect_ok();
    let info = wait_running(&s, "trio");
    assert_eq!(kernel_agents(&info).len(), 3, "{info:#}");
    s.bai(&s.admin, &["rm", "trio"]).expect_ok();

    // Nothing left on either node: no container, no tunnel device.
    for (m, n) in machines.iter().zip(&nodes) {
        s.wait_for(60, "the nodes to be clean", || {
            (containers(m, &n.name) == 0 && vxlan_devices(m) == 0).then_some(())
        });
    }
}

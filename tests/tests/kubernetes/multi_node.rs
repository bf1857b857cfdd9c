//! A multi-node cluster session on the Kubernetes backend: its kernels are pods of two
//! agents (each offers the test cluster's one node, as two agents of a site share nothing
//! but the cluster's pod network). Each agent learns its pods' addresses only as they run;
//! the manager tells every agent the whole table before the session runs, so main1 on one
//! agent and sub1 on the other reach each other by hostname, and ssh works both ways. The
//! same with detached pods (`--runner-reach network`): each agent pushes the table to its
//! pods through their runners.

use bai_e2e::kube::{Cluster, KubeAgent, MANAGED, NamespaceGuard, manager_for_pods, runner_image};
use bai_e2e::remote::{kernel_agents, wait_status};

#[test]
fn a_multi_node_session_spans_two_kubernetes_agents_by_hostname_and_ssh() {
    spans_two_agents("mn", &[]);
}

#[test]
fn a_multi_node_session_of_detached_pods_spans_two_kubernetes_agents() {
    let detached = [
        "--runner-reach".to_string(),
        "network".into(),
        "--runner-image".into(),
        runner_image(),
    ];
    spans_two_agents("mnd", &detached);
}

/// Two agents `kube-TAG-a` and `kube-TAG-b` (with `agent_args`), one session of a kernel
/// on each.
fn spans_two_agents(tag: &str, agent_args: &[String]) {
    let _room = super::node_room();
    let cluster = Cluster::get();
    let ns = format!("bai-e2e-{tag}-{}", std::process::id());
    let _ns = NamespaceGuard::new(&cluster, &ns);
    let (s, port, token) = manager_for_pods(&[]);
    let manager = format!("127.0.0.1:{port}");
    let names = [format!("kube-{tag}-a"), format!("kube-{tag}-b")];
    let agents: Vec<KubeAgent> = names
        .iter()
        .map(|name| {
            KubeAgent::start_with(name, &manager, &token, &cluster.kubeconfig, &ns, agent_args)
        })
        .collect();
    for (name, a) in names.iter().zip(&agents) {
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            wait_status(&s, name, "ALIVE", 60)
        }));
        assert!(ok.is_ok(), "agent {name} did not join:\n{}", a.log());
    }
    let logs = || {
        agents
            .iter()
            .map(|a| a.log())
            .collect::<Vec<_>>()
            .join("\n----\n")
    };

    // Two kernels of a quarter core each: the default group spreads them (dispersed).
    let r = s.bai(
        &s.admin,
        &[
            "start",
            "-t",
            "kmulti",
            "--cluster-mode",
            "multi-node",
            "--cluster-size",
            "2",
            "-r",
            "cpu=0.5",
            "-r",
            "mem=512m",
            "python",
        ],
    );
    assert!(r.ok(), "{r:?}\n{}", logs());
    let info = s.wait_for(180, "kmulti to run", || {
        let i = s.info(&s.admin, "kmulti");
        let st = i["status"].as_str().unwrap_or_default().to_string();
        assert!(
            !["ERROR", "TERMINATED", "CANCELLED"].contains(&st.as_str()),
            "the session ended: {i:#}\n{}",
            logs()
        );
        (st == "RUNNING").then_some(i)
    });
    let placed = kernel_agents(&info);
    assert_eq!(placed.len(), 2, "{info:#}");
    assert_ne!(placed[0].1, placed[1].1, "one kernel per agent: {placed:?}");

    // Each kernel is a pod of its own agent, at an address of the cluster's pod network.
    let out = cluster.kubectl(&["get", "pods", "-n", &ns, "-l", MANAGED, "-o", "json"]);
    let pods: serde_json::Value = serde_json::from_slice(&out.stdout).expect("pods");
    let pod = |host: &str| {
        pods["items"]
            .as_array()
            .and_then(|a| a.iter().find(|p| p["spec"]["hostname"] == host))
            .cloned()
            .unwrap_or_else(|| panic!("no pod for {host}: {pods}"))
    };
    let (main1, sub1) = (pod("main1"), pod("sub1"));
    let detached = agent_args.iter().any(|a| a == "network");
    for p in [&main1, &sub1] {
        let host_paths = p["spec"]["volumes"].as_array().map_or(0, |v| {
            v.iter().filter(|v| v.get("hostPath").is_some()).count()
        });
        assert_eq!(detached, host_paths == 0, "{p}");
    }
    assert_ne!(
        main1["metadata"]["labels"]["ai.bai.agent"], sub1["metadata"]["labels"]["ai.bai.agent"],
        "the pods of two agents"
    );
    let ip = |p: &serde_json::Value| {
        p["status"]["podIP"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let (main_ip, sub_ip) = (ip(&main1), ip(&sub1));
    assert!(!main_ip.is_empty() && !sub_ip.is_empty() && main_ip != sub_ip);

    // From main1 (one agent's pod): sub1 by name at its pod's address, ssh to it, and from
    // there back to main1 by name (the other agent's table).
    let code = "import socket, subprocess\n\
        def sh(*a):\n    r = subprocess.run(list(a), capture_output=True, text=True, timeout=120)\n    print(r.stdout.strip() or r.stderr.strip())\n\
        print('sub1', socket.gethostbyname('sub1'))\n\
        print('main1', socket.gethostbyname('main1'))\n\
        sh('ssh', 'sub1', 'hostname')\n\
        sh('ssh', 'sub1', 'python3', '-c', '\"import socket; print(socket.gethostbyname(\\'main1\\'))\"')\n\
        sh('ssh', 'sub1', 'ssh', 'main1', 'hostname')";
    let r = s.bai(&s.admin, &["run", "-t", "kmulti", "-c", code, "python"]);
    assert!(r.ok(), "{r:?}\n{}", logs());
    let lines: Vec<&str> = r.stdout.lines().map(str::trim).collect();
    assert_eq!(
        lines,
        vec![
            format!("sub1 {sub_ip}").as_str(),
            format!("main1 {main_ip}").as_str(),
            "sub1",
            main_ip.as_str(),
            "main1"
        ],
        "{r:?}\n{}",
        logs()
    );

    s.bai(&s.admin, &["rm", "kmulti"]).expect_ok();
    cluster.wait_no_pods(&ns);
    for a in &agents {
        let kernels = a.data.path().join("kernels");
        let left = std::fs::read_dir(&kernels).map(|d| d.count()).unwrap_or(0);
        assert_eq!(
            left,
            0,
            "kernel directories left under {}",
            kernels.display()
        );
    }
    drop(agents);
    drop(s);
}

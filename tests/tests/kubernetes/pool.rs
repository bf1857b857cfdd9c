//! Warm pools on the Kubernetes backend: a resource group's pool shape is kept started as a
//! pod of nobody (`bai-pool-<id>`, the runner waiting); a `bai start` of that shape is given
//! that pod, relabelled as its kernel and bound to the session's environment and dotfiles,
//! and the pool makes another. A cold session that Kubernetes cannot place while pool pods
//! hold the room makes them give it up and runs. With the target removed, nothing is left.

use bai_e2e::kube::{Cluster, MANAGED, NamespaceGuard, joined};
use serde_json::Value;

/// The agent's pods in `ns`: (name, kernel label if any).
fn pods(cluster: &Cluster, ns: &str) -> Vec<(String, Option<String>)> {
    let out = cluster.kubectl(&["get", "pods", "-n", ns, "-l", MANAGED, "-o", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    v["items"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
                .map(|p| {
                    (
                        p["metadata"]["name"].as_str().unwrap_or("").to_string(),
                        p["metadata"]["labels"]["ai.bai.kernel"]
                            .as_str()
                            .map(str::to_string),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The node's allocatable memory in MiB.
fn node_mem_mib(cluster: &Cluster) -> u64 {
    let out = cluster.kubectl(&[
        "get",
        "nodes",
        "-o",
        "jsonpath={.items[0].status.allocatable.memory}",
    ]);
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let ki: u64 = text
        .strip_suffix("Ki")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("allocatable memory {text:?}"));
    ki / 1024
}

#[test]
fn a_pool_pod_is_claimed_refilled_and_gives_its_room_up() {
    let cluster = Cluster::get();
    let ns = format!("bai-e2e-pool-{}", std::process::id());
    let _ns = NamespaceGuard::new(&cluster, &ns);
    let (s, agent) = joined(
        "kube-pool",
        &[("BAI_WARM_POOLS", "on")],
        &cluster.kubeconfig,
        &ns,
    );
    let group = |args: &[&str]| {
        let mut all = vec!["admin", "resource-group", "update", "default"];
        all.extend(args);
        s.bai(&s.admin, &all)
    };
    // The pool's shape holds 40 % of the node's memory (a request, not a use): a cold
    // session of 65 % fits beside it only once the pool gives its room up.
    let mib = node_mem_mib(&cluster);
    let pool_mem = format!("mem={}m", mib * 40 / 100);
    let big_mem = format!("mem={}m", mib * 65 / 100);
    group(&[
        "--warm-pool",
        &format!("python,cpu=0.25,{pool_mem},count=1"),
        "--warm-pool-auto",
        "0",
    ])
    .expect_ok();
    let unclaimed = |ps: &[(String, Option<String>)]| {
        ps.iter()
            .filter(|(n, k)| n.starts_with("bai-pool-") && k.is_none())
            .map(|(n, _)| n.clone())
            .collect::<Vec<_>>()
    };
    let first = s.wait_for(180, "a ready pool pod", || {
        let out = s.bai(&s.admin, &["agents"]);
        let ready = out.stdout.contains("1 of 1 ready");
        let u = unclaimed(&pods(&cluster, &ns));
        (ready && u.len() == 1).then(|| u[0].clone())
    });

    // A start of the pool's shape is given that pod, bound to the session.
    std::fs::write(s.work.path().join("vimrc"), "set number\n").unwrap();
    s.bai(&s.admin, &["dotfile", "create", ".vimrc", "-f", "vimrc"])
        .expect_ok();
    agent.started(
        &s,
        &s.admin,
        "kpool1",
        &["-e", "FOO=bar", "-r", "cpu=0.25", "-r", &pool_mem, "python"],
        120,
    );
    let kernel_pods: Vec<String> = pods(&cluster, &ns)
        .into_iter()
        .filter(|(_, k)| k.is_some())
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        kernel_pods,
        vec![first.clone()],
        "the session took the pool pod"
    );
    let code = "import os; print(os.environ['FOO'], os.environ.get('BAI_POOL') or '-', \
                os.environ['BAI_SESSION_NAME'], os.getuid()); print(open('.vimrc').read().strip())";
    let r = s.bai(&s.admin, &["run", "-t", "kpool1", "-c", code, "python"]);
    assert!(r.ok(), "{r:?}\nagent:\n{}", agent.log());
    assert_eq!(
        r.stdout.lines().map(str::trim).collect::<Vec<_>>(),
        vec!["bar - kpool1 1000", "set number"],
        "{r:?}"
    );
    // The pool makes another pod of nobody's.
    s.wait_for(180, "the pool refilled", || {
        let u = unclaimed(&pods(&cluster, &ns));
        (u.len() == 1 && u[0] != first).then_some(())
    });
    s.bai(&s.admin, &["rm", "kpool1"]).expect_ok();

    // A cold session that fits bai's view of the node but not beside the pool pod: the
    // pod gives its room up, and the session runs.
    agent.started(
        &s,
        &s.admin,
        "kpoolbig",
        &["-r", "cpu=0.25", "-r", &big_mem, "python"],
        240,
    );
    let log = agent.log();
    assert!(
        log.contains("pool pods hold room: removing them"),
        "the pool gave its room up:\n{log}"
    );
    s.bai(&s.admin, &["rm", "kpoolbig"]).expect_ok();

    // Without a target, the pool's pods go; nothing of bai is left.
    group(&["--warm-pool", ""]).expect_ok();
    cluster.wait_no_pods(&ns);
    let kernels = agent.data.path().join("kernels");
    let left: Vec<_> = std::fs::read_dir(&kernels)
        .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    let left: Vec<_> = left.into_iter().filter(|n| n != ".pool").collect();
    assert!(left.is_empty(), "kernel directories left: {left:?}");

    // A stopping agent (SIGTERM) takes its pool pods with it: nobody would claim them.
    group(&["--warm-pool", "python,cpu=0.25,mem=128m,count=1"]).expect_ok();
    s.wait_for(180, "a pool pod again", || {
        (unclaimed(&pods(&cluster, &ns)).len() == 1).then_some(())
    });
    let mut agent = agent;
    let term = std::process::Command::new("kill")
        .args(["-TERM", &agent.child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let status = agent.child.wait().unwrap();
    assert!(
        status.success(),
        "the agent ended {status:?}:\n{}",
        agent.log()
    );
    cluster.wait_no_pods(&ns);
    drop(agent);
    drop(s);
}

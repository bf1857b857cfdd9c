//! Cluster sessions end to end, against `baid up` and the real Docker engine: a single-node
//! session of three kernels whose kernels reach each other by hostname, `ssh sub2` without a
//! password, `mpirun` over the three with mpi4py, another session that cannot reach them,
//! per-kernel logs, the official client's `--cluster-size`, and nothing left once it ends.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::Server;
use std::path::PathBuf;
use std::process::Command;

fn official() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv-official/bin/backend.ai")
}

/// Python run in main1 of `name` through `bai run` (the session is made on first use).
fn py(s: &Server, name: &str, extra: &[&str], code: &str) -> String {
    let mut args = vec!["run", "-t", name];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-c", code, "python"]);
    let r = s.bai(&s.user, &args);
    r.expect_ok();
    r.stdout.clone()
}

fn docker(args: &[&str]) -> String {
    let out = Command::new("docker").args(args).output().expect("docker");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const SH: &str = "import subprocess, sys\n\
def sh(*a):\n    r = subprocess.run(list(a), capture_output=True, text=True, timeout=300)\n    print(r.stdout.strip() or r.stderr.strip().splitlines()[-1:])\n";

#[test]
fn single_node_cluster_kernels_reach_each_other_and_nothing_else() {
    let s = Server::start();
    let res = ["-r", "cpu=0.25", "-r", "mem=384m"];
    let mut extra = vec!["--cluster-size", "3"];
    extra.extend_from_slice(&res);

    // The environment Backend.AI's scripts read, and the hostnames.
    let out = py(
        &s,
        "trio",
        &extra,
        "import os, socket\n\
         for k in ['BACKENDAI_CLUSTER_SIZE', 'BACKENDAI_CLUSTER_HOSTS', 'BACKENDAI_CLUSTER_REPLICAS', 'BACKENDAI_CLUSTER_ROLE', 'BACKENDAI_CLUSTER_IDX', 'BACKENDAI_CLUSTER_LOCAL_RANK', 'BACKENDAI_CLUSTER_HOST']:\n    print(k, os.environ.get(k))\n\
         print('hostname', socket.gethostname())",
    );
    for want in [
        "BACKENDAI_CLUSTER_SIZE 3",
        "BACKENDAI_CLUSTER_HOSTS main1,sub1,sub2",
        "BACKENDAI_CLUSTER_REPLICAS main:1,sub:2",
        "BACKENDAI_CLUSTER_ROLE main",
        "BACKENDAI_CLUSTER_IDX 1",
        "BACKENDAI_CLUSTER_LOCAL_RANK 0",
        "BACKENDAI_CLUSTER_HOST main1",
        "hostname main1",
    ] {
        assert!(out.lines().any(|l| l == want), "{want:?} in:\n{out}");
    }

    // `bai session info` lists the kernels: hostname, role, agent, status.
    let text = s
        .bai(&s.user, &["session", "info", "trio"])
        .expect_ok()
        .stdout
        .clone();
    assert!(text.lines().any(|l| l == "kernels (3):"), "{text}");
    for (host, role) in [("main1", "main"), ("sub1", "sub"), ("sub2", "sub")] {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(host))
            .unwrap_or_else(|| panic!("no line for {host}: {text}"));
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words.get(1), Some(&role), "{line}");
        assert_eq!(words.get(3), Some(&"RUNNING"), "{line}");
    }

    // The API lists the three kernels with their places.
    let info = s.info(&s.user, "trio");
    assert_eq!(info["cluster_size"], 3, "{info:#}");
    let kernels = info["kernels"].as_array().expect("kernels").clone();
    let places: Vec<_> = kernels
        .iter()
        .map(|k| {
            (
                k["cluster_role"].as_str().unwrap_or("").to_string(),
                k["cluster_hostname"].as_str().unwrap_or("").to_string(),
                k["local_rank"].as_u64().unwrap_or(99),
            )
        })
        .collect();
    assert_eq!(
        places,
        vec![
            ("main".into(), "main1".into(), 0),
            ("sub".into(), "sub1".into(), 1),
            ("sub".into(), "sub2".into(), 2)
        ]
    );
    let session_id = info["id"].as_str().expect("id").to_string();
    let filter = format!("label=ai.bai.session={session_id}");
    assert_eq!(
        docker(&["ps", "-q", "--filter", &filter]).lines().count(),
        3
    );
    // All three on one bridge of their own.
    let net = session_network(&filter);

    // SSH between kernels without a password, and MPI over the three.
    let out = py(
        &s,
        "trio",
        &[],
        &format!(
            "{SH}sh('ssh', 'sub2', 'hostname')\nsh('ssh', 'sub1', 'ssh', 'main1', 'hostname')\n\
             sh('mpirun', '-np', '3', '-H', 'main1,sub1,sub2', 'python3', '-c', \
             'from mpi4py import MPI; c = MPI.COMM_WORLD; print(\"rank\", c.Get_rank(), \"of\", c.Get_size(), MPI.Get_processor_name(), c.allreduce(c.Get_rank()))')"
        ),
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.first().copied(), Some("sub2"), "{out}");
    assert_eq!(lines.get(1).copied(), Some("main1"), "{out}");
    let mut ranks: Vec<&str> = lines.iter().skip(2).copied().collect();
    ranks.sort();
    assert_eq!(
        ranks,
        vec![
            "rank 0 of 3 main1 3",
            "rank 1 of 3 sub1 3",
            "rank 2 of 3 sub2 3"
        ],
        "{out}"
    );

    // Another cluster session resolves its own sub1 and cannot reach the first's.
    let probe = "import socket\n\
                 def reach(ip):\n    try:\n        socket.create_connection((ip, 2200), timeout=5).close(); return 'reached'\n    except OSError as e:\n        return 'unreachable'\n";
    let first_sub1 = py(
        &s,
        "trio",
        &[],
        &format!("{probe}ip = socket.gethostbyname('sub1'); print(ip); print(reach(ip))"),
    );
    let mut it = first_sub1.lines();
    let ip = it.next().expect("sub1's address").to_string();
    assert_eq!(
        it.next(),
        Some("reached"),
        "main1 reaches its own sub1: {first_sub1}"
    );
    let mut extra2 = vec!["--cluster-size", "2"];
    extra2.extend_from_slice(&res);
    let other = py(
        &s,
        "other",
        &extra2,
        &format!("{probe}print(socket.gethostbyname('sub1') != '{ip}'); print(reach('{ip}'))"),
    );
    assert_eq!(
        other.lines().collect::<Vec<_>>(),
        vec!["True", "unreachable"],
        "{other}"
    );

    // Logs per kernel; a kernel the session does not have is refused.
    s.bai(&s.user, &["logs", "trio", "--kernel", "sub2"])
        .expect_ok();
    s.bai(&s.user, &["logs", "trio", "--kernel", "sub7"])
        .expect_fail("has no kernel");

    // Ending the session ends every kernel and removes its network.
    s.bai(&s.user, &["rm", "trio"]).expect_ok();
    s.wait_terminated(&s.user, "trio", 120);
    // The stopped containers are removed after the end.
    s.wait_for(60, "the session's containers to be removed", || {
        docker(&["ps", "-aq", "--filter", &filter])
            .is_empty()
            .then_some(())
    });
    // Its bridge is empty (kept as the agent's spare, or removed).
    let left = docker(&["network", "inspect", "-f", "{{len .Containers}}", &net]);
    assert!(
        left.trim() == "0" || left.trim().is_empty(),
        "{net}: {left}"
    );
    let other_net = session_network(&format!(
        "label=ai.bai.session={}",
        s.info(&s.user, "other")["id"].as_str().expect("id")
    ));
    assert_ne!(other_net, net, "two live sessions never share a bridge");
    s.bai(&s.user, &["rm", "other"]).expect_ok();

    // The official client's --cluster-size.
    let r = s.run_as(
        official(),
        &s.user,
        &[
            "session",
            "create",
            "--name",
            "offclus",
            "--cluster-size",
            "2",
            "-r",
            "cpu=0.25",
            "-r",
            "mem=256m",
            "python",
        ],
    );
    r.expect_ok();
    let info = s.info(&s.user, "offclus");
    assert_eq!(info["cluster_size"], 2, "{info:#}");
    assert_eq!(info["kernels"].as_array().map(Vec::len), Some(2));
    s.wait_for(120, "offclus RUNNING", || {
        (s.status(&s.user, "offclus") == "RUNNING").then_some(())
    });
    // The next session takes the spare bridge the first one left, instead of making one.
    let off_filter = format!("label=ai.bai.session={}", info["id"].as_str().expect("id"));
    assert_eq!(session_network(&off_filter), net);
    s.bai(&s.user, &["rm", "offclus"]).expect_ok();
    s.wait_terminated(&s.user, "offclus", 120);
    // The stopped containers are removed after the end.
    s.wait_for(60, "the session's containers to be removed", || {
        docker(&["ps", "-aq", "--filter", &off_filter])
            .is_empty()
            .then_some(())
    });
}

/// The one network every container of a session (by `filter`) is on.
fn session_network(filter: &str) -> String {
    let ids: Vec<String> = docker(&["ps", "-q", "--filter", filter])
        .split_whitespace()
        .map(str::to_string)
        .collect();
    assert!(!ids.is_empty(), "no container for {filter}");
    let mut args = vec![
        "inspect",
        "-f",
        "{{index .Config.Labels \"ai.bai.network\"}}",
    ];
    args.extend(ids.iter().map(String::as_str));
    let mut nets: Vec<String> = docker(&args).lines().map(str::to_string).collect();
    nets.dedup();
    assert_eq!(nets.len(), 1, "{filter}: {nets:?}");
    let net = nets.remove(0);
    assert!(net.starts_with("bai-cluster-"), "{net}");
    net
}

//! Warm pools on the Kubernetes backend: a resource group's pool shape is kept started as a
//! pod of nobody (`bai-pool-<id>`, the runner waiting); a `bai start` of that shape is given
//! that pod, relabelled as its kernel and bound to the session's environment and dotfiles,
//! and the pool makes another. A session with data folders takes one too. A cold session
//! that Kubernetes cannot place while pool pods hold the room makes them give it up and
//! runs. With the target removed, nothing is left. A burst of starts grows a pool. Detached
//! pool pods (`--runner-reach network`) are claimed over the pod network, and a restarted
//! agent re-adopts a kernel that was one.

use bai_e2e::kube::{
    Cluster, KubeAgent, MANAGED, NamespaceGuard, joined_with, manager_for_pods, runner_image,
};
use bai_e2e::remote::wait_status;
use serde_json::Value;
use std::time::Duration;

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

/// One pool's line of `bai agents` and its agent's counters line, as numbers.
#[derive(Debug, Clone, Copy)]
struct PoolLine {
    ready: u32,
    /// How many the pool keeps now: its target, or more after a burst.
    kept: u32,
    misses: u64,
}

/// Most kernels a burst adds to a pool (the agent's `pool_demand::BURST_MAX`).
const BURST_MAX: u64 = 4;

/// The pool of the shape containing `shape` in `bai agents`' output, if listed.
fn pool_report(out: &str, shape: &str) -> Option<PoolLine> {
    let line = out
        .lines()
        .find(|l| l.contains(" warm pool ") && l.contains(shape))?;
    let (_, counts) = line.split_once(" warm pool ")?.1.split_once(": ")?;
    let mut words = counts.split_whitespace();
    let ready: u32 = words.next()?.parse().ok()?;
    words.next(); // "of"
    let target: u32 = words.next()?.trim_end_matches(',').parse().ok()?;
    let kept = match line.split("a burst: keeps ").nth(1) {
        Some(k) => k.trim().parse().ok()?,
        None => target,
    };
    let counters = out.lines().find(|l| l.contains(" warm pools: "))?;
    let misses = counters
        .split(", ")
        .find_map(|p| p.strip_suffix(" misses"))?
        .trim()
        .parse()
        .ok()?;
    Some(PoolLine {
        ready,
        kept,
        misses,
    })
}

/// The names of the agent's pods in `ns` that are a kernel's.
fn kernel_pods(cluster: &Cluster, ns: &str) -> Vec<String> {
    pods(cluster, ns)
        .into_iter()
        .filter(|(_, k)| k.is_some())
        .map(|(n, _)| n)
        .collect()
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
    let _room = super::node_room();
    let cluster = Cluster::get();
    let ns = format!("bai-e2e-pool-{}", std::process::id());
    let _ns = NamespaceGuard::new(&cluster, &ns);
    // Data folders on a storage host the node mounts at the same path (as NFS would be).
    let shared = tempfile::Builder::new()
        .prefix("bai-kpool-nfs-")
        .tempdir()
        .unwrap();
    let host = format!("nfs:shared={}", shared.path().display());
    let (s, agent) = joined_with(
        "kube-pool",
        &[
            ("BAI_WARM_POOLS", "on"),
            ("BAI_STORAGE_HOSTS", &host),
            ("BAI_DEFAULT_STORAGE_HOST", "nfs:shared"),
        ],
        &["--storage-host".to_string(), host.clone()],
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
    assert_eq!(
        kernel_pods(&cluster, &ns),
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
    let second = s.wait_for(180, "the pool refilled", || {
        let u = unclaimed(&pods(&cluster, &ns));
        (u.len() == 1 && u[0] != first).then(|| u[0].clone())
    });
    s.bai(&s.admin, &["rm", "kpool1"]).expect_ok();

    // A session with data folders takes that pod too: its folders are mounted under its
    // home on the node at the claim and show inside (the pod's home receives them), the
    // read-only one read-only; what the session writes is in the folder, and the kernel's
    // removal leaves the folders whole and nothing mounted.
    folders_in_a_pool_pod(&s, &cluster, &ns, &agent, &pool_mem, &second);

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
    // A small shape (a tenth of a core), so the burst's kernels and the pods it adds fit
    // beside whatever the other tests run.
    group(&["--warm-pool", "python,cpu=0.1,mem=128m,count=1"]).expect_ok();
    // Its pod ready (as the agent reports it), and the creates missed so far.
    let before = s.wait_for(180, "the small pool's pod ready", || {
        let r = pool_report(&s.bai(&s.admin, &["agents"]).stdout, "cpu=0.1,mem=128m")?;
        (r.ready == 1).then_some(r)
    });

    // A burst: four starts of the shape at once find one pod ready. The others start cold,
    // and each miss makes the pool keep one more while the shape is asked for: it grows
    // past its target of one.
    let names = ["kburst1", "kburst2", "kburst3", "kburst4"];
    let starts: Vec<std::process::Child> = names
        .iter()
        .map(|n| {
            s.bai_command(
                &s.admin,
                &[
                    "start", "-t", n, "-r", "cpu=0.1", "-r", "mem=128m", "python",
                ],
            )
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
        })
        .collect();
    for mut c in starts {
        assert!(c.wait().unwrap().success(), "a start of the burst failed");
    }
    for n in names {
        s.wait_for(180, &format!("{n} to run"), || {
            (s.status(&s.admin, n) == "RUNNING").then_some(())
        });
    }
    // The agent keeps one more for each miss of the burst (as one report says), and makes
    // them: more pool pods than its target are seen in the cluster. (Not all it keeps need
    // be there at once: the tests beside this one share the node's room.)
    let mut seen = String::new();
    let grown = bai_e2e::poll(Duration::from_secs(240), Duration::from_millis(200), || {
        let out = s.bai(&s.admin, &["agents"]).stdout;
        let r = pool_report(&out, "cpu=0.1,mem=128m")?;
        let spare = unclaimed(&pods(&cluster, &ns)).len();
        seen = format!("{r:?}, {spare} unclaimed pool pods");
        let missed = r.misses - before.misses;
        assert!(
            u64::from(r.kept) <= 1 + missed.min(BURST_MAX),
            "a burst grows a pool by its misses only: {seen} (before: {before:?})"
        );
        (r.kept >= 2 && spare >= 2).then_some(r)
    })
    .unwrap_or_else(|| {
        let all = cluster.kubectl(&["get", "pods", "-n", &ns, "-o", "wide"]);
        panic!(
            "the pool never grew by the burst: {seen} (before: {before:?})\n{}\n--- agent log ---\n{}",
            String::from_utf8_lossy(&all.stdout),
            agent.log()
        )
    });
    assert!(
        grown.misses > before.misses,
        "the burst missed the pool: {grown:?} (before: {before:?})"
    );
    for n in names {
        s.bai(&s.admin, &["rm", n]).expect_ok();
    }
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

fn folders_in_a_pool_pod(
    s: &bai_e2e::Server,
    cluster: &Cluster,
    ns: &str,
    agent: &bai_e2e::kube::KubeAgent,
    pool_mem: &str,
    pool_pod: &str,
) {
    s.bai(&s.admin, &["vfolder", "create", "data"]).expect_ok();
    s.bai(&s.admin, &["vfolder", "create", "docs", "-p", "ro"])
        .expect_ok();
    for (folder, text) in [("data", "from the folder"), ("docs", "a manual")] {
        let file = s.work.path().join("in.txt");
        std::fs::write(&file, text).unwrap();
        s.bai(&s.admin, &["vfolder", "upload", "-q", folder, "in.txt"])
            .expect_ok();
        std::fs::remove_file(&file).unwrap();
    }
    // Ready once its runner answers (what the agent says; `bai agents` may still show the
    // report from before the last claim).
    let id = pool_pod.trim_start_matches("bai-pool-");
    s.wait_for(180, "the pool pod ready", || {
        agent
            .log()
            .lines()
            .any(|l| l.contains("pool pod ready") && l.contains(id))
            .then_some(())
    });
    agent.started(
        s,
        &s.admin,
        "kpoolf",
        &[
            "-r", "cpu=0.25", "-r", pool_mem, "-m", "data", "-m", "docs", "python",
        ],
        120,
    );
    assert_eq!(
        kernel_pods(cluster, ns),
        vec![pool_pod.to_string()],
        "the session with folders took the pool pod\nagent:\n{}",
        agent.log()
    );
    let code = "import os\n\
                print(open('/home/work/data/in.txt').read(), open('/home/work/docs/in.txt').read())\n\
                open('/home/work/data/out.txt', 'w').write('written inside')\n\
                try:\n    open('/home/work/docs/no.txt', 'w')\nexcept OSError as e:\n    print('refused', e.errno)\n\
                print(os.stat('/home/work/data/out.txt').st_uid)";
    let r = s.bai(&s.admin, &["run", "-t", "kpoolf", "-c", code, "python"]);
    assert!(r.ok(), "{r:?}\nagent:\n{}", agent.log());
    assert_eq!(
        r.stdout.lines().map(str::trim).collect::<Vec<_>>(),
        vec!["from the folder a manual", "refused 30", "1000"],
        "{r:?}"
    );
    s.bai(&s.admin, &["rm", "kpoolf"]).expect_ok();
    s.wait_for(120, "kpoolf's kernel pod gone", || {
        (!pods(cluster, ns).iter().any(|(n, _)| n == pool_pod)).then_some(())
    });
    // Nothing stays mounted under the agent's kernels, and the folders are whole.
    let kernels = agent.data.path().join("kernels");
    s.wait_for(60, "no folder mounted under the kernels", || {
        let left = bai_e2e::host::mounts_under(&kernels);
        left.iter().all(|p| *p == kernels).then_some(())
    });
    for (folder, file, text) in [
        ("data", "in.txt", "from the folder"),
        ("data", "out.txt", "written inside"),
        ("docs", "in.txt", "a manual"),
    ] {
        let got = s.work.path().join(file);
        let _ = std::fs::remove_file(&got);
        s.bai(&s.admin, &["vfolder", "download", folder, file])
            .expect_ok();
        assert_eq!(
            std::fs::read_to_string(&got).unwrap(),
            text,
            "{folder}/{file}"
        );
    }
}

/// A detached agent's pool: the pool pod needs nothing of the node (its own Secret, owned by
/// it, holds its runner's token); a start of its shape is given it, the owner's dotfile
/// written through its runner with its mode, the session's variables bound over the pod
/// network, and the pool refills. The agent killed and started again with a new data dir
/// (its credential in a Secret) reaches that kernel with the token read back from the pool
/// pod's Secret. Nothing is left at the end.
#[test]
fn a_detached_pool_pod_is_claimed_over_the_pod_network() {
    // Its refills must find room: not beside the tests that take much of the node.
    let _room = super::node_room();
    let cluster = Cluster::get();
    let ns = format!("bai-e2e-dpool-{}", std::process::id());
    let _ns = NamespaceGuard::new(&cluster, &ns);
    let args = [
        "--runner-reach".to_string(),
        "network".into(),
        "--runner-image".into(),
        runner_image(),
        "--credentials".into(),
        "secret".into(),
    ];
    let (s, port, token) = manager_for_pods(&[("BAI_WARM_POOLS", "on")]);
    let manager = format!("127.0.0.1:{port}");
    let start = || {
        let a = KubeAgent::start_with(
            "kube-dpool",
            &manager,
            &token,
            &cluster.kubeconfig,
            &ns,
            &args,
        );
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            wait_status(&s, "kube-dpool", "ALIVE", 60)
        }));
        assert!(ok.is_ok(), "the agent did not join:\n{}", a.log());
        a
    };
    let agent = start();
    let pool = |target: &str| {
        s.bai(
            &s.admin,
            &[
                "admin",
                "resource-group",
                "update",
                "default",
                "--warm-pool",
                target,
                "--warm-pool-auto",
                "0",
            ],
        )
        .expect_ok();
    };
    pool("python,cpu=0.2,mem=256m,count=1");
    let unclaimed = || {
        pods(&cluster, &ns)
            .into_iter()
            .filter(|(n, k)| n.starts_with("bai-pool-") && k.is_none())
            .map(|(n, _)| n)
            .collect::<Vec<_>>()
    };
    let first = s.wait_for(180, "a ready pool pod", || {
        let ready = s.bai(&s.admin, &["agents"]).stdout.contains("1 of 1 ready");
        let u = unclaimed();
        (ready && u.len() == 1).then(|| u[0].clone())
    });
    let out = cluster.kubectl(&["get", "pod", "-n", &ns, &first, "-o", "json"]);
    let pod: Value = serde_json::from_slice(&out.stdout).expect("the pool pod");
    let volumes = pod["spec"]["volumes"].as_array().expect("volumes");
    assert!(
        volumes.iter().all(|v| v.get("hostPath").is_none()),
        "{volumes:?}"
    );
    assert!(
        volumes
            .iter()
            .any(|v| v["secret"]["secretName"] == first.as_str()),
        "its own Secret: {volumes:?}"
    );
    let out = cluster.kubectl(&["get", "secret", "-n", &ns, &first, "-o", "json"]);
    let secret: Value = serde_json::from_slice(&out.stdout).expect("the pool pod's Secret");
    assert_eq!(
        secret["metadata"]["ownerReferences"][0]["uid"], pod["metadata"]["uid"],
        "{secret}"
    );

    std::fs::write(s.work.path().join("vimrc"), "set number\n").unwrap();
    s.bai(
        &s.admin,
        &["dotfile", "create", ".vimrc", "-f", "vimrc", "-p", "600"],
    )
    .expect_ok();
    agent.started(
        &s,
        &s.admin,
        "kdpool1",
        &["-e", "FOO=bar", "-r", "cpu=0.2", "-r", "mem=256m", "python"],
        120,
    );
    assert_eq!(
        kernel_pods(&cluster, &ns),
        vec![first.clone()],
        "the session took the pool pod\nagent:\n{}",
        agent.log()
    );
    let code = "import os; print(os.environ['FOO'], os.environ.get('BAI_POOL') or '-', \
                os.environ['BAI_SESSION_NAME'], os.getuid()); \
                print(open('.vimrc').read().strip(), oct(os.stat('.vimrc').st_mode & 0o777))";
    let r = s.bai(&s.admin, &["run", "-t", "kdpool1", "-c", code, "python"]);
    assert!(r.ok(), "{r:?}\nagent:\n{}", agent.log());
    assert_eq!(
        r.stdout.lines().map(str::trim).collect::<Vec<_>>(),
        vec!["bar - kdpool1 1000", "set number 0o600"],
        "{r:?}"
    );
    s.wait_for(180, "the pool refilled", || {
        let u = unclaimed();
        (u.len() == 1 && u[0] != first).then_some(())
    });

    // Killed, and started again with nothing of the first run on this machine.
    let mut agent = agent;
    agent.child.kill().unwrap();
    agent.child.wait().unwrap();
    wait_status(&s, "kube-dpool", "LOST", 60);
    drop(agent);
    let again = start();
    let r = s.bai(
        &s.admin,
        &["run", "-t", "kdpool1", "-c", "print(6 * 7)", "python"],
    );
    assert!(r.ok(), "{r:?}\nagent:\n{}", again.log());
    assert_eq!(r.stdout.trim(), "42", "{r:?}");
    assert_eq!(kernel_pods(&cluster, &ns), vec![first.clone()]);

    s.bai(&s.admin, &["rm", "kdpool1"]).expect_ok();
    pool("");
    cluster.wait_no_pods(&ns);
    let gone = bai_e2e::wait_until(Duration::from_secs(60), || {
        let out = cluster.kubectl(&["get", "secrets", "-n", &ns, "-l", MANAGED, "-o", "name"]);
        out.status.success() && out.stdout.iter().all(u8::is_ascii_whitespace)
    });
    assert!(gone, "Secrets left in {ns}\nagent:\n{}", again.log());
    drop(again);
    drop(s);
}

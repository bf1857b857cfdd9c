//! Warm pools end to end on `baid up` with its Docker engine: a new user's second `bai run`
//! is claimed from the automatic pool; an administrator sizes a resource group's pools with
//! `bai admin resource-group update --warm-pool` (a shape no agent can hold is refused with one
//! line); `bai agents` and `/metrics` show the pools and what they did; sessions with data
//! folders and a model service's replica (its model at `/models`) take pool kernels too; a
//! pool kernel that fails its binding (a fault point) costs a cold start, never the session.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::Server;
use bai_e2e::images::{customized, image_config, run_rm};

const TOKEN: &str = "pool-metrics-token";

fn agents(s: &Server) -> String {
    let r = s.bai(&s.admin, &["agents"]);
    r.expect_ok();
    r.stdout.clone()
}

/// The count `what` (`hits`, `misses`, …) `bai agents` prints for the agent.
fn counter(s: &Server, what: &str) -> u64 {
    let out = agents(s);
    out.lines()
        .find(|l| l.contains("warm pools:"))
        .and_then(|l| {
            l.split(',')
                .find(|part| part.trim_end().ends_with(what))
                .and_then(|part| part.split_whitespace().rev().find_map(|w| w.parse().ok()))
        })
        .unwrap_or(0)
}

/// Waits until `bai agents` says `what` is `n` (the manager reads its agents' pools every
/// 2 s), and returns what it printed.
fn wait_counter(s: &Server, what: &str, n: u64) -> String {
    s.wait_for(120, &format!("{what} = {n}"), || {
        let out = agents(s);
        (counter(s, what) == n).then_some(out)
    })
}

/// `bai admin resource-group update default ARGS…` (the pools' options).
fn update_group(s: &Server, args: &[&str]) -> bai_e2e::Run {
    let mut all = vec!["admin", "resource-group", "update", "default"];
    all.extend(args);
    s.bai(&s.admin, &all)
}

/// Waits until the agent's engine has no pool kernel left.
fn no_pool_kernels(s: &Server) {
    s.wait_for(120, "no pool kernels", || {
        let out = std::process::Command::new("docker")
            .args(["ps", "-aq", "--filter", "name=bai-pool-", "--filter"])
            .arg(format!("label=ai.bai.agent={}", s.agent_id))
            .output()
            .unwrap();
        out.stdout.is_empty().then_some(())
    });
}

/// A model folder `name` holding the serving tests' model (`fixtures/model-nb`), its health
/// checks begun at once.
fn model_folder(s: &Server, name: &str) {
    bai_e2e::model::copy_to(s.work.path(), |d| {
        d.replace("initial_delay: 30", "initial_delay: 1")
    })
    .unwrap();
    s.bai(&s.user, &["vfolder", "create", name, "-m", "model"])
        .expect_ok();
    let mut upload = vec!["vfolder", "upload", "-q", name];
    upload.extend(bai_e2e::model::FILES);
    s.bai(&s.user, &upload).expect_ok();
    for f in bai_e2e::model::FILES {
        std::fs::remove_file(s.work.path().join(f)).unwrap();
    }
}

fn metrics(s: &Server) -> String {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        reqwest::Client::new()
            .get(format!("{}/metrics", s.endpoint))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    })
}

/// Runs `code` in a new session of the default shape (or `-r` resources) and returns its
/// output.
fn run(s: &Server, resources: &[&str], code: &str) -> String {
    let mut args = vec!["run", "--rm"];
    for r in resources {
        args.extend(["-r", r]);
    }
    args.extend(["-c", code, "python"]);
    let r = s.bai(&s.user, &args);
    r.expect_ok();
    r.stdout.clone()
}

const PROBE: &str =
    "import os; print(os.environ.get('BAI_POOL'), os.environ['BAI_SESSION_NAME'] != '', 6 * 7)";

#[test]
fn pools_start_sessions_from_started_kernels() {
    let s = Server::start_with(&[("BAI_WARM_POOLS", "on"), ("BAI_METRICS_TOKEN", TOKEN)]);

    // The first run is cold; its shape becomes the automatic pool's, and the second run
    // takes the kernel kept for it.
    assert!(run(&s, &[], PROBE).contains("None True 42"));
    s.wait_for(180, "the automatic pool's kernel", || {
        agents(&s).contains("1 of 1 ready").then_some(())
    });
    assert_eq!(counter(&s, "hits"), 0);
    assert!(run(&s, &[], PROBE).contains("None True 42"));
    wait_counter(&s, "hits", 1);
    let m = metrics(&s);
    assert!(
        m.contains(&format!(
            "bai_warm_pool_hits_total{{agent=\"{}\"}} 1",
            s.agent_id
        )),
        "{m}"
    );
    assert!(m.contains("bai_warm_pool_refills_total"), "{m}");

    // An administrator's pool: a shape no agent can hold is refused with the reason.
    let r = update_group(&s, &["--warm-pool", "python,cpu=4096"]);
    r.expect_fail("no agent can hold");
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    let r = update_group(
        &s,
        &[
            "--warm-pool",
            "python,cpu=0.5,mem=512m,count=2",
            "--warm-pool-auto",
            "0",
        ],
    );
    r.expect_ok();
    assert!(r.stdout.contains("automatic mode off"), "{}", r.stdout);
    assert!(r.stdout.contains("cpu=0.5,mem=512m"), "{}", r.stdout);
    // The configured shape fills; the automatic one is given up.
    s.wait_for(180, "the configured pool, and no automatic one", || {
        let out = agents(&s);
        let pools: Vec<&str> = out.lines().filter(|l| l.contains(" warm pool ")).collect();
        (pools.len() == 1 && pools[0].contains("cpu=0.5,mem=512m") && pools[0].contains("2 of 2"))
            .then_some(())
    });
    let hits = counter(&s, "hits");
    assert!(run(&s, &["cpu=0.5", "mem=512m"], PROBE).contains("None True 42"));
    wait_counter(&s, "hits", hits + 1);
    // A session with a data folder takes a pool kernel too: the folder is mounted into it at
    // the claim, and what it writes there is in the folder.
    s.bai(&s.user, &["vfolder", "create", "data"]).expect_ok();
    std::fs::write(s.work.path().join("in.txt"), "from the folder").unwrap();
    s.bai(&s.user, &["vfolder", "upload", "-q", "data", "in.txt"])
        .expect_ok();
    s.wait_for(120, "the pool full again", || {
        agents(&s).contains("2 of 2 ready").then_some(())
    });
    let hits = counter(&s, "hits");
    let code = "print(open('/home/work/data/in.txt').read())\n\
                open('/home/work/data/out.txt', 'w').write('written inside')";
    let r = s.bai(
        &s.user,
        &[
            "run", "--rm", "-r", "cpu=0.5", "-r", "mem=512m", "-m", "data", "-c", code, "python",
        ],
    );
    r.expect_ok();
    assert!(r.stdout.contains("from the folder"), "{}", r.stdout);
    wait_counter(&s, "hits", hits + 1);
    std::fs::remove_file(s.work.path().join("in.txt")).unwrap();
    s.bai(&s.user, &["vfolder", "download", "data", "out.txt"])
        .expect_ok();
    assert_eq!(
        std::fs::read_to_string(s.work.path().join("out.txt")).unwrap(),
        "written inside"
    );

    // A model service's replica takes one too: its model folder, mounted outside the home
    // (at /models), is put into the claimed container; the replica trains from it and
    // serves.
    model_folder(&s, "nb");
    s.wait_for(120, "the pool full again", || {
        agents(&s).contains("2 of 2 ready").then_some(())
    });
    let hits = counter(&s, "hits");
    s.bai(
        &s.user,
        &[
            "service", "create", "python", "nb", "1", "-t", "nbsvc", "-r", "cpu=0.5", "-r",
            "mem=512m",
        ],
    )
    .expect_ok();
    wait_counter(&s, "hits", hits + 1);
    let list = s.api(&s.user, "GET", "/services?name=nbsvc", None).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_string();
    s.wait_for(300, "the replica from the pool to be healthy", || {
        let v = s
            .api(&s.user, "GET", &format!("/services/{id}"), None)
            .unwrap();
        let routes = v["active_routes"].as_array().cloned().unwrap_or_default();
        (routes.len() == 1 && routes[0]["status"] == "healthy").then_some(())
    });
    s.bai(&s.user, &["service", "rm", "nbsvc"]).expect_ok();

    // Another shape is not the pool's: it starts cold (the agent logs each claim before
    // the session is RUNNING).
    let claims = |s: &Server| s.log().matches("kernel ready (from the pool)").count();
    let before = claims(&s);
    assert!(run(&s, &["cpu=0.5", "mem=640m"], PROBE).contains("None True 42"));
    assert_eq!(claims(&s), before);
    assert_eq!(counter(&s, "hits"), hits + 1);

    // No pools: the pool kernels go.
    update_group(&s, &["--warm-pool", ""]).expect_ok();
    no_pool_kernels(&s);
    assert!(!agents(&s).contains(" warm pool "), "{}", agents(&s));
}

#[test]
fn a_pool_kernel_that_cannot_be_bound_costs_a_cold_start() {
    let s = Server::start_with(&[
        ("BAI_WARM_POOLS", "on"),
        ("BAI_FAULT_FAIL", "agent:pool-bind"),
        (
            "BAI_WARM_POOL",
            "bai/python:3.11-bookworm,cpu=1,mem=1g,count=1",
        ),
    ]);
    s.wait_for(180, "the node's pool kernel", || {
        agents(&s).contains("1 of 1 ready").then_some(())
    });
    assert!(run(&s, &[], PROBE).contains("None True 42"));
    wait_counter(&s, "failed to bind", 1);
    assert_eq!(counter(&s, "hits"), 0);
    assert!(
        s.log()
            .contains("could not be bound; starting the kernel cold"),
        "{}",
        s.log()
    );
}

/// What a user sees of session `name` from outside: its fields (`bai session info`), its
/// idle checks and stats (`bai session stats`), its runner's line in its logs and its apps,
/// with what differs between any two sessions (ids, names, times, live counters) taken out.
fn outside(s: &Server, name: &str) -> String {
    // `live_stat`: the monitor's readings, there once it sampled the kernel (a session
    // just started may not have them yet), and different numbers every time.
    const VOLATILE: [&str; 15] = [
        "live_stat",
        "id",
        "row_id",
        "session_id",
        "name",
        "session_name",
        "status_changed",
        "status_history",
        "created_at",
        "main_kernel_id",
        "container_id",
        "remaining",
        "rx_bytes",
        "tx_bytes",
        "last_activity",
    ];
    fn scrub(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.retain(|k, _| !VOLATILE.contains(&k.as_str()));
                for (_, x) in m.iter_mut() {
                    // Fields that hold JSON as text (idle_checks) are read as JSON.
                    if let Some(inner) = x
                        .as_str()
                        .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
                        .filter(|j| j.is_object())
                    {
                        *x = inner;
                    }
                    scrub(x);
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(scrub),
            _ => {}
        }
    }
    let mut info = s.info(&s.user, name);
    let kernel = info["main_kernel_id"].as_str().unwrap().to_string();
    scrub(&mut info);
    let stats = s.bai(&s.user, &["session", "stats", "--json", name]);
    stats.expect_ok();
    let mut stats: serde_json::Value = serde_json::from_str(&stats.stdout).unwrap();
    scrub(&mut stats["idle_checks"]);
    // The runner's line is written as it answers; the engine's copy to the log may lag.
    let logs = s.wait_for(60, "the runner's line in the session's logs", || {
        let logs = s.bai(&s.user, &["logs", name]);
        logs.expect_ok();
        logs.stdout.contains("krunner: kernel ").then_some(logs)
    });
    let apps = s.bai(&s.user, &["apps", name]);
    apps.expect_ok();
    // A file uploaded into its home (`bai upload`) is seen there by its code and in its
    // listing (`bai session files`: names only, times differ).
    std::fs::write(s.work.path().join("sent.txt"), "sent from outside").unwrap();
    s.bai(&s.user, &["upload", name, "sent.txt"]).expect_ok();
    let read = s.bai(
        &s.user,
        &[
            "run",
            "-t",
            name,
            "-c",
            "print(open('sent.txt').read())",
            "python",
        ],
    );
    read.expect_ok();
    let files = s.bai(&s.user, &["--output", "json", "session", "files", name]);
    files.expect_ok();
    let files: serde_json::Value = serde_json::from_str(&files.stdout).unwrap();
    let mut names: Vec<&str> = files["items"]
        .as_array()
        .map(|a| a.iter().filter_map(|f| f["filename"].as_str()).collect())
        .unwrap_or_default();
    names.sort_unstable();
    // A file of its home, downloaded (`bai download`): the session's own SSH key, which every
    // session has (its type, not the key itself, is the same in both).
    let dest = format!("dl-{name}");
    s.bai(
        &s.user,
        &["download", name, "id_container.pub", "--dest", &dest],
    )
    .expect_ok();
    let key = std::fs::read_to_string(s.work.path().join(&dest).join("id_container.pub"))
        .unwrap_or_else(|e| panic!("the downloaded key of {name}: {e}"));
    let key_type = key.split_whitespace().next().unwrap_or("").to_string();
    format!(
        "{info:#}\n{:#}\n{}\n{}\nread inside: {}\nfiles: {names:?}\ndownloaded key: {key_type}",
        stats["idle_checks"],
        // The runner's line (sshd may say it listens before it, in either kind).
        logs.stdout
            .lines()
            .find(|l| l.starts_with("krunner: kernel "))
            .unwrap_or("")
            .replace(&kernel, "KERNEL"),
        apps.stdout,
        read.stdout.trim(),
    )
}

#[test]
fn a_session_from_the_pool_looks_the_same_from_outside_as_a_cold_one() {
    let s = Server::start_with(&[("BAI_WARM_POOLS", "on")]);
    let pool = |shapes: &str| {
        update_group(&s, &["--warm-pool", shapes, "--warm-pool-auto", "0"]).expect_ok();
    };
    let start = |name: &str| {
        s.bai(
            &s.user,
            &[
                "start", "-q", "-t", name, "-r", "cpu=0.5", "-r", "mem=512m", "python",
            ],
        )
        .expect_ok();
    };
    pool("python,cpu=0.5,mem=512m,count=1");
    s.wait_for(180, "the pool's kernel", || {
        agents(&s).contains("1 of 1 ready").then_some(())
    });
    start("same-pool");
    wait_counter(&s, "hits", 1);
    // The same request with no pool: cold.
    pool("");
    no_pool_kernels(&s);
    start("same-cold");
    let (warm, cold) = (outside(&s, "same-pool"), outside(&s, "same-cold"));
    assert_eq!(warm, cold, "from the pool:\n{warm}\ncold:\n{cold}");
    assert!(warm.contains("\"network_timeout\""), "{warm}");
    assert!(
        warm.contains("krunner: kernel KERNEL ready (interactive)"),
        "{warm}"
    );
    assert!(warm.contains("jupyter"), "{warm}");
    assert!(warm.contains("downloaded key: ssh-"), "{warm}");
    assert!(warm.contains("read inside: sent from outside"), "{warm}");
    assert!(warm.contains("\"sent.txt\""), "{warm}");
    assert_eq!(counter(&s, "hits"), 1, "the second start was cold");
}

/// The names of the agent's session kernels (`bai-k-…`) that carry the pool's label.
fn pool_labelled_kernels(s: &Server) -> Vec<String> {
    let out = std::process::Command::new("docker")
        .args([
            "ps",
            "-a",
            "--format",
            "{{.Names}}",
            "--filter",
            "label=ai.bai.pool",
        ])
        .arg("--filter")
        .arg(format!("label=ai.bai.agent={}", s.agent_id))
        .output()
        .unwrap();
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|n| n.starts_with("bai-k-"))
        .map(str::to_string)
        .collect();
    names.sort();
    names
}

/// Convert-to-image (the official client) of a session the pool made and of a cold one:
/// each image has its source image's configuration and the customized-image labels, none of
/// the kernel's runtime (no `BAI_`/`BACKENDAI_` variable, no `ai.bai.` label), and runs code;
/// its sessions are no strangers among the agent's containers listed by the pool's label. An
/// image that an older build committed (the engine's own commit, which keeps the pool
/// kernel's `BAI_POOL=1`, ids and labels) runs code too: the agent clears what it owns.
#[test]
fn images_committed_from_pool_and_cold_sessions_run_code() {
    let s = Server::start_with(&[("BAI_WARM_POOLS", "on")]);
    update_group(
        &s,
        &[
            "--warm-pool",
            "python,cpu=0.5,mem=512m,count=1",
            "--warm-pool-auto",
            "0",
        ],
    )
    .expect_ok();
    s.wait_for(180, "the pool's kernel", || {
        agents(&s).contains("1 of 1 ready").then_some(())
    });
    let start = |name: &str, cpu: &str, mem: &str, image: &str| {
        s.bai(
            &s.user,
            &["start", "-q", "-t", name, "-r", cpu, "-r", mem, image],
        )
        .expect_ok();
    };
    start("commit-pool", "cpu=0.5", "mem=512m", "python");
    wait_counter(&s, "hits", 1);
    // Another shape: cold. Every session here is half a core, so all fit two cores.
    start("commit-cold", "cpu=0.5", "mem=768m", "python");
    let official = bai_e2e::official_client();
    let mut made = Vec::new();
    for (session, image) in [("commit-pool", "img-pool"), ("commit-cold", "img-cold")] {
        s.run_as(
            official.clone(),
            &s.user,
            &["session", "convert-to-image", session, image],
        )
        .expect_ok();
        let reference = customized(&s, &s.user, image);
        let config = image_config(&reference);
        for stranger in ["BAI_", "BACKENDAI_", "ai.bai."] {
            assert!(!config.contains(stranger), "{image}: {config}");
        }
        assert!(
            config.contains("ai.backend.customized-image.owner"),
            "{config}"
        );
        let r = run_rm(
            &s,
            &s.user,
            &["cpu=0.5", "mem=512m"],
            "print('ran', 6 * 7)",
            &reference,
        );
        r.expect_ok();
        assert!(r.stdout.contains("ran 42"), "{image}: {r:#?}");
        made.push(reference);
    }
    // Sessions of the new images are not taken for pool kernels.
    let before = pool_labelled_kernels(&s);
    start("from-img-pool", "cpu=0.5", "mem=512m", &made[0]);
    start("from-img-cold", "cpu=0.5", "mem=512m", &made[1]);
    assert_eq!(pool_labelled_kernels(&s), before);
    for name in ["commit-cold", "from-img-pool", "from-img-cold"] {
        s.bai(&s.user, &["rm", name]).expect_ok();
    }

    // What an older build made: the engine's commit of the pool session's container, over
    // the same reference. It keeps the container's runtime, and runs code all the same.
    let container = before.first().expect("the claimed pool kernel").clone();
    let out = std::process::Command::new("docker")
        .args(["commit", &container, &made[0]])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let legacy = image_config(&made[0]);
    assert!(legacy.contains("BAI_POOL=1"), "{legacy}");
    assert!(legacy.contains("ai.bai.pool"), "{legacy}");
    let r = run_rm(
        &s,
        &s.user,
        &["cpu=0.5", "mem=512m"],
        "import os; print('legacy', os.environ.get('BAI_POOL'), 6 * 7)",
        &made[0],
    );
    r.expect_ok();
    assert!(r.stdout.contains("legacy None 42"), "{r:#?}");
    s.bai(&s.user, &["rm", "commit-pool"]).expect_ok();
    for reference in &made {
        let _ = std::process::Command::new("docker")
            .args(["rmi", "-f", reference])
            .output();
    }
}

/// Issue 56: a start that finds its shape's pool empty while a kernel of that shape is being
/// made takes that kernel when it is ready, instead of starting a second container beside it.
/// Every pool kernel here is held once ready until a create waits for it (a fault point), so
/// each start comes while its pool refills.
#[test]
fn a_start_during_a_refill_takes_the_refilling_kernel() {
    const SHAPE: &str = "bai/python:3.11-bookworm,cpu=0.25,mem=256m,count=1";
    let s = Server::start_with(&[
        ("BAI_WARM_POOLS", "on"),
        ("BAI_FAULT_FAIL", "agent:pool-refill-held"),
        ("BAI_WARM_POOL", SHAPE),
    ]);
    let making = "0 of 1 ready, 1 being made";
    s.wait_for(180, "a pool kernel being made", || {
        agents(&s).contains(making).then_some(())
    });
    for (i, name) in ["during-refill-1", "during-refill-2"].iter().enumerate() {
        s.bai(
            &s.user,
            &[
                "start", "-q", "-t", name, "-r", "cpu=0.25", "-r", "mem=256m", "python",
            ],
        )
        .expect_ok();
        let out = wait_counter(&s, "hits", i as u64 + 1);
        assert!(out.contains(" 0 misses"), "{out}");
        // The session runs code in it, under its own environment (none of the pool's).
        let r = s.bai(&s.user, &["run", "-t", name, "-c", PROBE, "python"]);
        r.expect_ok();
        assert!(r.stdout.contains("None True 42"), "{}", r.stdout);
        // The next refill is under way (and held again), the pool's counts right.
        s.wait_for(120, "the next refill", || {
            agents(&s).contains(making).then_some(())
        });
    }
    assert_eq!(
        pool_labelled_kernels(&s).len(),
        2,
        "{:?}",
        pool_labelled_kernels(&s)
    );
    assert!(
        s.log().contains("waiting for the one being made"),
        "{}",
        s.log()
    );
    for name in ["during-refill-1", "during-refill-2"] {
        s.bai(&s.user, &["rm", name]).expect_ok();
    }
}

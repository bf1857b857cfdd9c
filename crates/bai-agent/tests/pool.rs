//! DOCKER TESTS of the warm pool: a kernel claimed from the pool is the same kernel as one
//! made cold for the same spec (what the user sees inside), nothing of one claimed kernel is
//! in another, and a pool kernel that cannot be bound costs a cold start, not a failure.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod common;

use bai_core::agent::{AgentRpc, ExecRequest, KernelSpec};
use bai_core::dotfile::Dotfile;
use bai_core::pool::PoolTarget;
use bai_core::status::SessionType;
use common::*;
use std::process::Command;
use uuid::Uuid;

/// The pool's one shape: the spec's.
fn target(s: &KernelSpec) -> PoolTarget {
    format!(
        "{},cpu={},mem={},shm={},count=1",
        s.image,
        s.slots.cpu_milli as f64 / 1000.0,
        s.slots.mem,
        s.shmem
    )
    .parse()
    .unwrap()
}

/// A spec of the pool's shape for a new session.
fn session(base: &KernelSpec) -> KernelSpec {
    let mut s = base.clone();
    s.kernel_id = Uuid::new_v4();
    s.session_id = Uuid::new_v4();
    s.session_name = format!("pool-{}", &s.session_id.simple().to_string()[..6]);
    s.dotfiles = vec![Dotfile {
        path: ".config/bai-test".into(),
        mode: 0o600,
        data: "mine\n".into(),
    }];
    s
}

/// Waits until the pool has `n` ready kernels.
async fn ready(t: &TestAgent, n: u32) {
    for _ in 0..1200 {
        let pools = t.agent.warm_pool_report().pools;
        if pools.iter().map(|p| p.ready).sum::<u32>() >= n {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!(
        "the pool never had {n} ready: {:?}",
        t.agent.warm_pool_report()
    );
}

/// What the user sees inside, with the kernel's and session's own ids and name replaced.
async fn inside(t: &TestAgent, s: &KernelSpec) -> String {
    let probe = "id -un; id -u; id -G; nproc; cat /sys/fs/cgroup/memory.max; \
                 df -k /dev/shm | tail -1 | awk '{print $2}'; hostname; pwd; \
                 env | grep -v -E '^(PWD|SHLVL|_|OLDPWD)=' | sort; \
                 ls -la ~ ~/.config | awk '{print $1, $3, $NF}' | grep -v -E ' \\.\\.?$'; \
                 cat ~/.config/bai-test; ls -la /opt/bai/run | awk '{print $1, $NF}' | tail -n +2; \
                 ls -la ~/data ~/ro | awk '{print $1, $3, $NF}'; cat ~/data/hello; \
                 grep -E ' /(home/work|models)' /proc/mounts | awk '{split($4, o, \",\"); print $2, o[1]}' | sort; \
                 touch ~/ro/x 2>&1 | sed 's/.*: //'; ls -la /models/iris | awk '{print $1, $3, $NF}'; \
                 cat /models/iris/hello; touch /models/iris/x 2>&1 | sed 's/.*: //'";
    let out = sh(t, s.kernel_id, probe).await;
    let (q_out, _, _) = run(
        &t.agent,
        s.kernel_id,
        ExecRequest::Query {
            code: "import os; print(os.environ['FOO'], os.environ.get('BAI_POOL'))".into(),
        },
    )
    .await;
    format!("{out}{q_out}")
        .replace(&s.kernel_id.to_string(), "KERNEL")
        .replace(&s.session_id.to_string(), "SESSION")
        .replace(&s.session_name, "NAME")
}

/// A data folder on the host with one file in it.
fn folder(name: &str, read_only: bool, dir: &tempfile::TempDir) -> bai_core::agent::Mount {
    std::fs::write(dir.path().join("hello"), format!("{name}\n")).unwrap();
    // A data folder is the kernel user's, as the storage host makes it.
    std::os::unix::fs::chown(dir.path(), Some(1000), Some(1000)).unwrap();
    bai_core::agent::Mount {
        vfolder_id: Uuid::new_v4(),
        name: name.into(),
        host_path: dir.path().display().to_string(),
        kernel_path: format!("/home/work/{name}"),
        read_only,
    }
}

#[tokio::test]
async fn docker_a_pool_kernel_is_the_same_kernel_as_a_cold_one() {
    let (data, ro) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let model = tempfile::tempdir().unwrap();
    let mut base = spec(SessionType::Interactive, 256, None);
    // A serving replica's model sits outside the home: the claim puts it into the container.
    let mut at_models = folder("model", true, &model);
    at_models.kernel_path = "/models/iris".into();
    base.mounts = vec![
        folder("data", false, &data),
        folder("ro", true, &ro),
        at_models,
    ];
    // The cluster's nodes the session's policy closes (an address nothing answers on).
    base.egress.nodes = vec!["192.0.2.7".into()];
    let t = agent_with_pool(vec![target(&base)]).await;
    ready(&t, 1).await;

    let warm = session(&base);
    let made = t.agent.create_kernel(warm.clone()).await.unwrap();
    assert_eq!(made.kernel_id, warm.kernel_id);
    let counters = t.agent.warm_pool_report().counters;
    assert_eq!((counters.hits, counters.misses), (1, 0), "{counters:?}");
    // A claimed kernel is a kernel like any other: listed under its own id, its container
    // and directory named for it.
    let listed = t.agent.list_kernels().await.unwrap();
    assert_eq!(
        listed,
        vec![warm.kernel_id],
        "the pool kernels are not listed"
    );
    let name = format!("bai-k-{}", warm.kernel_id);
    let inspect = Command::new("docker")
        .args(["inspect", "-f", "{{.Id}}", &name])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&inspect.stdout).trim(),
        made.container_id
    );
    assert!(kernel_dir(&t, warm.kernel_id).join("work").is_dir());

    // The same request, cold (no pool any more).
    t.agent.set_warm_pool(Vec::new()).await;
    let cold = session(&base);
    t.agent.create_kernel(cold.clone()).await.unwrap();
    assert_eq!(
        t.agent.warm_pool_report().counters.hits,
        1,
        "the cold one was not from the pool"
    );

    let (w, c) = (inside(&t, &warm).await, inside(&t, &cold).await);
    assert_eq!(w, c, "from the pool:\n{w}\ncold:\n{c}");
    assert!(w.contains("bar None"), "{w}");
    assert!(w.contains("BAI_KERNEL_ID=KERNEL"), "{w}");
    assert!(w.contains("BAI_SESSION_NAME=NAME"), "{w}");
    assert!(!w.contains("BAI_POOL"), "{w}");
    assert!(w.contains("/home/work/ro ro"), "{w}");
    assert!(w.contains("/home/work/data rw"), "{w}");
    assert!(w.contains("Read-only file system"), "{w}");
    assert!(w.contains("/models/iris ro\n"), "{w}");
    assert!(w.contains("\nmodel\n"), "{w}");
    // The claim kept the session's egress spec beside the kernel's directories, what the
    // agent's next start restores the rules of its nodes from (the container's label is the
    // pool's).
    let kept = std::fs::read_to_string(kernel_dir(&t, warm.kernel_id).join("egress.json"));
    assert!(kept.unwrap().contains("192.0.2.7"));
    // A folder written from the claimed kernel is the host's folder.
    let (_, err, code) = run(
        &t.agent,
        warm.kernel_id,
        ExecRequest::Batch {
            clean: None,
            build: None,
            exec: Some("echo from the pool > ~/data/written".into()),
        },
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(data.path().join("written")).unwrap(),
        "from the pool\n"
    );

    // Logs start the same way.
    let logs = logs_with(&t, warm.kernel_id, "ready").await;
    assert!(
        first_runner_line(&logs).starts_with(&format!("krunner: kernel {} ready", warm.kernel_id)),
        "{logs}"
    );
    for k in [warm.kernel_id, cold.kernel_id] {
        t.agent.destroy_kernel(k).await.unwrap();
        // The removal follows the answer; a second destroy waits for it.
        t.agent.destroy_kernel(k).await.unwrap();
    }
    // Its directory went, the folders' files did not.
    assert!(!kernel_dir(&t, warm.kernel_id).exists());
    for f in ["hello", "written"] {
        assert!(data.path().join(f).is_file(), "{f} is gone from the folder");
    }
    assert!(ro.path().join("hello").is_file());
}

#[tokio::test]
async fn docker_claimed_kernels_share_nothing_and_a_broken_one_starts_cold() {
    let base = spec(SessionType::Interactive, 256, None);
    let t = agent_with_pool(vec![target(&base)]).await;
    ready(&t, 1).await;
    let first = session(&base);
    t.agent.create_kernel(first.clone()).await.unwrap();
    let (_, _, code) = run(
        &t.agent,
        first.kernel_id,
        ExecRequest::Batch {
            clean: None,
            build: None,
            exec: Some("echo secret > ~/left-behind && echo x > /tmp/left-behind".into()),
        },
    )
    .await;
    assert_eq!(code, 0);

    // The pool refills; the next claimed kernel has nothing of the first.
    ready(&t, 1).await;
    let second = session(&base);
    t.agent.create_kernel(second.clone()).await.unwrap();
    assert_eq!(t.agent.warm_pool_report().counters.hits, 2);
    let (out, _, code) = run(
        &t.agent,
        second.kernel_id,
        ExecRequest::Batch {
            clean: None,
            build: None,
            exec: Some("ls ~/left-behind /tmp/left-behind 2>&1; true".into()),
        },
    )
    .await;
    assert_eq!(code, 0);
    assert_eq!(out.matches("No such file").count(), 2, "{out}");

    // A pool kernel that died while it waited: the create still succeeds, cold.
    ready(&t, 1).await;
    let pool_containers = Command::new("docker")
        .args(["ps", "-q", "--filter"])
        .arg("name=bai-pool-")
        .args(["--filter", &format!("label=ai.bai.agent={}", t.id)])
        .output()
        .unwrap();
    let ids = String::from_utf8_lossy(&pool_containers.stdout).to_string();
    assert_eq!(ids.split_whitespace().count(), 1, "{ids}");
    let killed = Command::new("docker")
        .arg("kill")
        .args(ids.split_whitespace())
        .output()
        .unwrap();
    assert!(killed.status.success());
    let third = session(&base);
    t.agent.create_kernel(third.clone()).await.unwrap();
    let counters = t.agent.warm_pool_report().counters;
    assert_eq!(
        (counters.hits, counters.bind_failures),
        (2, 1),
        "{counters:?}"
    );
    let (out, _, _) = run(&t.agent, third.kernel_id, q("print(6 * 7)")).await;
    assert_eq!(out.trim(), "42");
    for k in [first.kernel_id, second.kernel_id, third.kernel_id] {
        t.agent.destroy_kernel(k).await.unwrap();
    }
}

/// The kernel's logs once they hold `needle` (the engine copies a container's output to its
/// log on its own time), or as they are after a minute.
async fn logs_with(t: &TestAgent, k: Uuid, needle: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let logs = t.agent.logs(k).await.unwrap();
        if logs.contains(needle) || std::time::Instant::now() > deadline {
            return logs;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The runner's first line in a kernel's log (sshd writes to the same log, on its own time).
fn first_runner_line(logs: &str) -> &str {
    logs.lines()
        .find(|l| l.starts_with("krunner: "))
        .unwrap_or_default()
}

/// What a batch step printed, asserting it succeeded.
async fn sh(t: &TestAgent, k: Uuid, script: &str) -> String {
    let (out, err, code) = run(
        &t.agent,
        k,
        ExecRequest::Batch {
            clean: None,
            build: None,
            exec: Some(script.into()),
        },
    )
    .await;
    assert_eq!(code, 0, "{script}: {out}{err}");
    out
}

#[tokio::test]
async fn docker_a_pool_kernel_hands_its_session_a_pre_started_jupyter() {
    let base = spec(SessionType::Interactive, 1024, None);
    let t = agent_with_pool(vec![target(&base)]).await;
    ready(&t, 1).await;
    let s = session(&base);
    t.agent.create_kernel(s.clone()).await.unwrap();
    assert_eq!(t.agent.warm_pool_report().counters.hits, 1);
    // The runner writes that line as it answers the agent; the engine's log copy may lag.
    let logs = logs_with(&t, s.kernel_id, "krunner: jupyter is pre-started (pid ").await;
    assert!(
        first_runner_line(&logs).starts_with(&format!("krunner: kernel {} ready", s.kernel_id)),
        "{logs}"
    );
    let pid = logs
        .lines()
        .find_map(|l| l.strip_prefix("krunner: jupyter is pre-started (pid "))
        .and_then(|l| l.strip_suffix(')'))
        .unwrap_or_else(|| panic!("no pre-started Jupyter: {logs}"))
        .to_string();
    // Opening it sends that process the session: it serves under the session's own path.
    t.agent.start_app(s.kernel_id, "jupyter").await.unwrap();
    let logs = logs_with(&t, s.kernel_id, "krunner: started jupyter").await;
    assert!(
        logs.contains(&format!(
            "krunner: started jupyter from its pre-start (pid {pid})"
        )),
        "{logs}"
    );
    assert!(!logs.contains("krunner: started jupyter (pid"), "{logs}");
    let base_url = format!("http://127.0.0.1:8091/app/{}/jupyter", s.session_id);
    let ask = format!(
        "import json, urllib.request as u\n\
         print(sorted(json.load(u.urlopen('{base_url}/api/kernelspecs'))['kernelspecs']))\n\
         r = u.Request('{base_url}/api/kernels', data=json.dumps({{'name': 'backendai'}}).encode(), \
                       headers={{'Content-Type': 'application/json'}})\n\
         print(json.load(u.urlopen(r))['name'])\n\
         print(json.load(u.urlopen('{base_url}/api/contents'))['path'] == '')\n"
    );
    let out = sh(&t, s.kernel_id, &format!("python3 - <<'EOF'\n{ask}EOF\n")).await;
    assert!(out.contains("'backendai'"), "{out}");
    assert!(out.contains("backendai\nTrue"), "{out}");
    // The notebook's kernel, started by that Jupyter, has the session's environment, not
    // the pool's; the Jupyter is the one the pool kernel pre-started.
    let env = sh(
        &t,
        s.kernel_id,
        "for p in /proc/[0-9]*; do \
           if tr '\\0' '\\n' < $p/environ 2>/dev/null | grep -q ^BAI_IPYKERNEL_SITE=; then \
             tr '\\0' '\\n' < $p/environ; echo parent $(awk '{print $4}' $p/stat); fi; \
         done | grep -E '^(BAI_SESSION_ID|FOO|BAI_POOL)=|^parent' | sort -u",
    )
    .await;
    assert_eq!(
        env,
        format!("BAI_SESSION_ID={}\nFOO=bar\nparent {pid}\n", s.session_id),
    );
    t.agent.destroy_kernel(s.kernel_id).await.unwrap();

    // Whichever Jupyter the user opens first is the pre-started one: JupyterLab here; the
    // Notebook opened after it starts as in a cold kernel.
    ready(&t, 1).await;
    let l = session(&base);
    t.agent.create_kernel(l.clone()).await.unwrap();
    assert_eq!(t.agent.warm_pool_report().counters.hits, 2);
    t.agent.start_app(l.kernel_id, "jupyterlab").await.unwrap();
    let logs = logs_with(&t, l.kernel_id, "krunner: started jupyterlab").await;
    assert!(
        logs.contains("krunner: started jupyterlab from its pre-start (pid "),
        "{logs}"
    );
    let lab = format!("http://127.0.0.1:8092/app/{}/jupyterlab", l.session_id);
    let ask = format!(
        "import json, urllib.request as u\n\
         print(u.urlopen('{lab}/lab').status)\n\
         print(sorted(json.load(u.urlopen('{lab}/api/kernelspecs'))['kernelspecs']))\n"
    );
    let out = sh(&t, l.kernel_id, &format!("python3 - <<'EOF'\n{ask}EOF\n")).await;
    assert!(out.starts_with("200\n"), "{out}");
    assert!(out.contains("'backendai'"), "{out}");
    t.agent.start_app(l.kernel_id, "jupyter").await.unwrap();
    let logs = logs_with(&t, l.kernel_id, "krunner: started jupyter (pid").await;
    assert!(logs.contains("krunner: started jupyter (pid "), "{logs}");
    t.agent.destroy_kernel(l.kernel_id).await.unwrap();

    // A batch session gets no Jupyter: the pre-start ends.
    ready(&t, 1).await;
    let mut b = session(&base);
    b.session_type = SessionType::Batch;
    b.startup_command = Some("sleep 600".into());
    t.agent.create_kernel(b.clone()).await.unwrap();
    assert_eq!(t.agent.warm_pool_report().counters.hits, 3);
    let procs = sh(
        &t,
        b.kernel_id,
        "grep -l '[n]otebook.app' /proc/[0-9]*/cmdline 2>/dev/null | wc -l",
    )
    .await;
    assert_eq!(procs.trim(), "0");
    t.agent.destroy_kernel(b.kernel_id).await.unwrap();
}

/// Waits until the pool's one shape reports `kept` and `ready`.
async fn settles(t: &TestAgent, kept: u32, ready: u32) {
    for _ in 0..2400 {
        let pools = t.agent.warm_pool_report().pools;
        if pools
            .iter()
            .any(|p| p.kept == kept && p.ready == ready && p.making == 0)
        {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!(
        "the pool never kept {kept} with {ready} ready: {:?}",
        t.agent.warm_pool_report()
    );
}

/// Waits until the engine lists `n` pool kernels of this test's agent (the removal of
/// those the pool gave up follows it).
async fn pool_containers(t: &TestAgent, n: usize) {
    let mut seen = 0;
    for _ in 0..1200 {
        let out = Command::new("docker")
            .args(["ps", "-aq", "--filter", "name=bai-pool-", "--filter"])
            .arg(format!("label=ai.bai.agent={}", t.id))
            .output()
            .unwrap();
        seen = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .count();
        if seen == n {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("{seen} pool containers, not {n}");
}

#[tokio::test]
async fn docker_an_idle_pool_shrinks_to_one_and_grows_back_when_asked() {
    let base = spec(SessionType::Interactive, 256, None);
    let mut three = target(&base);
    three.count = 3;
    let t = agent_with_pool(vec![three]).await;
    settles(&t, 3, 3).await;
    // Nobody launches its shape: it keeps one (the next start is still instant).
    t.agent
        .set_warm_pool_idle_after(std::time::Duration::from_millis(500));
    settles(&t, 1, 1).await;
    pool_containers(&t, 1).await;
    let report = t.agent.warm_pool_report();
    assert_eq!(report.pools[0].target, 3, "{report:?}");
    // A start of its shape takes that one and grows it back to its whole count.
    t.agent
        .set_warm_pool_idle_after(std::time::Duration::from_secs(3600));
    let s = session(&base);
    t.agent.create_kernel(s.clone()).await.unwrap();
    assert_eq!(t.agent.warm_pool_report().counters.hits, 1);
    settles(&t, 3, 3).await;
    pool_containers(&t, 3).await;
    t.agent.destroy_kernel(s.kernel_id).await.unwrap();
}

/// An agent that stops leaves no pool kernel behind, not even the refill it was making when
/// asked to stop (before: that one was made after the pool was given up, and kept running
/// until the agent's next start).
#[tokio::test]
async fn docker_a_stopping_agent_leaves_no_pool_kernel_even_one_being_made() {
    let base = spec(SessionType::Interactive, 256, None);
    let t = agent_with_pool(vec![target(&base)]).await;
    ready(&t, 1).await;
    let s = session(&base);
    t.agent.create_kernel(s.clone()).await.unwrap();
    assert_eq!(t.agent.warm_pool_report().counters.hits, 1);
    // The claim starts a refill: stop while it is being made (or as soon as it is seen).
    for _ in 0..500 {
        if t.agent
            .warm_pool_report()
            .pools
            .iter()
            .any(|p| p.making > 0)
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    t.agent.stop().await;
    let out = Command::new("docker")
        .args(["ps", "-aq", "--filter", "name=bai-pool-", "--filter"])
        .arg(format!("label=ai.bai.agent={}", t.id))
        .output()
        .unwrap();
    let left = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(left.is_empty(), "pool containers left: {left}");
    // The session's kernel is no pool kernel: it keeps running.
    let (out, _, _) = run(
        &t.agent,
        s.kernel_id,
        ExecRequest::Query {
            code: "print('still here')".into(),
        },
    )
    .await;
    assert!(out.contains("still here"), "{out}");
    t.agent.destroy_kernel(s.kernel_id).await.unwrap();
}

//! What a user does with a session works the same on a remote agent: one `baid agent` in a
//! network namespace of its own with its own Docker engine, reaching the manager only over
//! its link. A batch session ends with its command's exit code and its logs come back; a kernel
//! out of memory ends its session saying so; a file
//! bigger than one link message (64 MiB) goes up and comes back intact; ssh and scp work
//! through the app tunnel; a Jupyter kernel runs code; the session's statistics are read
//! over the link; and the idle checker reclaims a session nobody uses while another lives on.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::apps::{Forward, jupyter_through_app, scp, session_key, ssh_opts};
use bai_e2e::netns::Machine;
use bai_e2e::remote::{Agent, IMAGE, manager_for_machines, query, wait_status};
use bai_e2e::{Account, Server, bin, sha256};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

fn forward(s: &Server, acct: &Account, session: &str, app: &str) -> (Forward, u16) {
    bai_e2e::apps::forward(s, &bin("bai"), acct, session, app)
}

fn dd(path: &Path, mib: u32) {
    let st = Command::new("dd")
        .args([
            "if=/dev/urandom",
            &format!("of={}", path.display()),
            "bs=1M",
            &format!("count={mib}"),
            "status=none",
        ])
        .status()
        .expect("dd");
    assert!(st.success());
}

#[test]
fn a_session_on_a_remote_agent_does_everything_a_local_one_does() {
    let (s, port, token) = manager_for_machines(&[("BAI_MONITOR_INTERVAL_MS", "500")]);
    let m = Machine::start(50);
    m.load_image(IMAGE);
    let _agent = Agent::start(&m, "far-node", port, &token, &[]);
    wait_status(&s, "far-node", "ALIVE", 120);
    let admin = &s.admin;
    let w = s.work.path().to_path_buf();

    // Batch: its exit code and its logs, from the far node.
    s.bai(
        admin,
        &[
            "start",
            "--type",
            "batch",
            "-t",
            "far-batch",
            "-r",
            "cpu=0.25",
            "-r",
            "mem=256m",
            "-c",
            "echo far-batch-output; exit 3",
            "python",
        ],
    );
    let info = s.wait_terminated(admin, "far-batch", 180);
    assert_eq!(info["agent"], "far-node", "{info}");
    assert_eq!(info["exit_code"], 3, "{info}");
    assert_eq!(info["result"], "FAILURE", "{info}");
    let logs = s.bai(admin, &["logs", "far-batch"]);
    assert!(logs.stdout.contains("far-batch-output"), "{logs:#?}");

    // A kernel that runs out of memory there ends its session saying so.
    s.bai(
        admin,
        &[
            "start", "-t", "far-oom", "-r", "cpu=0.25", "-r", "mem=256m", "python",
        ],
    )
    .expect_ok();
    let r = s.bai(
        admin,
        &[
            "run",
            "-t",
            "far-oom",
            "-c",
            "x = bytearray(900 * 1024 * 1024)",
            "python",
        ],
    );
    assert_ne!(r.code, 0, "{r:#?}");
    let ended = s.wait_terminated(admin, "far-oom", 120);
    assert_eq!(ended["status_info"], "out-of-memory", "{ended}");

    // An interactive session there.
    s.bai(
        admin,
        &[
            "start", "-t", "far-away", "-r", "cpu=0.5", "-r", "mem=512m", "python",
        ],
    )
    .expect_ok();
    assert_eq!(s.info(admin, "far-away")["agent"], "far-node");

    // 80 MiB up and back through the link, in parts.
    let big = w.join("big.bin");
    dd(&big, 80);
    let sum = sha256(&big);
    s.bai(admin, &["upload", "far-away", "big.bin"]).expect_ok();
    let inside = query(
        &s,
        "far-away",
        "import hashlib; print(hashlib.sha256(open('big.bin','rb').read()).hexdigest())",
    );
    assert_eq!(inside.trim(), sum, "the upload arrived intact");
    std::fs::create_dir_all(w.join("back")).expect("dir");
    s.bai(
        admin,
        &["download", "far-away", "big.bin", "--dest", "back"],
    )
    .expect_ok();
    assert_eq!(sha256(&w.join("back/big.bin")), sum, "and came back intact");

    // ssh and scp through the app tunnel.
    let key = session_key(&s, admin, "far-away");
    let (_sshd, sp) = forward(&s, admin, "far-away", "sshd");
    let out = Command::new("ssh")
        .args(ssh_opts(&key, "-p", sp))
        .args(["work@localhost", "echo $(whoami)@$(hostname)"])
        .stdin(Stdio::null())
        .output()
        .expect("ssh");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "work@main1");
    scp(
        &key,
        sp,
        &big.display().to_string(),
        "work@localhost:/home/work/by-scp.bin",
    );
    let back = w.join("by-scp-back.bin");
    scp(
        &key,
        sp,
        "work@localhost:/home/work/by-scp.bin",
        &back.display().to_string(),
    );
    assert_eq!(sha256(&back), sum);

    // Jupyter: a kernel runs code.
    assert_eq!(jupyter_through_app(&s, admin, "far-away").trim(), "42");

    // Statistics, read over the link.
    let samples = s.wait_for(60, "samples of the remote session", || {
        let st = s.bai(admin, &["session", "stats", "--json", "far-away"]);
        let v: Value = serde_json::from_str(&st.stdout).ok()?;
        let samples = v["samples"].as_array()?.clone();
        (!samples.is_empty()).then_some(samples)
    });
    assert!(
        samples.last().expect("a sample")["mem_bytes"]
            .as_u64()
            .unwrap_or(0)
            > 0,
        "{samples:?}"
    );

    // The network idle timeout reclaims the user's unused session there; the admin's,
    // under the default policy, lives on.
    s.bai(
        admin,
        &["admin", "policy", "create", "short", "--idle-timeout", "10"],
    )
    .expect_ok();
    let ak = s.user.get("BACKEND_ACCESS_KEY").to_string();
    s.bai(admin, &["admin", "policy", "assign", &ak, "short"])
        .expect_ok();
    s.bai(
        &s.user,
        &[
            "start", "-t", "far-idle", "-r", "cpu=0.25", "-r", "mem=256m", "python",
        ],
    )
    .expect_ok();
    assert_eq!(s.info(&s.user, "far-idle")["agent"], "far-node");
    let ended = s.wait_terminated(&s.user, "far-idle", 180);
    assert_eq!(ended["status_info"], "idle-timeout", "{ended}");
    assert_eq!(s.status(admin, "far-away"), "RUNNING");
    s.bai(admin, &["rm", "far-away"]).expect_ok();
}

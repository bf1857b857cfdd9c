//! Crash at every step, the agent's side (issue 18): a `baid agent` process killed with
//! SIGKILL inside each step of its kernels' lifecycle (a container created and not started; a
//! kernel ready and not yet reported; a container removed and its scratch directory not yet),
//! then started again in the same data dir. The manager keeps running: the call the crash cut
//! off is sent again on the agent's next link. Every session must end RUNNING or ended with a
//! reason, none with two containers; once all are terminated no container and no scratch
//! directory may be left.
//!
//! The agent joins a manager without an agent of its own over loopback and uses this
//! machine's Docker engine (`remote.rs` runs agents in network namespaces with engines of
//! their own; here the point is the process, not the network). `BAI_CRASH_RUNS` repeats each
//! point; `make chaos` runs 20.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::bin;
use bai_e2e::crash::{self, Figures, Step, check_sessions, count_scratch};
use bai_e2e::remote::{agent_command, manager_for_machines, wait_status};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command};

/// Starts `baid agent` in `data` (its output appended to `agent.log` there), with `point`
/// armed if given.
fn start_agent(name: &str, manager: &str, token: &str, data: &Path, point: Option<&str>) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(data.join("agent.log"))
        .expect("agent log");
    let mut c = agent_command(Command::new(bin("baid")), name, manager, token, data);
    if let Some(p) = point {
        c.env("BAI_FAULT_POINT", p);
    }
    c.stdout(log.try_clone().expect("log"))
        .stderr(log)
        .spawn()
        .expect("spawn baid agent")
}

fn agent_log(data: &Path) -> String {
    std::fs::read_to_string(data.join("agent.log")).unwrap_or_default()
}

fn crash_once(point: &str, step: Step, f: &mut Figures) {
    let (s, port, token) = manager_for_machines(&[]);
    let manager = format!("127.0.0.1:{port}");
    // Tests run side by side on one engine: each run's agent has a name of its own.
    let name = format!("crash-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let data = tempfile::Builder::new()
        .prefix("bai-agent-")
        .tempdir()
        .expect("tempdir");
    let mut agent = start_agent(&name, &manager, &token, data.path(), Some(point));
    wait_status(&s, &name, "ALIVE", 120);
    assert!(
        agent_log(data.path()).contains("fault point armed"),
        "the agent has no fault point armed (a build without `--features baid/fault-points`; make test builds with it)"
    );
    let names = step.names();
    let mut clients = Vec::new();
    match step {
        Step::Launch => {
            for n in &names {
                s.bai(&s.user, &["start", "--enqueue-only", "-t", n, "python"])
                    .expect_ok();
            }
        }
        Step::Terminate => {
            s.bai(&s.user, &["start", "-t", names[0], "python"])
                .expect_ok();
            clients.push(s.spawn_bai(&s.user, &["rm", names[0]]));
        }
        Step::Cancel => unreachable!("a queued session has no kernel"),
    }
    let status = s.wait_for(180, &format!("the agent to die at {point}"), || {
        agent.try_wait().ok().flatten()
    });
    let log = agent_log(data.path());
    assert_eq!(
        status.signal(),
        Some(9),
        "the agent did not die of SIGKILL: {status}\n{log}"
    );
    assert!(
        log.contains(&format!("bai-fault: point {point} reached")),
        "the agent died elsewhere than at {point}:\n{log}"
    );
    // Started again in the same data dir (same id, same credential), nothing armed.
    let mut agent = start_agent(&name, &manager, &token, data.path(), None);
    for mut c in clients {
        let _ = c.kill();
        let _ = c.wait();
    }
    check_sessions(&s, point, step, &vec![true; names.len()], f);
    if f.lost + f.doubled + f.leaked > 0 {
        eprintln!("--- agent log ---\n{}", agent_log(data.path()));
    }
    count_scratch(point, data.path(), f);
    let _ = agent.kill();
    let _ = agent.wait();
}

fn crash_at(point: &str, step: Step) {
    crash::crash_at("agent", point, step, crash_once);
}

#[test]
fn agent_container_created() {
    crash_at("agent:container-created", Step::Launch);
}

#[test]
fn agent_kernel_ready() {
    crash_at("agent:kernel-ready", Step::Launch);
}

/// A removal cut off by the agent's death finishes once the agent is back (the manager's
/// destroy goes on though the test's `bai rm` was killed meanwhile).
#[test]
fn agent_container_removed() {
    crash_at("agent:container-removed", Step::Terminate);
}

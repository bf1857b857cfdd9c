//! Crash at every step (issue 18): `baid` killed with SIGKILL on either side of each status
//! change of a session, inside the scheduler's pass and inside its agent's kernel creation and
//! removal, then started again on the same data dir. Every session must be found again and
//! end RUNNING, queued, or ended with a reason; none may have two containers; once all are
//! terminated no container and no scratch directory may be left.
//!
//! The points are `bai-fault`'s, compiled into test builds only (`make test` builds `baid`
//! with `--features baid/fault-points`). `BAI_CRASH_RUNS` (default 1) repeats each point;
//! `make chaos` runs 20. Each test prints one `CRASH` line with its figures.

use bai_e2e::Server;
use serde_json::Value;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;

/// What the sessions are doing when the point is crossed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Step {
    /// Two interactive sessions queued at once: scheduled, prepared, created.
    Launch,
    /// A running session terminated by its user.
    Terminate,
    /// A session waiting for its start time, cancelled by its user.
    Cancel,
}

const ENDED: [&str; 3] = ["TERMINATED", "CANCELLED", "ERROR"];

fn runs() -> usize {
    std::env::var("BAI_CRASH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .filter(|r| *r > 0)
        .unwrap_or(1)
}

/// The containers of a session on this machine's Docker engine: (all, running).
fn containers(session_id: &str) -> (usize, usize) {
    let count = |all: bool| {
        let filter = format!("label=ai.bai.session={session_id}");
        let mut args = vec!["ps", "-q", "--filter", filter.as_str()];
        if all {
            args.push("-a");
        }
        let out = Command::new("docker")
            .args(&args)
            .output()
            .expect("docker ps");
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .count()
    };
    (count(true), count(false))
}

/// A session's fields, or None when the manager does not know it.
fn find(s: &Server, name: &str) -> Option<Value> {
    let r = s.bai(&s.user, &["session", "info", "--json", name]);
    if !r.ok() {
        return None;
    }
    serde_json::from_str(&r.stdout).ok()
}

/// Waits until the session rests: RUNNING, or ended with a reason; a session waiting for its
/// start time (`Step::Cancel`) rests in PENDING too. A launch requeued by the restart is
/// PENDING for a moment on its way to RUNNING, so PENDING is not a rest for the others.
fn settled(s: &Server, name: &str, step: Step) -> Value {
    s.wait_for(180, &format!("{name} to settle"), || {
        let i = find(s, name)?;
        let status = i["status"].as_str().unwrap_or("");
        let reason = i["status_info"].as_str().unwrap_or("");
        let rests = status == "RUNNING"
            || (status == "PENDING" && step == Step::Cancel)
            || (ENDED.contains(&status) && !reason.is_empty());
        rests.then_some(i)
    })
}

#[derive(Default)]
struct Figures {
    runs: usize,
    lost: usize,
    doubled: usize,
    leaked: usize,
    scratch: usize,
}

/// One run: start baid with `point` armed, bring the sessions to it, wait for the SIGKILL,
/// start again, count.
fn crash_once(point: &str, step: Step, f: &mut Figures) {
    let dir = tempfile::Builder::new()
        .prefix("bai-e2e-")
        .tempdir()
        .expect("tempdir");
    let armed = [("BAI_FAULT_POINT", point), ("BAI_SCHEDULE_TICK_MS", "200")];
    let s = Server::start_in(dir, &armed);
    // The line comes before the banner, through a pipe of its own.
    s.wait_for(
        60,
        "baid's 'fault point armed' line (a build without `--features baid/fault-points` has none; make test builds with it)",
        || s.log().contains("fault point armed").then_some(()),
    );
    let user = s.user.clone();
    let names: Vec<&str> = match step {
        Step::Launch => vec!["crash-a", "crash-b"],
        Step::Terminate | Step::Cancel => vec!["crash-a"],
    };
    let mut clients = Vec::new();
    match step {
        Step::Launch => {
            for n in &names {
                clients.push(s.spawn_bai(&user, &["start", "--enqueue-only", "-t", n, "python"]));
            }
        }
        Step::Terminate => {
            s.bai(&user, &["start", "-t", names[0], "python"])
                .expect_ok();
            clients.push(s.spawn_bai(&user, &["rm", names[0]]));
        }
        Step::Cancel => {
            s.bai(
                &user,
                &[
                    "start",
                    "--type",
                    "batch",
                    "-c",
                    "true",
                    "-t",
                    names[0],
                    "--starts-at",
                    "1h",
                    "--enqueue-only",
                    "python",
                ],
            )
            .expect_ok();
            clients.push(s.spawn_bai(&user, &["rm", names[0]]));
        }
    }
    let port = s.port();
    let (status, log, dir) = s.wait_exit(180);
    assert_eq!(
        status.signal(),
        Some(9),
        "baid did not die of SIGKILL: {status}\n{log}"
    );
    assert!(
        log.contains(&format!("bai-fault: point {point} reached")),
        "baid died elsewhere than at {point}:\n{log}"
    );
    // Started again on the same port, nothing armed. A create the crash cut off is sent again
    // by `bai` (with its idempotency key) until this manager answers; a removal is not.
    let s = Server::start_in_port(dir, &[("BAI_SCHEDULE_TICK_MS", "200")], port);
    let mut acknowledged = Vec::new();
    for mut c in clients {
        // A cut-off create is resent for up to 60 s, then `bai` gives up and says so.
        let ok = step == Step::Launch
            && s.wait_for(120, "bai start --enqueue-only to end", || {
                c.try_wait().ok().flatten().map(|st| st.success())
            });
        let _ = c.kill();
        let _ = c.wait();
        acknowledged.push(ok);
    }
    // Every session whose create was answered is found and comes to rest.
    let mut ids = Vec::new();
    for (k, n) in names.iter().enumerate() {
        if find(&s, n).is_none() {
            if step != Step::Launch || acknowledged.get(k) == Some(&true) {
                f.lost += 1;
                eprintln!("{point}: {n} is lost\n{}", s.log());
            }
            continue;
        }
        let i = settled(&s, n, step);
        let id = i["id"].as_str().expect("id").to_string();
        let (all, running) = containers(&id);
        let want = usize::from(i["status"] == "RUNNING");
        if all > want || running != want {
            f.doubled += 1;
            eprintln!(
                "{point}: {n} is {} with {all} containers, {running} running",
                i["status"]
            );
        }
        if step == Step::Launch {
            // Nobody asked them to end: the launch carries on after the restart.
            assert_eq!(i["status"], "RUNNING", "{point}: {n}: {i:#}\n{}", s.log());
        }
        ids.push((n.to_string(), id));
    }
    // The user ends what still runs (again, if the crash cut the first request off).
    for (n, _) in &ids {
        let status = find(&s, n).map(|i| i["status"].clone()).unwrap_or_default();
        if !ENDED.iter().any(|e| status == *e) {
            s.bai(&s.user, &["rm", n]).expect_ok();
        }
        s.wait_for(120, &format!("{n} to end"), || {
            let i = find(&s, n)?;
            ENDED.iter().any(|e| i["status"] == *e).then_some(())
        });
    }
    for (n, id) in &ids {
        let (all, _) = containers(id);
        if all > 0 {
            f.leaked += all;
            eprintln!("{point}: {n} left {all} containers");
        }
    }
    // The agent removes a kernel's directory with its container; none may stay.
    let kernels = s.data_dir.path().join("kernels");
    let left = std::fs::read_dir(&kernels)
        .map(|d| d.filter_map(Result::ok).count())
        .unwrap_or(0);
    if left > 0 {
        f.scratch += left;
        eprintln!(
            "{point}: {left} scratch directories left in {}",
            kernels.display()
        );
    }
    f.runs += 1;
}

fn crash_at(point: &str, step: Step) {
    let mut f = Figures::default();
    for _ in 0..runs() {
        crash_once(point, step, &mut f);
    }
    println!(
        "CRASH point={point} runs={} sigkills={} lost={} doubled={} leaked={} scratch={}",
        f.runs, f.runs, f.lost, f.doubled, f.leaked, f.scratch
    );
    assert_eq!(
        (f.lost, f.doubled, f.leaked, f.scratch),
        (0, 0, 0, 0),
        "{point}: sessions lost, doubled; containers leaked; scratch directories left"
    );
}

macro_rules! points {
    ($($test:ident: $point:literal, $step:ident;)*) => {
        $(
            #[test]
            fn $test() {
                crash_at($point, Step::$step);
            }
        )*
    };
}

points! {
    pass_before_apply: "pass:before-apply", Launch;
    pass_after_apply: "pass:after-apply", Launch;
    scheduled_preparing_before: "SCHEDULED>PREPARING:before", Launch;
    scheduled_preparing_after: "SCHEDULED>PREPARING:after", Launch;
    preparing_prepared_before: "PREPARING>PREPARED:before", Launch;
    preparing_prepared_after: "PREPARING>PREPARED:after", Launch;
    prepared_creating_before: "PREPARED>CREATING:before", Launch;
    prepared_creating_after: "PREPARED>CREATING:after", Launch;
    agent_kernel_ready: "agent:kernel-ready", Launch;
    creating_running_before: "CREATING>RUNNING:before", Launch;
    creating_running_after: "CREATING>RUNNING:after", Launch;
    running_terminating_before: "RUNNING>TERMINATING:before", Terminate;
    running_terminating_after: "RUNNING>TERMINATING:after", Terminate;
    agent_container_removed: "agent:container-removed", Terminate;
    terminating_terminated_before: "TERMINATING>TERMINATED:before", Terminate;
    terminating_terminated_after: "TERMINATING>TERMINATED:after", Terminate;
    pending_cancelled_before: "PENDING>CANCELLED:before", Cancel;
    pending_cancelled_after: "PENDING>CANCELLED:after", Cancel;
}

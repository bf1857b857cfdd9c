//! Crash at every step (issue 18): `baid` killed with SIGKILL on either side of each status
//! change of a session, inside the scheduler's pass and inside its agent's kernel creation and
//! removal, then started again on the same data dir. Every session must be found again and
//! end RUNNING, queued, or ended with a reason; none may have two containers; once all are
//! terminated no container and no scratch directory may be left.
//!
//! The points are `bai-fault`'s, compiled into test builds only (`make test` builds `baid`
//! with `--features baid/fault-points`). `BAI_CRASH_RUNS` (default 1) repeats each point;
//! `make chaos` runs 20. Each test prints one `CRASH` line with its figures.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::Server;
use bai_e2e::crash::{self, Figures, Step, check_sessions, count_scratch};
use std::os::unix::process::ExitStatusExt;

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
    let names = step.names();
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
    let known: Vec<bool> = acknowledged
        .iter()
        .map(|ok| step != Step::Launch || *ok)
        .collect();
    check_sessions(&s, point, step, &known, f);
    count_scratch(point, s.data_dir.path(), f);
}

fn crash_at(point: &str, step: Step) {
    crash::crash_at("manager", point, step, crash_once);
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
    agent_container_created: "agent:container-created", Launch;
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

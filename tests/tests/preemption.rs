//! Preemption end to end (issue 58 item 4), through the `bai` CLI: a resource group with
//! `--preemption priority`, full of low-priority batch work, takes an urgent session; the
//! victim is PREEMPTED (its processes get SIGTERM), then ends or goes back to the queue
//! with its id and name, and starts again only after its preemptor started. A multi-node
//! urgent session preempts on as many agents as its kernels need (and nobody when that would
//! not make room for all of them). A manager killed in the middle of a preemption leaves no
//! victim ended without its preemptor placed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::{Account, Server};
use serde_json::Value;

#[path = "preemption/multi_node.rs"]
mod multi_node;

pub(crate) fn batch(s: &Server, who: &Account, name: &str, extra: &[&str]) {
    let mut a = vec!["start", "--enqueue-only", "--type", "batch", "-t", name];
    a.extend_from_slice(extra);
    a.push("python");
    s.bai(who, &a).expect_ok();
}

/// A batch session of `sleep 1000` at `priority` (`extra`: its resources and more), queued.
pub(crate) fn sleeper(s: &Server, who: &Account, name: &str, priority: &str, extra: &[&str]) {
    let mut a = vec!["-c", "sleep 1000", "--priority", priority];
    a.extend_from_slice(extra);
    batch(s, who, name, &a);
}

/// Waits until `name` has ended, preempted; its info.
pub(crate) fn ends_preempted(s: &Server, who: &Account, name: &str, secs: u64) -> Value {
    let ended = s.wait_status(who, name, "TERMINATED", secs);
    let why = ended["status_info"].as_str().unwrap_or_default();
    assert!(why.starts_with("preempted: "), "{name}: {ended:#}");
    ended
}

/// Waits until `name`, preempted, is queued again (PENDING, PREEMPTED in its history); its
/// info.
pub(crate) fn queued_again(s: &Server, who: &Account, name: &str) -> Value {
    s.wait_for(60, &format!("{name} to be queued again"), || {
        let i = s.info(who, name);
        (i["status"] == "PENDING" && i["status_history"]["PREEMPTED"].is_string()).then_some(i)
    })
}

/// The default group preempts by priority with a short grace; what `bai` printed.
pub(crate) fn preempting(s: &Server, grace: &str) -> String {
    let r = s.bai(
        &s.admin,
        &[
            "admin",
            "resource-group",
            "update",
            "default",
            "--preemption",
            "priority",
            "--preemption-grace",
            grace,
        ],
    );
    r.expect_ok();
    r.stdout.clone()
}

/// Waits until `name` is PENDING for want of room.
pub(crate) fn waits_for_room(s: &Server, who: &Account, name: &str) {
    s.wait_for(30, &format!("{name} to wait for room"), || {
        let i = s.info(who, name);
        i["status_info"]
            .as_str()
            .is_some_and(|t| t.starts_with("no-available-instances"))
            .then_some(())
    });
}

#[test]
fn an_urgent_session_preempts_low_priority_batch_work_which_is_requeued_or_ended() {
    let s = Server::start_dummy(1, "cpu=2,mem=4g");
    // Off (the default): nothing is preempted, the urgent session waits.
    sleeper(
        &s,
        &s.user,
        "low-requeue",
        "5",
        &["-r", "cpu=1", "--requeue"],
    );
    sleeper(&s, &s.user, "low-ends", "5", &["-r", "cpu=1"]);
    s.wait_status(&s.user, "low-requeue", "RUNNING", 60);
    s.wait_status(&s.user, "low-ends", "RUNNING", 60);
    sleeper(&s, &s.user2, "urgent", "80", &["-r", "cpu=2"]);
    waits_for_room(&s, &s.user2, "urgent");
    assert_eq!(s.status(&s.user, "low-requeue"), "RUNNING");

    let shown = s.bai(
        &s.admin,
        &[
            "admin",
            "resource-group",
            "update",
            "default",
            "--description",
            "gpus",
        ],
    );
    assert!(shown.stdout.contains("preemption: off"), "{}", shown.stdout);
    let shown_after = preempting(&s, "2s");
    assert!(
        shown_after
            .contains("preemption: priority, grace 2s, minimum run time 0s, batch sessions only"),
        "{shown_after}"
    );

    // Both low sessions are needed for a 2-core session: both are preempted, once.
    let urgent = s.wait_status(&s.user2, "urgent", "RUNNING", 120);
    let urgent_id = urgent["session_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let ended = ends_preempted(&s, &s.user, "low-ends", 60);
    let info = ended["status_info"].as_str().unwrap_or_default();
    assert!(
        info.starts_with(&format!(
            "preempted: for session {urgent_id} (priority 80 over 5)"
        )),
        "{ended:#}"
    );
    assert_eq!(ended["result"], "FAILURE", "{ended:#}");
    assert!(
        ended["status_history"]["PREEMPTED"].is_string(),
        "{ended:#}"
    );

    // The requeued one is PENDING again with its id and name, waiting for room.
    let before = s.info(&s.user, "low-requeue");
    let requeued = queued_again(&s, &s.user, "low-requeue");
    assert_eq!(requeued["session_id"], before["session_id"]);
    // It starts again once the urgent one ends.
    s.bai(&s.user2, &["rm", "urgent"]).expect_ok();
    let again = s.wait_status(&s.user, "low-requeue", "RUNNING", 120);
    assert_eq!(again["session_id"], before["session_id"]);

    // The preemption is in the history and in the events.
    let h = s.bai(
        &s.user,
        &["session", "history", "low-requeue", "--scheduling"],
    );
    h.expect_ok();
    assert!(h.stdout.contains("preempt"), "{}", h.stdout);
}

#[test]
fn interactive_sessions_and_higher_priorities_are_never_victims() {
    let s = Server::start_dummy(1, "cpu=2,mem=4g");
    preempting(&s, "2s");
    s.bai(
        &s.user,
        &[
            "start",
            "--enqueue-only",
            "-t",
            "notebook",
            "-r",
            "cpu=1",
            "--priority",
            "0",
            "python",
        ],
    )
    .expect_ok();
    sleeper(&s, &s.user, "important", "90", &["-r", "cpu=1"]);
    s.wait_status(&s.user, "notebook", "RUNNING", 60);
    s.wait_status(&s.user, "important", "RUNNING", 60);
    sleeper(&s, &s.user2, "urgent", "50", &["-r", "cpu=1"]);
    // It waits: no victim is allowed (and nothing is preempted for it in vain).
    waits_for_room(&s, &s.user2, "urgent");
    // Several passes later, still nothing preempted.
    for _ in 0..5 {
        s.bai(&s.user, &["ps"]).expect_ok();
    }
    assert_eq!(s.status(&s.user, "notebook"), "RUNNING");
    assert_eq!(s.status(&s.user, "important"), "RUNNING");
    // Interactive sessions become victims only when the group says so.
    s.bai(
        &s.admin,
        &[
            "admin",
            "resource-group",
            "update",
            "default",
            "--preempt-interactive",
            "true",
        ],
    )
    .expect_ok();
    s.wait_status(&s.user2, "urgent", "RUNNING", 120);
    ends_preempted(&s, &s.user, "notebook", 60);
    assert_eq!(s.status(&s.user, "important"), "RUNNING");
}

#[test]
fn bad_preemption_settings_are_refused_with_one_line() {
    let s = Server::start_dummy(1, "cpu=2,mem=4g");
    let r = s.bai(
        &s.admin,
        &[
            "admin",
            "resource-group",
            "update",
            "default",
            "--preemption",
            "always",
        ],
    );
    r.expect_fail("--preemption \"always\": use off, priority or fairshare");
    let r = s.bai(
        &s.admin,
        &[
            "admin",
            "resource-group",
            "update",
            "default",
            "--preemption-grace",
            "0s",
        ],
    );
    r.expect_fail("preemption_grace_secs: at least 1");
    // --requeue is for batch sessions.
    let r = s.bai(&s.user, &["start", "--enqueue-only", "--requeue", "python"]);
    r.expect_fail("requeue applies only to batch sessions");
}

/// A manager killed right after the victims were marked: the restarted one ends the grace
/// and places the preemptor; killed right before: the victim keeps running until the
/// restarted one preempts it. Either way one preemption, never a victim ended in vain. Real
/// Docker kernels (they outlive the manager, as on a real node), so the victim's SIGTERM
/// and its requeue are the real ones.
#[test]
fn a_manager_killed_in_the_middle_of_a_preemption_finishes_it_or_never_began_it() {
    for point in ["preempt:after-mark", "preempt:before-mark"] {
        let dir = tempfile::Builder::new()
            .prefix("bai-e2e-")
            .tempdir()
            .expect("tempdir");
        let armed = [("BAI_FAULT_POINT", point), ("BAI_SCHEDULE_TICK_MS", "200")];
        let s = Server::start_in(dir, &armed);
        preempting(&s, "3s");
        let all = ["-r", "cpu=2", "-r", "mem=256m"];
        let mut victim = all.to_vec();
        victim.push("--requeue");
        sleeper(&s, &s.user, "victim", "5", &victim);
        s.wait_status(&s.user, "victim", "RUNNING", 120);
        sleeper(&s, &s.user2, "urgent", "80", &all);
        let (_, log, dir) = s.wait_exit(120);
        assert!(log.contains(point), "{point}: {log}");
        let s = Server::start_in(dir, &[("BAI_SCHEDULE_TICK_MS", "200")]);
        let urgent = s.wait_status(&s.user2, "urgent", "RUNNING", 120);
        let victim = s.wait_for(60, "the victim requeued", || {
            let i = s.info(&s.user, "victim");
            (i["status"] == "PENDING").then_some(i)
        });
        // Preempted (its kernel ended by SIGTERM before the grace was over) and queued
        // again behind the urgent session, which runs.
        assert!(
            victim["status_history"]["PREEMPTED"].is_string(),
            "{point}: {victim:#}"
        );
        assert_eq!(urgent["status"], "RUNNING");
        let h = s.bai(
            &s.user,
            &[
                "session",
                "history",
                "victim",
                "--scheduling",
                "--to-status",
                "PREEMPTED",
            ],
        );
        h.expect_ok();
        let marks = h
            .stdout
            .lines()
            .filter(|l| {
                l.split_whitespace()
                    .next()
                    .is_some_and(|id| uuid::Uuid::parse_str(id).is_ok())
            })
            .count();
        assert_eq!(marks, 1, "{point}: preempted once: {}", h.stdout);
    }
}

/// On a real kernel the victim's processes get SIGTERM at the start of the grace: a batch
/// command that traps it saves its work and exits, and the session ends without waiting for
/// the rest of the grace (the preemptor starts then).
#[test]
fn a_victims_processes_get_sigterm_and_may_end_before_the_grace() {
    let s = Server::start();
    // A long grace: the victim's own exit ends it, not the grace's end.
    preempting(&s, "10m");
    let all = ["-r", "cpu=2", "-r", "mem=256m"];
    let script =
        "trap 'echo saved-on-sigterm; exit 0' TERM; echo trap-set; while :; do sleep 1; done";
    let mut victim = vec!["-c", script, "--priority", "5"];
    victim.extend_from_slice(&all);
    batch(&s, &s.user, "trapper", &victim);
    s.wait_status(&s.user, "trapper", "RUNNING", 120);
    // Its trap is set before anything preempts it (RUNNING comes before its command starts).
    s.wait_for(120, "trapper's trap set", || {
        let logs = s.bai(&s.user, &["logs", "trapper"]);
        logs.stdout.contains("trap-set").then_some(())
    });
    sleeper(&s, &s.user2, "urgent", "80", &all);
    ends_preempted(&s, &s.user, "trapper", 300);
    let logs = s.bai(&s.user, &["logs", "trapper"]);
    logs.expect_ok();
    assert!(logs.stdout.contains("saved-on-sigterm"), "{}", logs.stdout);
    s.wait_status(&s.user2, "urgent", "RUNNING", 300);
}

/// The official client (Backend.AI 26.9's, which knows PREEMPTED as a 26.8 status) shows a
/// session in its grace: `session info` names the status and why; `ps` still works.
#[test]
fn the_official_client_shows_a_preempted_session() {
    let s = Server::start_dummy(1, "cpu=2,mem=4g");
    // A long grace: a dummy kernel never ends by itself, so it stays PREEMPTED meanwhile.
    preempting(&s, "10m");
    sleeper(&s, &s.user, "victim", "5", &["-r", "cpu=2"]);
    let v = s.wait_status(&s.user, "victim", "RUNNING", 60);
    let id = v["session_id"].as_str().unwrap_or_default().to_string();
    sleeper(&s, &s.user2, "urgent", "80", &["-r", "cpu=2"]);
    s.wait_status(&s.user, "victim", "PREEMPTED", 60);
    let info = s.run_as(
        bai_e2e::official_client(),
        &s.user,
        &["session", "info", &id],
    );
    info.expect_ok();
    assert!(
        info.stdout.contains("PREEMPTED") && info.stdout.contains("preempted: for session"),
        "{info:#?}"
    );
    s.run_as(bai_e2e::official_client(), &s.user, &["ps"])
        .expect_ok();
    // The urgent one waits for the grace, with that in its reason.
    let u = s.info(&s.user2, "urgent");
    assert_eq!(u["status"], "PENDING", "{u:#}");
}

/// The owner is told in the web UI (`web/e2e/preempt.mjs` in Debian's chromium): on the
/// Sessions page while their batch session runs, another user's urgent session preempts
/// it; a warning notification names it and why at once, and the header's Notifications
/// list keeps it.
#[test]
fn the_owner_is_warned_in_the_web_ui() {
    let web = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../web");
    assert!(
        web.join("dist/index.html").is_file(),
        "the web UI is not built: run scripts/build-web.sh"
    );
    let s = Server::start_dummy(1, "cpu=2,mem=4g");
    preempting(&s, "10m");
    sleeper(&s, &s.user, "victim", "5", &["-r", "cpu=2"]);
    s.wait_status(&s.user, "victim", "RUNNING", 60);
    let password = s.web_password("user@bai.local");
    let mut cmd = std::process::Command::new("node");
    cmd.arg("e2e/preempt.mjs")
        .current_dir(&web)
        .env("BAI_URL", &s.endpoint)
        .env("BAI_USER", "user@bai.local")
        .env("BAI_PASSWORD", &password)
        .env("BAI_EMAIL", "user@bai.local")
        .env("BAI_VICTIM", "victim")
        .env("BAI_BIN", bai_e2e::bin("bai"))
        .env("URGENT_ACCESS_KEY", s.user2.get("BACKEND_ACCESS_KEY"))
        .env("URGENT_SECRET_KEY", s.user2.get("BACKEND_SECRET_KEY"))
        .env(
            "URGENT_ARGS",
            "--enqueue-only --type batch -t urgent -c sleep -r cpu=2 --priority 80 python",
        );
    if let Ok(dir) = std::env::var("BAI_SCREENSHOTS") {
        cmd.env("SCREENSHOTS", dir);
    }
    let out = cmd.output().expect("node e2e/preempt.mjs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}\nbaid log:\n{}", s.log());
    assert!(text.contains("preempt: 4 passed"), "{text}");
    assert_eq!(s.status(&s.user, "victim"), "PREEMPTED");
}

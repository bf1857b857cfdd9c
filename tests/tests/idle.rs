//! Idle checkers and resource statistics end to end, against `baid up` with the real Docker
//! engine: the network idle timeout reclaims a session nobody uses while one in use lives on,
//! batch sessions are exempt from it; the utilization checker reclaims a session that sleeps
//! while one that computes lives on; the maximum lifetime ends a session whatever it does; and
//! every running session's CPU, memory and network use is sampled and reported.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::{Account, Server};
use serde_json::Value;

/// `idle_checks` of a session (a JSON text in the session's fields).
fn idle_checks(s: &Server, who: &Account, name: &str) -> Value {
    let info = s.info(who, name);
    serde_json::from_str(info["idle_checks"].as_str().unwrap_or("{}")).unwrap_or(Value::Null)
}

fn policy(s: &Server, name: &str, args: &[&str]) {
    let mut a = vec!["admin", "policy", "create", name];
    a.extend_from_slice(args);
    s.bai(&s.admin, &a).expect_ok();
    let ak = s.user.get("BACKEND_ACCESS_KEY").to_string();
    s.bai(&s.admin, &["admin", "policy", "assign", &ak, name])
        .expect_ok();
}

#[test]
fn network_idle_timeout_reclaims_unused_sessions_only() {
    let s = Server::start_with(&[("BAI_MONITOR_INTERVAL_MS", "300")]);
    // A new installation's default policy reclaims sessions after 30 idle minutes.
    let policies = s.bai(&s.admin, &["admin", "policy", "list"]);
    policies.expect_ok();
    assert!(
        policies
            .stdout
            .lines()
            .any(|l| l.starts_with("default") && l.contains("1800")),
        "{policies:#?}"
    );
    policy(&s, "short", &["--idle-timeout", "10"]);
    s.bai(
        &s.user,
        &[
            "start",
            "--enqueue-only",
            "-t",
            "batchsess",
            "--type",
            "batch",
            "-c",
            "sleep 120",
            "-r",
            "cpu=0.5",
            "python",
        ],
    )
    .expect_ok();
    s.wait_for(30, "the batch session to run", || {
        (s.status(&s.user, "batchsess") == "RUNNING").then_some(())
    });
    // Batch sessions are not judged by network activity.
    assert!(
        idle_checks(&s, &s.user, "batchsess")
            .get("network_timeout")
            .is_none()
    );
    // Small sessions, so all three fit on a two-core machine.
    s.bai(
        &s.user,
        &["start", "-t", "usedsess", "-r", "cpu=0.5", "python"],
    )
    .expect_ok();
    // By id: `bai run -t NAME` would start a new session if this one had ended.
    let used = s.info(&s.user, "usedsess")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let batch = s.info(&s.user, "batchsess")["id"]
        .as_str()
        .unwrap()
        .to_string();
    s.bai(
        &s.user,
        &["run", "-t", "usedsess", "-c", "print(1)", "python"],
    )
    .expect_ok();
    s.bai(
        &s.user,
        &["start", "-t", "idlesess", "-r", "cpu=0.5", "python"],
    )
    .expect_ok();
    let checks = idle_checks(&s, &s.user, "idlesess");
    let net = &checks["network_timeout"];
    assert_eq!(net["threshold"], 10, "{checks}");
    assert!(net["remaining"].as_f64().unwrap() <= 10.0, "{checks}");
    assert_eq!(net["idle"], false);
    // Use one session every second (code execution is traffic); leave the other alone.
    let ended = s.wait_for(60, "the unused session to be reclaimed", || {
        s.bai(
            &s.user,
            &["run", "-t", "usedsess", "-c", "print(41 + 1)", "python"],
        )
        .expect_ok();
        let i = s.info(&s.user, "idlesess");
        (i["status"] == "TERMINATED").then_some(i)
    });
    assert_eq!(ended["status_info"], "idle-timeout", "{ended}");
    let u = s.info(&s.user, &used);
    assert_eq!(u["status"], "RUNNING", "{u}\n{}", s.log());
    assert_eq!(s.status(&s.user, &batch), "RUNNING");
    // `bai session info` says how long the used session has left.
    let info = s.bai(&s.user, &["session", "info", &used]);
    info.expect_ok();
    assert!(
        info.stdout
            .lines()
            .any(|l| l.trim_start().starts_with("network_timeout") && l.contains("limit 10s")),
        "{info:#?}"
    );
    for id in [&used, &batch] {
        s.bai(&s.user, &["rm", id]).expect_ok();
    }
    // An ended session keeps its last counters (`last_stat`, a JSON text): the traffic of its
    // code executions and its last resource readings, after the manager forgot them.
    let gone = s.info(&s.user, &used);
    assert_eq!(gone["status"], "TERMINATED", "{gone}");
    let last: Value = serde_json::from_str(
        gone["last_stat"]
            .as_str()
            .expect("last_stat is a JSON text"),
    )
    .expect("last_stat parses");
    assert!(last["network"]["rx_bytes"].as_u64() > Some(0), "{last}");
    assert!(last["network"]["tx_bytes"].as_u64() > Some(0), "{last}");
    assert!(last["cpu_used"]["current"].is_string(), "{last}");
    assert_eq!(gone["network"], last["network"], "{gone}");
    let info = s.bai(&s.user, &["session", "info", &used]);
    info.expect_ok();
    assert!(
        info.stdout
            .lines()
            .any(|l| l.starts_with("last stat: CPU time") && l.contains("through apps")),
        "{info:#?}"
    );
}

#[test]
fn utilization_checker_reclaims_a_sleeping_session_and_spares_a_busy_one() {
    let s = Server::start_with(&[
        ("BAI_MONITOR_INTERVAL_MS", "300"),
        (
            "BAI_IDLE_UTILIZATION",
            "window=5,grace=3,cpu_util=20,op=and",
        ),
    ]);
    s.bai(
        &s.user,
        &["start", "-t", "busysess", "-r", "cpu=1", "python"],
    )
    .expect_ok();
    // A process that keeps one core busy, detached from the execution.
    s.bai(
        &s.user,
        &[
            "run",
            "-t",
            "busysess",
            "-c",
            "import subprocess; subprocess.Popen(['python3', '-c', 'while True: pass'], start_new_session=True); print('spinning')",
            "python",
        ],
    )
    .expect_ok();
    let busy_id = s.info(&s.user, "busysess")["id"]
        .as_str()
        .unwrap()
        .to_string();
    s.bai(
        &s.user,
        &["start", "-t", "lazysess", "-r", "cpu=1", "python"],
    )
    .expect_ok();
    let checks = idle_checks(&s, &s.user, "lazysess");
    assert_eq!(checks["utilization"]["threshold"], 5, "{checks}");
    let ended = s.wait_for(60, "the sleeping session to be reclaimed", || {
        let i = s.info(&s.user, "lazysess");
        (i["status"] == "TERMINATED").then_some(i)
    });
    assert_eq!(ended["status_info"], "idle-utilization", "{ended}");
    assert_eq!(s.status(&s.user, &busy_id), "RUNNING");
    let busy = idle_checks(&s, &s.user, &busy_id);
    let cpu = &busy["utilization"]["extra"]["resources"]["cpu_util"];
    assert!(cpu[0].as_f64().unwrap() > 20.0, "{busy}");
    assert_eq!(cpu[1], 20.0);
    assert_eq!(busy["utilization"]["idle"], false);
    // The samples behind it: the busy session's CPU use, per interval.
    let stats = s.bai(&s.user, &["session", "stats", "--json", "busysess"]);
    stats.expect_ok();
    let v: Value = serde_json::from_str(&stats.stdout).expect("stats JSON");
    let samples = v["samples"].as_array().expect("samples");
    assert!(samples.len() >= 3, "{v}");
    let last = samples.last().unwrap();
    assert!(last["cpu_util"].as_f64().unwrap() > 20.0, "{v}");
    assert!(last["mem_bytes"].as_u64().unwrap() > 0, "{v}");
    assert!(v["counters"]["cpu_used_ns"].as_u64().unwrap() > 0, "{v}");
    // The official client's `live_stat` is a JSON text with the same numbers.
    let info = s.info(&s.user, "busysess");
    let live: Value = serde_json::from_str(info["live_stat"].as_str().expect("live_stat")).unwrap();
    assert!(
        live["mem"]["current"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            > 0,
        "{live}"
    );
    s.bai(&s.user, &["rm", "busysess"]).expect_ok();
}

#[test]
fn max_lifetime_ends_a_session_whatever_it_does() {
    let s = Server::start_with(&[("BAI_MONITOR_INTERVAL_MS", "300")]);
    policy(&s, "brief", &["--max-lifetime", "4"]);
    s.bai(&s.user, &["start", "-t", "brief1", "python"])
        .expect_ok();
    let id = s.info(&s.user, "brief1")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let checks = idle_checks(&s, &s.user, &id);
    assert_eq!(checks["session_lifetime"]["threshold"], 4, "{checks}");
    let ended = s.wait_for(60, "the session to reach its lifetime", || {
        // Keep it busy with traffic: that does not extend a lifetime.
        s.bai(&s.user, &["download", &id, "id_container"]);
        let i = s.info(&s.user, &id);
        (i["status"] == "TERMINATED").then_some(i)
    });
    assert_eq!(ended["status_info"], "max-lifetime-exceeded", "{ended}");
    assert!(
        ended["network"]["tx_bytes"].as_u64().unwrap() > 0,
        "{ended}"
    );
}

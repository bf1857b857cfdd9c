//! Preemption for multi-node sessions end to end on dummy agents: an urgent multi-node
//! session preempts on as many agents as its kernels need (victims that span agents
//! included), and nobody when even that would not make room for all of its kernels.

use super::{batch, ends_preempted, preempting, queued_again, sleeper, waits_for_room};
use bai_e2e::{Account, Server};

/// A multi-node batch session of `size` kernels of `cpu` cores each, queued (`extra`: its
/// priority and more).
fn multi_batch(s: &Server, who: &Account, name: &str, size: &str, cpu: &str, extra: &[&str]) {
    let cpu = format!("cpu={cpu}");
    let mut a = vec![
        "-c",
        "sleep 1000",
        "--cluster-mode",
        "multi-node",
        "--cluster-size",
        size,
        "-r",
        &cpu,
        "-r",
        "mem=256m",
    ];
    a.extend_from_slice(extra);
    batch(s, who, name, &a);
}

/// The distinct agents of a session's kernels.
fn agents_of(info: &serde_json::Value) -> Vec<String> {
    let mut out: Vec<String> = info["kernels"]
        .as_array()
        .map(|ks| {
            ks.iter()
                .filter_map(|k| k["agent"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.dedup();
    out
}

/// How many passes found no room for `name` (its merged NEED_RETRY record's attempts).
fn passes_without_room(s: &Server, who: &Account, name: &str) -> u64 {
    let h = s.bai(
        who,
        &[
            "session",
            "history",
            name,
            "--scheduling",
            "--result",
            "NEED_RETRY",
        ],
    );
    h.expect_ok();
    // A record's row: id, phase, result, `from -> to`, attempts, …
    h.stdout
        .lines()
        .filter(|l| l.contains("no-available-instances"))
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            uuid::Uuid::parse_str(w.first()?).ok()?;
            w.get(6)?.parse::<u64>().ok()
        })
        .sum()
}

/// A multi-node urgent session over two agents full of low-priority batch work (a session
/// of one kernel on each, and a multi-node one spanning both): all three are preempted,
/// and the urgent one runs with a kernel on each agent; the spanning one, requeued, runs
/// again over both once the urgent one is gone.
#[test]
fn a_multi_node_urgent_session_preempts_on_both_agents_and_runs_across_them() {
    let s = Server::start_dummy(2, "cpu=2,mem=4g");
    preempting(&s, "2s");
    multi_batch(
        &s,
        &s.user,
        "low-multi",
        "2",
        "1",
        &["--priority", "5", "--requeue"],
    );
    let spanning = s.wait_status(&s.user, "low-multi", "RUNNING", 60);
    assert_eq!(agents_of(&spanning).len(), 2, "{spanning:#}");
    for name in ["low-1", "low-2"] {
        sleeper(&s, &s.user, name, "5", &["-r", "cpu=1", "-r", "mem=256m"]);
        s.wait_status(&s.user, name, "RUNNING", 60);
    }
    let lows = [
        agents_of(&s.info(&s.user, "low-1")),
        agents_of(&s.info(&s.user, "low-2")),
    ];
    assert_ne!(lows[0], lows[1], "one on each agent: {lows:?}");

    // Two kernels of 2 cores: every core of both agents.
    multi_batch(&s, &s.user2, "urgent", "2", "2", &["--priority", "80"]);
    let urgent = s.wait_status(&s.user2, "urgent", "RUNNING", 120);
    assert_eq!(
        agents_of(&urgent).len(),
        2,
        "across both agents: {urgent:#}"
    );
    let id = urgent["session_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for name in ["low-1", "low-2"] {
        let ended = ends_preempted(&s, &s.user, name, 60);
        let info = ended["status_info"].as_str().unwrap_or_default();
        assert!(
            info.starts_with(&format!("preempted: for session {id} (priority 80 over 5)")),
            "{name}: {ended:#}"
        );
    }
    // The spanning one (`--requeue`) is queued again with its id, both kernels gone.
    let requeued = queued_again(&s, &s.user, "low-multi");
    assert_eq!(requeued["session_id"], spanning["session_id"]);
    // It waited with both agents reserved (its last wait names them).
    let h = s.bai(&s.user2, &["session", "history", "urgent", "--scheduling"]);
    h.expect_ok();
    let mut agents = lows[0].clone();
    agents.extend(lows[1].clone());
    agents.sort();
    let mut reserved: Vec<String> = h
        .stdout
        .split("reserved agents ")
        .nth(1)
        .and_then(|t| t.split(" from ").next())
        .map(|t| t.split(", ").map(str::to_string).collect())
        .unwrap_or_default();
    reserved.sort();
    assert_eq!(reserved, agents, "{}", h.stdout);
    // Once the urgent one is gone the requeued one runs again over both agents.
    s.bai(&s.user2, &["rm", "urgent"]).expect_ok();
    let again = s.wait_status(&s.user, "low-multi", "RUNNING", 120);
    assert_eq!(again["session_id"], spanning["session_id"]);
    assert_eq!(agents_of(&again).len(), 2, "{again:#}");
}

/// A multi-node session that even all the allowed victims would not make room for (one
/// agent runs work of a higher priority) preempts nobody, pass after pass; once that work
/// ends, the low-priority session is preempted and the urgent one runs.
#[test]
fn a_multi_node_session_without_room_to_make_preempts_nobody() {
    let s = Server::start_dummy(2, "cpu=2,mem=4g");
    preempting(&s, "2s");
    let each = ["-r", "cpu=2", "-r", "mem=256m"];
    sleeper(&s, &s.user, "low-work", "5", &each);
    s.wait_status(&s.user, "low-work", "RUNNING", 60);
    sleeper(&s, &s.user, "important", "90", &each);
    s.wait_status(&s.user, "important", "RUNNING", 60);

    multi_batch(&s, &s.user2, "urgent", "2", "2", &["--priority", "50"]);
    waits_for_room(&s, &s.user2, "urgent");
    s.wait_for(60, "several passes without room for urgent", || {
        (passes_without_room(&s, &s.user2, "urgent") >= 5).then_some(())
    });
    let l = s.info(&s.user, "low-work");
    assert_eq!(l["status"], "RUNNING", "{l:#}");
    assert!(l["status_history"]["PREEMPTED"].is_null(), "{l:#}");
    assert_eq!(s.status(&s.user, "important"), "RUNNING");
    let u = s.info(&s.user2, "urgent");
    assert!(
        !u["status_info"]
            .as_str()
            .unwrap_or_default()
            .contains("preempting"),
        "{u:#}"
    );

    // The important work ends: now ending `low` makes room for both kernels.
    s.bai(&s.user, &["rm", "important"]).expect_ok();
    let urgent = s.wait_status(&s.user2, "urgent", "RUNNING", 120);
    assert_eq!(agents_of(&urgent).len(), 2, "{urgent:#}");
    ends_preempted(&s, &s.user, "low-work", 60);
}

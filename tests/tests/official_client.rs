//! The unmodified official Backend.AI client (PyPI backend.ai-client 26.9.6) against
//! `baid up`: the commands of the product docs, as a researcher types them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::{Run, Server};
use std::path::PathBuf;

fn official() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv-official/bin/backend.ai");
    assert!(
        p.exists(),
        "{} is missing: `make test` installs it (scripts/official-client.sh)",
        p.display()
    );
    p
}

fn ba(s: &Server, admin: bool, args: &[&str]) -> Run {
    let acct = if admin { &s.admin } else { &s.user };
    s.run_as(official(), acct, args)
}

fn session_id_from(out: &str) -> String {
    out.split_whitespace()
        .find(|w| {
            uuid::Uuid::parse_str(w.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '-'))
                .is_ok()
        })
        .map(|w| {
            w.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '-')
                .to_string()
        })
        .unwrap_or_else(|| panic!("no session id in {out:?}"))
}

#[test]
fn official_client_runs_code_and_files() {
    let s = Server::start();
    let r = ba(
        &s,
        false,
        &["run", "--rm", "-c", "print(\"hello world\")", "python"],
    );
    r.expect_ok();
    assert!(r.stdout.contains("hello world"), "{r:#?}");

    let r = ba(&s, false, &["run", "--rm", "-c", "1 + 1", "python"]);
    r.expect_ok();
    assert!(r.stdout.contains('2'), "{r:#?}");

    std::fs::write(
        s.work.path().join("myscript.py"),
        "import sys\nprint('script got', sys.argv[1:])\n",
    )
    .unwrap();
    let r = ba(
        &s,
        false,
        &[
            "run",
            "--rm",
            "--exec",
            "python myscript.py arg1 arg2",
            "python",
            "./myscript.py",
        ],
    );
    r.expect_ok();
    assert!(r.stdout.contains("script got ['arg1', 'arg2']"), "{r:#?}");

    // Seed 004: `run IMAGE ./mygpucode.py` runs the file, and says what ran; bai alike.
    std::fs::write(
        s.work.path().join("mygpucode.py"),
        "print('mygpucode ran', 6 * 7)\n",
    )
    .unwrap();
    let r = ba(&s, false, &["run", "--rm", "python", "./mygpucode.py"]);
    r.expect_ok();
    assert!(r.stdout.contains("mygpucode ran 42"), "{r:#?}");
    let said = format!("{}{}", r.stdout, r.stderr);
    assert!(said.contains("(running: python3 'mygpucode.py')"), "{r:#?}");
    let r = s.bai(&s.user, &["run", "--rm", "python", "./mygpucode.py"]);
    r.expect_ok();
    assert!(r.stdout.contains("mygpucode ran 42"), "{r:?}");
    assert!(
        r.stderr.contains("(running: python3 'mygpucode.py')"),
        "{r:?}"
    );

    let ps = ba(&s, false, &["ps"]);
    ps.expect_ok();
    assert!(
        !ps.stdout.contains("pysdk-"),
        "--rm must remove the sessions: {ps:#?}"
    );
}

#[test]
fn official_client_manages_sessions() {
    let s = Server::start();
    let r = ba(&s, false, &["start", "-t", "offsess", "python"]);
    r.expect_ok();
    let id = session_id_from(&format!("{} {}", r.stdout, r.stderr));

    let ps = ba(&s, false, &["ps"]);
    ps.expect_ok();
    assert!(
        ps.stdout.contains("offsess") && ps.stdout.contains("RUNNING"),
        "{ps:#?}"
    );

    let info = ba(&s, false, &["session", "info", &id]);
    info.expect_ok();
    assert!(
        info.stdout.contains("offsess") && info.stdout.contains("RUNNING"),
        "{info:#?}"
    );

    ba(&s, false, &["session", "rename", "offsess", "offsess2"]).expect_ok();
    let ps = ba(&s, false, &["ps"]);
    assert!(ps.stdout.contains("offsess2"), "{ps:#?}");

    let logs = ba(&s, false, &["session", "logs", "offsess2"]);
    logs.expect_ok();

    // `session ls`: a file the session made is listed with its size, a missing path is
    // refused in one line.
    ba(
        &s,
        false,
        &[
            "run",
            "-t",
            "offsess2",
            "-c",
            "open('made-here.txt', 'w').write('12345')",
            "python",
        ],
    )
    .expect_ok();
    let ls = ba(&s, false, &["session", "ls", "offsess2", "."]);
    ls.expect_ok();
    let line = ls
        .stdout
        .lines()
        .find(|l| l.contains("made-here.txt"))
        .unwrap_or_else(|| panic!("made-here.txt listed: {ls:#?}"));
    assert!(line.contains('5') && line.contains("-rw-"), "{line}");
    let r = ba(&s, false, &["session", "ls", "offsess2", "/no/such/dir"]);
    assert!(
        !r.ok() || r.stdout.contains("No such file") || r.stderr.contains("No such file"),
        "{r:#?}"
    );

    // `session show-graph`: a batch session that depends on this one.
    let r = ba(
        &s,
        false,
        &[
            "session",
            "create",
            "--type",
            "batch",
            "--enqueue-only",
            "--depends",
            &id,
            "-t",
            "afteroff",
            "--startup-command",
            "true",
            "python",
        ],
    );
    r.expect_ok();
    // The table view: the tree view parses Backend.AI's own task-name and enum spellings.
    let graph = ba(&s, false, &["session", "show-graph", "--table", "afteroff"]);
    graph.expect_ok();
    assert!(graph.stdout.contains("offsess2"), "{graph:#?}");
    ba(&s, false, &["rm", "afteroff"]).expect_ok();

    let all = ba(&s, true, &["admin", "session", "list"]);
    all.expect_ok();
    assert!(all.stdout.contains("offsess2"), "{all:#?}");

    // `admin agent list|info` (GraphQL `agent_list`, `agent`): the agent, alive, with the
    // running session's CPU in its occupied slots; for administrators only.
    let agents = ba(&s, true, &["admin", "agent", "list"]);
    agents.expect_ok();
    let row = agents
        .stdout
        .lines()
        .find(|l| l.contains(&s.agent_id))
        .unwrap_or_else(|| panic!("the agent listed: {agents:#?}"));
    assert!(row.contains("ALIVE") && row.contains("cpu:"), "{row}");
    let lost = ba(&s, true, &["admin", "agent", "list", "--status", "LOST"]);
    lost.expect_ok();
    assert!(!lost.stdout.contains(&s.agent_id), "{lost:#?}");
    let info = ba(&s, true, &["admin", "agent", "info", &s.agent_id]);
    info.expect_ok();
    let occupied = info
        .stdout
        .lines()
        .find(|l| l.starts_with("Occupied Slots"))
        .unwrap_or_else(|| panic!("occupied slots shown: {info:#?}"));
    assert!(
        occupied.contains("cpu:") && !occupied.contains("cpu:0,"),
        "{occupied}"
    );
    let r = ba(&s, false, &["admin", "agent", "list"]);
    assert!(
        r.stdout.contains("only administrators") || r.stderr.contains("only administrators"),
        "{r:#?}"
    );

    // The other admin listings: the manager's status (the running session counted), the
    // slot types, the storage hosts, and every user's folders (a user's, listed to the admin).
    let st = ba(&s, true, &["admin", "manager", "status"]);
    st.expect_ok();
    let line = st
        .stdout
        .lines()
        .find(|l| l.starts_with("running"))
        .unwrap_or_else(|| panic!("the status: {st:#?}"));
    let active: u64 = line
        .split_whitespace()
        .last()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a count: {line}"));
    assert!(active >= 1, "{st:#?}");
    let slots = ba(&s, true, &["admin", "resource", "query-slots"]);
    assert!(
        slots.stdout.contains("cpu (count)") && slots.stdout.contains("mem (bytes)"),
        "{slots:#?}"
    );
    let hosts = ba(&s, true, &["admin", "vfolder", "list-hosts"]);
    hosts.expect_ok();
    assert!(hosts.stdout.contains("local:volume1"), "{hosts:#?}");
    ba(
        &s,
        false,
        &["vfolder", "create", "users-folder", "local:volume1"],
    )
    .expect_ok();
    let folders = ba(&s, true, &["admin", "vfolder", "list"]);
    folders.expect_ok();
    assert!(
        folders
            .stdout
            .lines()
            .any(|l| l.contains("users-folder") && l.contains("user@bai.local")),
        "{folders:#?}"
    );
    let r = ba(&s, false, &["admin", "manager", "status"]);
    assert!(!r.ok(), "{r:#?}");

    ba(&s, false, &["rm", "offsess2"]).expect_ok();
    let ev = ba(&s, false, &["events", "offsess2"]);
    ev.expect_ok();
    for name in ["session_enqueued", "session_started", "session_terminated"] {
        assert!(ev.stdout.contains(name), "{name} missing: {ev:#?}");
    }
    let dead = ba(&s, false, &["ps", "--dead"]);
    assert!(
        dead.stdout.contains("offsess2") && dead.stdout.contains("TERMINATED"),
        "{dead:#?}"
    );

    // Errors come back as problems the client can print.
    let r = ba(&s, false, &["rm", "no-such-session"]);
    assert_ne!(r.code, 0, "{r:#?}");
    let r = ba(&s, false, &["start", "-t", "ab", "python"]);
    assert_ne!(r.code, 0, "{r:#?}");
}

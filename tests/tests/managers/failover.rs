//! A switch of leaders as the person at `bai` sees it (issue 56): a create through the
//! standby neither hangs on a frozen leader nor fails while no manager leads; it waits,
//! says so in one line, and makes one session.

use super::{agent_status, cluster, wait_leads};
use bai_e2e::Server;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// What `bai` says while it waits through a switch.
const NOTICE: &str = "the platform is switching managers; retrying for up to";

/// How long the caller of `bai start` waits for it: in the issue a call through the standby
/// hung for all of its caller's 40 s; here the test gives up on it after this.
const CALLER: Duration = Duration::from_secs(60);

/// A `bai` command running in the background, its output in files.
struct Running {
    child: Child,
    started: Instant,
    out: PathBuf,
    err: PathBuf,
    _dir: tempfile::TempDir,
}

impl Running {
    fn start(s: &Server, args: &[&str]) -> Running {
        let dir = tempfile::tempdir().unwrap();
        let (out, err) = (dir.path().join("out"), dir.path().join("err"));
        let child = s
            .bai_command(&s.admin, args)
            .env_remove("BAI_FAILOVER_WAIT")
            .stdout(Stdio::from(std::fs::File::create(&out).unwrap()))
            .stderr(Stdio::from(std::fs::File::create(&err).unwrap()))
            .spawn()
            .expect("bai");
        Running {
            child,
            started: Instant::now(),
            out,
            err,
            _dir: dir,
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }

    fn still_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Waits until it printed `what` on stderr (it must still run).
    fn wait_stderr(&mut self, s: &Server, what: &str) -> Duration {
        s.wait_for(CALLER.as_secs(), &format!("bai to say {what:?}"), || {
            if self.stderr().contains(what) {
                return Some(self.started.elapsed());
            }
            assert!(self.still_running(), "bai ended: {}", self.stderr());
            None
        })
    }

    /// Waits for it to end, as its caller would: [`CALLER`] from its start at most.
    /// Returns its stdout and stderr.
    fn finish(mut self) -> (String, String) {
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if self.started.elapsed() > CALLER {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "bai waited its caller's whole {} s: {}",
                    CALLER.as_secs(),
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let out = std::fs::read_to_string(&self.out).unwrap_or_default();
        let err = self.stderr();
        assert!(status.success(), "bai: {status}\n{out}\n{err}");
        (out, err)
    }
}

/// How many sessions of `name` the database holds.
fn sessions_named(url: &str, name: &str) -> i64 {
    let mut db = postgres::Client::connect(url, postgres::NoTls).unwrap();
    db.query_one("SELECT count(*) FROM sessions WHERE name = $1", &[&name])
        .unwrap()
        .get(0)
}

/// The leader is stopped (SIGSTOP, as a paused VM) while a `bai start` through the standby
/// waits on it. The standby cuts the relayed request with `503 no-leader` once the leader
/// fell silent (or the lease moved); `bai` says it waits, sends the create again with its
/// key, and the new leader answers it: one session, and `bai start` returns while the old
/// leader is still stopped.
#[test]
fn a_create_relayed_to_a_frozen_leader_is_answered_by_the_next() {
    let c = cluster(34);
    let url = c.envs[0][0].1.clone();
    let (a, b) = (&c.a, &c.b);
    // A batch session that runs until the test lets it end; the create depends on it, so
    // it waits (in flight) for as long as the test needs.
    let gate = [
        "start",
        "--type",
        "batch",
        "-t",
        "fo-gate",
        "--enqueue-only",
        "-r",
        "cpu=0.25",
        "-r",
        "mem=128m",
        "-c",
        "while [ ! -e /tmp/go ]; do sleep 0.2; done",
        "python",
    ];
    a.bai(&a.admin, &gate).expect_ok();
    let gate_id = a.wait_for(180, "the gate to run", || {
        let i = a.info(&a.admin, "fo-gate");
        (i["status"] == "RUNNING").then(|| i["id"].as_str().unwrap_or("").to_string())
    });
    let held = [
        "start",
        "-t",
        "fo-held",
        "--depends",
        "fo-gate",
        "-r",
        "cpu=0.25",
        "-r",
        "mem=128m",
        "python",
    ];
    let mut start = Running::start(b, &held);
    // In flight: the leader stored the session and `bai start` waits for it to run.
    a.wait_for(60, "fo-held to be stored", || {
        (sessions_named(&url, "fo-held") == 1).then_some(())
    });
    assert!(start.still_running(), "{}", start.stderr());

    a.signal("-STOP");
    let stopped = Instant::now();
    // The standby gives the relayed request up and `bai` says it waits.
    start.wait_stderr(b, NOTICE);
    let noticed = stopped.elapsed();
    wait_leads(b);
    let led = stopped.elapsed();
    b.wait_for(60, "the agent to join B", || {
        (agent_status(b, "node-ha").as_deref() == Some("ALIVE")).then_some(())
    });
    // The gate opens: the session starts under B and `bai start` answers it; A is still
    // stopped, so the answer is B's.
    let filter = format!("label=ai.bai.session={gate_id}");
    let listed = c.machine.docker(&["ps", "-q", "--filter", &filter]);
    let container = String::from_utf8_lossy(&listed.stdout).trim().to_string();
    assert!(!container.is_empty(), "the gate's container");
    let opened = c.machine.docker(&["exec", &container, "touch", "/tmp/go"]);
    assert!(opened.status.success(), "{opened:?}");
    let gate_opened = stopped.elapsed();
    let (out, err) = start.finish();
    let returned = stopped.elapsed();
    let info = b.info(&b.admin, "fo-held");
    assert_eq!(info["status"], "RUNNING", "{info:#}");
    let id = info["id"].as_str().unwrap_or("-");
    assert!(
        out.contains(id),
        "bai start answered another session: {out}"
    );
    assert_eq!(err.matches(NOTICE).count(), 1, "{err}");
    assert_eq!(sessions_named(&url, "fo-held"), 1);
    eprintln!(
        "frozen leader: SIGSTOP -> bai's notice {:.1} s, B leads {:.1} s, gate opened {:.1} s, bai start returned the session {:.1} s ({:.1} s after the gate)",
        noticed.as_secs_f64(),
        led.as_secs_f64(),
        gate_opened.as_secs_f64(),
        returned.as_secs_f64(),
        (returned - gate_opened).as_secs_f64()
    );
    a.signal("-CONT");
    assert_eq!(super::containers(&c.machine, "node-ha"), 1);
}

/// The leader is killed (SIGKILL) and `bai start` goes through the standby before it leads:
/// no manager leads, so `bai` says it waits, and the create goes through once the standby
/// leads; one session.
#[test]
fn a_create_through_a_standby_waits_for_a_new_leader() {
    let c = cluster(35);
    let url = c.envs[0][0].1.clone();
    let killed = Instant::now();
    let data_a = c.a.crash();
    let b = &c.b;
    let mut start = Running::start(
        b,
        &[
            "start", "-t", "fo-wait", "-r", "cpu=0.25", "-r", "mem=128m", "python",
        ],
    );
    let noticed = start.wait_stderr(b, NOTICE);
    let (out, err) = start.finish();
    let returned = killed.elapsed();
    let info = b.info(&b.admin, "fo-wait");
    assert_eq!(info["status"], "RUNNING", "{info:#}");
    assert!(out.contains(info["id"].as_str().unwrap_or("-")), "{out}");
    assert_eq!(err.matches(NOTICE).count(), 1, "{err}");
    assert_eq!(sessions_named(&url, "fo-wait"), 1);
    assert_eq!(super::containers(&c.machine, "node-ha"), 1);
    eprintln!(
        "killed leader: bai start through the standby noticed the switch {:.1} s after the kill and returned the session at {:.1} s",
        noticed.as_secs_f64(),
        returned.as_secs_f64()
    );
    drop(data_a);
}

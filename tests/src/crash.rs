//! What the crash tests (`crash_points.rs`: the manager killed, `agent_crash_points.rs`: a
//! `baid agent` killed) share: which sessions to bring to a point, how a session comes to rest,
//! and the figures they count.

use crate::{Server, wait_until};
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

/// What the sessions are doing when the point is crossed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// Two interactive sessions queued at once: scheduled, prepared, created.
    Launch,
    /// A running session terminated by its user.
    Terminate,
    /// A session waiting for its start time, cancelled by its user.
    Cancel,
}

impl Step {
    /// The sessions the step brings to the point.
    pub fn names(self) -> Vec<&'static str> {
        match self {
            Step::Launch => vec!["crash-a", "crash-b"],
            Step::Terminate | Step::Cancel => vec!["crash-a"],
        }
    }
}

pub const ENDED: [&str; 3] = ["TERMINATED", "CANCELLED", "ERROR"];

/// How often each point is crossed: `BAI_CRASH_RUNS`, 1 unless told.
fn runs() -> usize {
    std::env::var("BAI_CRASH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .filter(|r| *r > 0)
        .unwrap_or(1)
}

/// The containers of a session on this machine's Docker engine: (all, running).
pub fn containers(session_id: &str) -> (usize, usize) {
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
pub fn find(s: &Server, name: &str) -> Option<Value> {
    let r = s.bai(&s.user, &["session", "info", "--json", name]);
    if !r.ok() {
        return None;
    }
    serde_json::from_str(&r.stdout).ok()
}

/// Waits until the session rests: RUNNING, or ended with a reason; a session waiting for its
/// start time (`Step::Cancel`) rests in PENDING too. A launch requeued by the restart is
/// PENDING for a moment on its way to RUNNING, so PENDING is not a rest for the others.
pub fn settled(s: &Server, name: &str, step: Step) -> Value {
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

/// Crosses `point` [`runs`] times, one `once` each (`what`: whose process is killed), then
/// prints the figures and fails the test if any is not 0.
pub fn crash_at(what: &str, point: &str, step: Step, once: fn(&str, Step, &mut Figures)) {
    let mut f = Figures::default();
    for _ in 0..runs() {
        once(point, step, &mut f);
        f.runs += 1;
    }
    f.report(what, point);
}

/// What the runs of one point counted; every figure but `runs` must stay 0.
#[derive(Default, Debug)]
pub struct Figures {
    pub runs: usize,
    pub lost: usize,
    pub doubled: usize,
    pub leaked: usize,
    pub scratch: usize,
}

impl Figures {
    /// Prints the test's `CRASH` line and fails it when anything was lost, doubled or left.
    pub fn report(&self, what: &str, point: &str) {
        println!(
            "CRASH {what} point={point} runs={} sigkills={} lost={} doubled={} leaked={} scratch={}",
            self.runs, self.runs, self.lost, self.doubled, self.leaked, self.scratch
        );
        assert_eq!(
            (self.lost, self.doubled, self.leaked, self.scratch),
            (0, 0, 0, 0),
            "{what} {point}: sessions lost, doubled; containers leaked; scratch directories left"
        );
    }
}

/// After the restart: every session of `names` that the manager knows comes to rest with at
/// most its own container (a launch runs on: RUNNING), then ends at its user's request with
/// no container left. `known[k]`: whether the k-th must be found (its create was answered).
/// Returns nothing; counts into `f`.
pub fn check_sessions(s: &Server, point: &str, step: Step, known: &[bool], f: &mut Figures) {
    let mut ids = Vec::new();
    for (k, n) in step.names().iter().enumerate() {
        if find(s, n).is_none() {
            if known.get(k) != Some(&false) {
                f.lost += 1;
                eprintln!("{point}: {n} is lost\n{}", s.log());
            }
            continue;
        }
        let i = settled(s, n, step);
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
        let status = find(s, n).map(|i| i["status"].clone()).unwrap_or_default();
        if !ENDED.iter().any(|e| status == *e) {
            s.bai(&s.user, &["rm", n]).expect_ok();
        }
        s.wait_for(120, &format!("{n} to end"), || {
            let i = find(s, n)?;
            ENDED.iter().any(|e| i["status"] == *e).then_some(())
        });
    }
    for (n, id) in &ids {
        // An ended session's stopped container is removed after its end: waited for, up to
        // a minute, before what is left counts as leaked.
        wait_until(Duration::from_secs(60), || containers(id).0 == 0);
        let (all, _) = containers(id);
        if all > 0 {
            f.leaked += all;
            eprintln!("{point}: {n} left {all} containers");
        }
    }
}

/// Counts the kernel scratch directories left under `data_dir/kernels` (the agent removes a
/// kernel's directory with its container, after the session ended; none may stay).
pub fn count_scratch(point: &str, data_dir: &std::path::Path, f: &mut Figures) {
    let kernels = data_dir.join("kernels");
    let count = || {
        std::fs::read_dir(&kernels)
            .map(|d| d.filter_map(Result::ok).count())
            .unwrap_or(0)
    };
    // A kernel's directory goes after its container, which goes after the session's end: up
    // to a minute for that before what is left counts.
    wait_until(Duration::from_secs(60), || count() == 0);
    let left = count();
    if left > 0 {
        f.scratch += left;
        eprintln!(
            "{point}: {left} scratch directories left in {}",
            kernels.display()
        );
    }
}

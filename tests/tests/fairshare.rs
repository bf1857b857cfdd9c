//! Usage-decayed fair share end to end: `baid up` with one dummy agent, the default group on
//! the `fairshare` scheduler, usage charged every half second. A user whose sessions ran
//! (recorded usage) queues first; a user who ran nothing queues after: the light user's
//! session starts first, the heavy one's waits naming its fair-share factor, and
//! `bai admin fairshare` shows both users' usage and factors (administrators only).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::{Account, Server};

fn start(s: &Server, who: &Account, name: &str, cmd: &str) {
    s.bai(
        who,
        &[
            "start",
            "--enqueue-only",
            "--type",
            "batch",
            "-c",
            cmd,
            "-t",
            name,
            "-r",
            "cpu=2",
            "-r",
            "mem=1g",
            "python",
        ],
    )
    .expect_ok();
}

/// The factor printed on a user's row of `bai admin fairshare`.
fn factor_of(out: &str, email: &str) -> Option<f64> {
    out.lines()
        .find(|l| l.trim_start().starts_with(email))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|f| f.parse().ok())
}

#[test]
fn the_user_with_recorded_usage_waits_behind_the_light_one() {
    let s = Server::start_with(&[
        ("BAI_NO_DOCKER", "true"),
        ("BAI_DUMMY_AGENTS", "1"),
        ("BAI_DUMMY_CAPACITY", "cpu=2,mem=4g"),
        ("BAI_SCHEDULE_TICK_MS", "200"),
        ("BAI_FAIRSHARE_CHARGE_MS", "500"),
    ]);
    s.bai(
        &s.admin,
        &[
            "admin",
            "resource-group",
            "update",
            "default",
            "--scheduler",
            "fairshare",
        ],
    )
    .expect_ok();
    // The priority's weights are a group setting, printed back; a name it does not know is
    // refused with one line.
    let set = |w: &str| {
        s.bai(
            &s.admin,
            &[
                "admin",
                "resource-group",
                "update",
                "default",
                "--fairshare-priority",
                w,
            ],
        )
    };
    let r = set("max-age=2d");
    r.expect_ok();
    assert!(
        r.stdout.contains(
            "priority fairshare=10000,age=1000,size=1000,priority=1000,max-age=172800s,burst-window=3600s"
        ),
        "{}",
        r.stdout
    );
    set("speed=3").expect_fail("use fairshare, age, size, priority, max-age or burst-window");
    let (heavy, light) = (&s.user, &s.user2);

    // The heavy user holds the whole agent for a few seconds: its usage is recorded as it runs.
    start(&s, heavy, "heavy-run", "sleep 5");
    s.wait_status(heavy, "heavy-run", "RUNNING", 20);
    s.wait_for(20, "heavy usage recorded", || {
        let r = s.bai(&s.admin, &["admin", "fairshare", "--group", "default"]);
        r.expect_ok();
        factor_of(&r.stdout, "user@bai.local")
            .filter(|f| *f < 1.0)
            .map(|_| ())
    });
    // Both queue for the agent: the heavy user first (FIFO would start it first).
    start(&s, heavy, "heavy-next", "sleep 30");
    start(&s, light, "light-next", "sleep 30");
    s.wait_status(light, "light-next", "RUNNING", 30);
    let i = s.info(heavy, "heavy-next");
    assert_eq!(i["status"], "PENDING", "{i:#}");

    // Why the heavy one waits names its factor, in `session info` too.
    let i = s.wait_for(10, "the pending reason to name the factor", || {
        let i = s.info(heavy, "heavy-next");
        i["pending"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("fair-share factor"))
            .then_some(i)
    });
    assert_eq!(i["pending"]["code"], "no-available-instances", "{i:#}");
    let text = s.bai(heavy, &["session", "info", "heavy-next"]);
    text.expect_ok();
    assert!(text.stdout.contains("fair-share factor"), "{}", text.stdout);

    // The tree shows both users; the heavy one's factor is the lower.
    let out = s.wait_for(20, "both users in the tree", || {
        let r = s.bai(&s.admin, &["admin", "fairshare", "--group", "default"]);
        r.expect_ok();
        let (h, l) = (
            factor_of(&r.stdout, "user@bai.local")?,
            factor_of(&r.stdout, "user2@bai.local")?,
        );
        Some((r.stdout.clone(), h, l))
    });
    let (text, h, l) = out;
    assert!(h < l, "heavy {h} light {l}\n{text}");
    assert!(text.contains("scheduler fairshare"), "{text}");

    // A normal user may not read it.
    let r = s.api(heavy, "GET", "/admin/fairshare", None);
    assert!(matches!(r, Err((403, _))), "{r:?}");
    s.bai(heavy, &["admin", "fairshare"]).expect_fail("admin");
}

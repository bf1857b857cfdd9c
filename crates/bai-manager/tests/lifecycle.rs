//! What the HTTP edge makes of a session request before the lifecycle plans it, in process.
//! The lifecycle's own paths (every status, the races between its actors, a restart) are
//! tested beside it, in `bai-control/tests`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod support;

use serde_json::json;
use support::Harness;

/// Environment names the platform sets (`BAI_*`: they steer the kernel's runner) are refused
/// by the server with a clear 400, as the web UI refuses them; others are kept.
#[tokio::test(start_paused = true)]
async fn reserved_environment_names_are_refused() {
    let h = Harness::start().await;
    let body = |env: serde_json::Value| {
        json!({"name": "envcheck", "image": support::IMAGE, "enqueueOnly": true,
               "config": {"resources": {"cpu": 1, "mem": "1g"}, "environ": env}})
    };
    let refused = support::plan(
        &h.m.lifecycle,
        &h.user,
        &body(json!({"BAI_KRUNNER_SOCKET": "/tmp/x"})),
    )
    .expect_err("refused");
    assert_eq!(refused.status, 400);
    assert!(
        refused.msg.contains("BAI_KRUNNER_SOCKET") && refused.msg.contains("reserved"),
        "{}",
        refused.msg
    );
    let plan = support::plan(&h.m.lifecycle, &h.user, &body(json!({"MY_BAI_THING": "1"})))
        .expect("other names are fine");
    assert_eq!(
        plan.session
            .spec
            .environ
            .get("MY_BAI_THING")
            .map(String::as_str),
        Some("1")
    );
}

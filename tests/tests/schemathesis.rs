//! schemathesis against `docs/openapi.json`, bounded: every route, signed as a user and as
//! an administrator (`scripts/schemathesis.sh`, Backend.AI's HMAC signing in
//! `scripts/schemathesis_hooks.py`), a fixed seed and a few examples per operation. Checks:
//! no 5xx (but the documented 503 `no-agents`, the answer to a create in a resource group no
//! agent node is in, which the stateful phase can bring about), every answer's status, media
//! type and body as the document says. An event stream is listened to for 10 s (it stays
//! open while nothing happens; the default 30 s per case was a third of the run), and each
//! role's sessions end before the next role's fixtures are made. The full runs
//! (more examples, a random seed) are `make chaos`'s.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use std::path::PathBuf;
use std::process::Command;

#[test]
fn every_route_answers_as_the_openapi_document_says() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("bash")
        .arg(root.join("scripts/schemathesis.sh"))
        .env("ST_MAX_EXAMPLES", "5")
        .env("ST_SEED", "20261124")
        .env("ST_TIMEOUT", "900")
        .output()
        .expect("run scripts/schemathesis.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with("schemathesis: "))
        .unwrap_or("");
    println!("{summary}");
    assert!(
        out.status.success() && summary.ends_with(" 0 failures"),
        "{summary}\n{stdout}\n{stderr}"
    );
    let operations: usize = summary
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(operations >= 100, "every route was tried: {summary}");
}

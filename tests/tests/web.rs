//! The web UI: its component tests (Vitest, the launcher's validation rules) and its
//! end-to-end test in a real browser (Debian's chromium driven by playwright-core, see
//! `web/e2e/run.mjs`) against `baid up` with the real Docker engine: log in, launch through
//! every launcher page with a folder and an env var, see it RUNNING, the terminal's `echo`,
//! Jupyter through the proxy, logs, the detail panel (resource charts, idle checks, kernel
//! logs), rename, scheduling history (filters, sub-steps), terminate, Finished with its reason;
//! invalid inputs show their errors and launch nothing. Model serving: a model folder made
//! and filled (`tests/fixtures/model-nb`) through the Data page's upload, its definition
//! checked; on the Serving page a bad replica count and a taken name refused beside their
//! fields, a service of one replica HEALTHY with a URL, scaled to two healthy routes, a token
//! that opens the endpoint, a threshold rule added and disabled, the service removed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::Server;
use std::path::PathBuf;
use std::process::Command;

fn web_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../web")
}

#[test]
fn web_component_tests_pass() {
    let out = Command::new("npx")
        .args(["--no-install", "vitest", "run"])
        .current_dir(web_dir())
        .output()
        .expect("run vitest (make web installs it)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("passed") && !text.contains("failed"),
        "{text}"
    );
}

#[test]
fn web_ui_end_to_end_in_chromium() {
    // Resource samples every second, and a utilization checker with a long grace period,
    // so the detail panel has charts and idle checks to show.
    // Two mock GPUs in fractional mode, so the launcher offers fGPU.
    let mock = tempfile::tempdir().expect("tempdir");
    let mock_file = mock.path().join("mock-accelerator.toml");
    std::fs::write(
        &mock_file,
        "allocation_mode = \"fractional\"\n[[devices]]\nmodel_name = \"Mock GPU\"\nmemory_size = \"8G\"\n[[devices]]\nmodel_name = \"Mock GPU\"\nmemory_size = \"8G\"\n",
    )
    .expect("write the mock accelerator file");
    let s = Server::start_with(&[
        ("BAI_MONITOR_INTERVAL_MS", "1000"),
        ("BAI_IDLE_UTILIZATION", "window=3600,grace=600,cpu_util=1"),
        (
            "BAI_MOCK_ACCELERATOR",
            mock_file.to_str().expect("utf-8 path"),
        ),
    ]);
    assert!(
        web_dir().join("dist/index.html").is_file(),
        "the web UI is not built (make web)"
    );
    s.bai(&s.user, &["vfolder", "create", "uidata"]).expect_ok();
    // A preset with half a GPU: the launcher takes its GPU into the accelerator field.
    s.bai(
        &s.admin,
        &[
            "admin",
            "preset",
            "create",
            "gpu-half",
            "-r",
            "cpu=1",
            "-r",
            "mem=1g",
            "-r",
            "cuda.shares=0.5",
        ],
    )
    .expect_ok();
    let logins = std::fs::read_to_string(s.data_dir.path().join("web-login.txt"))
        .expect("baid writes the web passwords");
    let password_of = |email: &str| {
        logins
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{email} ")))
            .expect("a web password")
            .trim()
            .to_string()
    };
    let password = password_of("user@bai.local");
    let mut cmd = Command::new("node");
    cmd.arg("e2e/run.mjs")
        .current_dir(web_dir())
        .env("BAI_URL", &s.endpoint)
        .env("BAI_EMAIL", "user@bai.local")
        .env("BAI_PASSWORD", &password)
        .env("BAI_FOLDER", "uidata")
        .env("BAI_ADMIN_EMAIL", "admin@bai.local")
        .env("BAI_ADMIN_PASSWORD", password_of("admin@bai.local"));
    if let Ok(dir) = std::env::var("BAI_SCREENSHOTS") {
        cmd.env("SCREENSHOTS", dir);
    }
    let out = cmd.output().expect("run the browser test");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}\nbaid log:\n{}", s.log());
    assert!(text.contains("e2e: 44 passed"), "{text}");
    // Secrets never reach the logs: after a full run through the UI (logins, wrong
    // passwords, sessions, apps, serving tokens), no secret key or password is in baid's.
    let log = s.log();
    for seen in ["web login", "web login refused", "session event"] {
        assert!(
            log.contains(seen),
            "baid's log has no {seen:?} line to judge by"
        );
    }
    let admin_password = password_of("admin@bai.local");
    let secrets = [
        ("the user's secret key", s.user.get("BACKEND_SECRET_KEY")),
        ("the user2's secret key", s.user2.get("BACKEND_SECRET_KEY")),
        ("the admin's secret key", s.admin.get("BACKEND_SECRET_KEY")),
        ("the user's password", password.as_str()),
        ("the admin's password", admin_password.as_str()),
    ];
    for (what, secret) in secrets {
        assert!(secret.len() >= 8, "{what} is too short to look for");
        assert!(!log.contains(secret), "{what} is in baid's log");
    }
    for line in log.lines() {
        let l = line.to_lowercase();
        assert!(
            !l.contains("password=") && !l.contains("secret_key=") && !l.contains("token=bai"),
            "a secret-looking field is logged: {line}"
        );
    }
}

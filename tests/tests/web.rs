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
//! The layout at 1280 × 800 (`web/e2e/layout.mjs`): every page, tab and launcher step, as a
//! user and as a superadmin, with real rows (a running, a pending and an ended session; four
//! agents, one of them lost after its warm pool was filled), none wider than the window, no
//! column cut off, no row taller than two lines, no status broken over lines. Then a switch
//! of managers as the browser sees it (`web/e2e/switching.mjs`): `503 no-leader` answers
//! waited through with a notice, and a create whose answer was lost retried with the same
//! Idempotency-Key, making one session.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::remote::{agent_command, join_token, wait_status};
use bai_e2e::{Server, bin, free_port};
use std::path::PathBuf;
use std::process::{Child, Command};

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

/// Two mock GPUs in fractional mode, in a file of `dir`, for `BAI_MOCK_ACCELERATOR`.
fn mock_accelerator(dir: &std::path::Path) -> String {
    let file = dir.join("mock-accelerator.toml");
    std::fs::write(
        &file,
        "allocation_mode = \"fractional\"\n[[devices]]\nmodel_name = \"Mock GPU\"\nmemory_size = \"8G\"\n[[devices]]\nmodel_name = \"Mock GPU\"\nmemory_size = \"8G\"\n",
    )
    .expect("write the mock accelerator file");
    file.to_str().expect("utf-8 path").to_string()
}

#[test]
fn web_ui_end_to_end_in_chromium() {
    // Resource samples every second, and a utilization checker with a long grace period,
    // so the detail panel has charts and idle checks to show.
    // Two mock GPUs in fractional mode, so the launcher offers fGPU.
    let mock = tempfile::tempdir().expect("tempdir");
    let mock_file = mock_accelerator(mock.path());
    let s = Server::start_with(&[
        ("BAI_MONITOR_INTERVAL_MS", "1000"),
        ("BAI_IDLE_UTILIZATION", "window=3600,grace=600,cpu_util=1"),
        ("BAI_MOCK_ACCELERATOR", &mock_file),
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
    let password_of = |email: &str| s.web_password(email);
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

/// A `baid agent` on this host's engine; dropping it kills it and removes its containers (a
/// killed agent leaves its pool kernels behind).
struct HostAgent {
    name: String,
    child: Option<Child>,
    _data: tempfile::TempDir,
}

impl HostAgent {
    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for HostAgent {
    fn drop(&mut self) {
        self.kill();
        let filter = format!("label=ai.bai.agent={}", self.name);
        if let Ok(out) = Command::new("docker")
            .args(["ps", "-aq", "--filter", &filter])
            .output()
        {
            let ids: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .map(String::from)
                .collect();
            if !ids.is_empty() {
                let _ = Command::new("docker")
                    .args(["rm", "-f"])
                    .args(&ids)
                    .output();
            }
        }
    }
}

/// An image the test made on this host's engine, removed when dropped.
struct Image(String);

impl Drop for Image {
    fn drop(&mut self) {
        let _ = Command::new("docker").args(["rmi", "-f", &self.0]).output();
    }
}

/// How many kernels the agent's warm pools have ready, by `GET /agents`.
fn pool_ready(s: &Server, agent: &str) -> u64 {
    let list = s
        .api(&s.admin, "GET", "/agents", None)
        .expect("GET /agents");
    list["agents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["id"] == agent)
        .flat_map(|a| {
            a["warm_pool"]["pools"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|p| p["ready"].as_u64().unwrap_or(0))
        .sum()
}

#[test]
fn web_ui_layout_at_1280_by_800() {
    // Four agents: the Docker one (with two mock GPUs), two dummy ones (with two MIG
    // instances each: the group has two kinds of GPU), and one on this host that joins, fills
    // its warm pool and is killed (LOST three seconds later).
    let mock = tempfile::tempdir().expect("tempdir");
    let listen = format!("127.0.0.1:{}", free_port());
    // `make test` runs managers without warm pools (BAI_WARM_POOLS=off) unless a test asks.
    let s = Server::start_with(&[
        ("BAI_WARM_POOLS", "on"),
        ("BAI_DUMMY_AGENTS", "2"),
        (
            "BAI_DUMMY_CAPACITY",
            "cpu=2,mem=4g,cuda.device:1g.18gb-mig=2",
        ),
        ("BAI_SCHEDULE_TICK_MS", "200"),
        ("BAI_AGENT_LISTEN", &listen),
        ("BAI_AGENT_LOST_AFTER", "3s"),
        ("BAI_MOCK_ACCELERATOR", &mock_accelerator(mock.path())),
    ]);
    assert!(
        web_dir().join("dist/index.html").is_file(),
        "the web UI is not built (make web)"
    );
    s.bai(
        &s.admin,
        &[
            "admin",
            "resource-group",
            "update",
            "default",
            "--warm-pool",
            "python,cpu=0.5,mem=256m,count=1",
        ],
    )
    .expect_ok();
    let token = join_token(&s);
    let name = format!("layout-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let data = tempfile::Builder::new()
        .prefix("bai-agent-")
        .tempdir()
        .expect("tempdir");
    let log = std::fs::File::create(data.path().join("agent.log")).expect("log");
    let child = agent_command(
        Command::new(bin("baid")),
        &name,
        &listen,
        &token,
        data.path(),
    )
    .stdout(log.try_clone().expect("log"))
    .stderr(log)
    .spawn()
    .expect("spawn baid agent");
    let mut agent = HostAgent {
        name: name.clone(),
        child: Some(child),
        _data: data,
    };
    wait_status(&s, &name, "ALIVE", 120);
    s.wait_for(180, "both Docker agents' warm pools to be ready", || {
        (pool_ready(&s, &name) >= 1 && pool_ready(&s, &s.agent_id) >= 1).then_some(())
    });
    agent.kill();
    wait_status(&s, &name, "LOST", 60);

    // The user's sessions: one running (holding both mock GPUs), one ended by the user, one
    // waiting for a GPU (its reason beside its status).
    let running = "layout-running-notebook-with-a-long-name";
    let ended = "layout-ended-by-the-user";
    let pending = "layout-pending-waits-for-a-gpu";
    let mig = "layout-launched-on-a-mig-instance";
    let start = |name: &str, more: &[&str]| {
        let mut args = vec![
            "start",
            "--enqueue-only",
            "-t",
            name,
            "-r",
            "cpu=0.5",
            "-r",
            "mem=256m",
        ];
        args.extend_from_slice(more);
        args.push("python");
        s.bai(&s.user, &args).expect_ok();
    };
    for (name, more) in [(ended, &[][..]), (running, &["-r", "cuda.shares=2"][..])] {
        start(name, more);
        s.wait_for(180, &format!("{name} to run"), || {
            (s.status(&s.user, name) == "RUNNING").then_some(())
        });
    }
    s.bai(&s.user, &["rm", ended]).expect_ok();
    s.wait_terminated(&s.user, ended, 120);
    start(pending, &["-r", "cuda.shares=1"]);
    s.wait_for(60, "a pending session with a reason", || {
        let i = s.info(&s.user, pending);
        (i["status"] == "PENDING"
            && i["status_info"]
                .as_str()
                .is_some_and(|t| t.contains("short on")))
        .then_some(())
    });
    // Rows on the other pages: data folders, a model service whose replica waits for a GPU,
    // an image made from the running session, a dotfile.
    s.bai(
        &s.user,
        &["vfolder", "create", "layout-data-folder-with-a-long-name"],
    )
    .expect_ok();
    s.bai(
        &s.user,
        &["vfolder", "create", "-m", "model", "layout-model"],
    )
    .expect_ok();
    bai_e2e::model::copy_to(s.work.path(), |t| t).expect("copy the model fixture");
    let mut upload = vec!["vfolder", "upload", "layout-model"];
    upload.extend(bai_e2e::model::FILES);
    s.bai(&s.user, &upload).expect_ok();
    s.bai(
        &s.user,
        &[
            "service",
            "create",
            "-t",
            "layout-service-waiting-for-a-gpu",
            "-r",
            "cpu=0.5",
            "-r",
            "mem=256m",
            "-r",
            "cuda.shares=1",
            "python",
            "layout-model",
            "1",
        ],
    )
    .expect_ok();
    let made = s
        .bai(
            &s.user,
            &["session", "convert-to-image", running, "layoutimg"],
        )
        .expect_ok()
        .stdout
        .clone();
    let _image = Image(
        made.split_whitespace()
            .find(|w| w.contains("-customized_"))
            .unwrap_or_else(|| panic!("no image reference in {made}"))
            .to_string(),
    );
    std::fs::write(s.work.path().join("inputrc"), "set editing-mode vi\n").expect("write");
    s.bai(&s.user, &["dotfile", "create", ".inputrc", "-f", "inputrc"])
        .expect_ok();

    let mut cmd = Command::new("node");
    cmd.arg("e2e/layout.mjs")
        .current_dir(web_dir())
        .env("BAI_URL", &s.endpoint)
        .env("BAI_EMAIL", "user@bai.local")
        .env("BAI_PASSWORD", s.web_password("user@bai.local"))
        .env("BAI_ADMIN_EMAIL", "admin@bai.local")
        .env("BAI_ADMIN_PASSWORD", s.web_password("admin@bai.local"))
        .env("BAI_RUNNING", running)
        .env("BAI_PENDING", pending)
        .env("BAI_ENDED", ended)
        .env("BAI_LOST_AGENT", &name)
        .env("BAI_MIG", mig)
        .env("BAI_AGENTS", "4");
    if let Ok(dir) = std::env::var("BAI_SCREENSHOTS") {
        cmd.env("SCREENSHOTS", dir);
    }
    let out = cmd.output().expect("run the layout test");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}\nbaid log:\n{}", s.log());
    assert!(text.contains("layout: 13 passed"), "{text}");
    // The launcher's choice of GPU kind reached the server: one MIG instance and no fGPU, on
    // a dummy agent (the only ones with MIG instances).
    let i = s.info(&s.user, mig);
    let asked: serde_json::Value =
        serde_json::from_str(i["requested_slots"].as_str().unwrap_or("{}")).expect("slots");
    assert_eq!(asked["cuda.device:1g.18gb-mig"], "1", "{i:#}");
    assert!(asked.get("cuda.shares").is_none(), "{i:#}");
    assert!(
        i["agent"].as_str().is_some_and(|a| a.starts_with("dummy-")),
        "{i:#}"
    );

    // A switch of managers, as the browser sees it (`web/e2e/switching.mjs`): answers of
    // `503 no-leader` waited through with a notice; a create retried with its key, once.
    let mut cmd = Command::new("node");
    cmd.arg("e2e/switching.mjs")
        .current_dir(web_dir())
        .env("BAI_URL", &s.endpoint)
        .env("BAI_EMAIL", "user@bai.local")
        .env("BAI_PASSWORD", s.web_password("user@bai.local"))
        .env("BAI_ENDED", ended);
    if let Ok(dir) = std::env::var("BAI_SCREENSHOTS") {
        cmd.env("SCREENSHOTS", dir);
    }
    let out = cmd.output().expect("run the switching test");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}\nbaid log:\n{}", s.log());
    assert!(text.contains("switching: 3 passed"), "{text}");
}

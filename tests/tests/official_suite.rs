//! The official integration suite, unmodified: `backend.ai test run-cli user` from
//! backend.ai-test 26.9.6 (wire reference §8 A). Its `user` package is `test_vfolder.py`: ten
//! pytest cases that drive the official `backend.ai` CLI through pexpect (create rw/ro folders on
//! `local:volume1`, list as JSON, rename, upload, ls, rename-file, download, mkdir -p/-e, mv,
//! delete, and same-named folders for two users). It runs in its own test binary so nothing else
//! competes with its 5-second pexpect steps.

use bai_e2e::{Account, Server};
use std::path::{Path, PathBuf};
use std::process::Command;

fn venv_bin(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../.venv-official/bin")
        .join(name)
}

/// The suite reads one `export KEY=VALUE` per line, quotes kept, so baid's one-line env files
/// are rewritten in that form.
fn env_file(dir: &Path, name: &str, acct: &Account) -> PathBuf {
    let path = dir.join(name);
    let text: String = [
        "BACKEND_ENDPOINT",
        "BACKEND_ENDPOINT_TYPE",
        "BACKEND_ACCESS_KEY",
        "BACKEND_SECRET_KEY",
    ]
    .iter()
    .map(|k| format!("export {k}={}\n", acct.get(k)))
    .collect();
    std::fs::write(&path, text).expect("write env file");
    path
}

/// The number before `word` in pytest's summary line ("10 passed, 1 failed in 65.2s").
fn count(summary: &str, word: &str) -> u32 {
    let words: Vec<&str> = summary
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .find(|w| w[1] == word)
        .and_then(|w| w[0].parse().ok())
        .unwrap_or(0)
}

#[test]
fn official_run_cli_user_suite_passes() {
    let s = Server::start_dummy(1, "cpu=2,mem=4g");
    let dir = s.work.path().join("suite");
    // The suite finds the CLI at <build root>/backend.ai; the CLI's plugin loader, which also
    // reads BACKEND_BUILD_ROOT, wants <build root>/src to be a directory.
    let root = dir.join("build");
    std::fs::create_dir_all(root.join("src")).expect("build root");
    std::fs::write(root.join("BUILD_ROOT"), "").expect("marker");
    std::os::unix::fs::symlink(venv_bin("backend.ai"), root.join("backend.ai")).expect("symlink");
    let user = env_file(&dir, "env-user.sh", &s.user);
    // The admin account doubles as the second user: it owns folders of its own.
    let user2 = env_file(&dir, "env-user2.sh", &s.admin);
    let mut cmd = Command::new(venv_bin("backend.ai"));
    cmd.args(["test", "run-cli", "user", "--user-file"])
        .arg(&user)
        .arg("--user2-file")
        .arg(&user2)
        .arg("--admin-file")
        .arg(&user2)
        .current_dir(&dir)
        .env("BACKEND_BUILD_ROOT", &root);
    for k in [
        "BACKEND_ENDPOINT",
        "BACKEND_ACCESS_KEY",
        "BACKEND_SECRET_KEY",
        "BACKEND_ENDPOINT_TYPE",
    ] {
        cmd.env_remove(k);
    }
    let out = cmd.output().expect("run backend.ai test run-cli");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary = stdout
        .lines()
        .rev()
        .find(|l| l.contains(" passed") || l.contains(" failed") || l.contains(" error"))
        .unwrap_or_default()
        .to_string();
    let report = format!(
        "summary: {summary}\n{stdout}\n{stderr}\nbaid log:\n{}",
        s.log()
    );
    assert!(
        count(&summary, "passed") >= 10,
        "expected the 10 vfolder cases to pass\n{report}"
    );
    assert_eq!(count(&summary, "failed"), 0, "{report}");
    assert_eq!(count(&summary, "error"), 0, "{report}");
    assert_eq!(count(&summary, "errors"), 0, "{report}");
    assert_eq!(count(&summary, "skipped"), 0, "{report}");
}

#[test]
fn summary_counts_are_read_from_pytest_lines() {
    let line = "=========== 8 passed, 1 failed, 1 skipped in 65.24s (0:01:05) ===========";
    assert_eq!(count(line, "passed"), 8);
    assert_eq!(count(line, "failed"), 1);
    assert_eq!(count(line, "skipped"), 1);
    assert_eq!(count(line, "error"), 0);
}

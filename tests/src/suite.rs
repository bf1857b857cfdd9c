//! Runs Backend.AI's own CLI-integration suites (`backend.ai test run-cli user|admin` from
//! backend.ai-test 26.9.6, wire reference §8 A) unmodified against a server: pytest cases that
//! drive the official `backend.ai` CLI through pexpect.

use crate::{Account, Server, official_client};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The suite reads one `export KEY=VALUE` per line, quotes kept, so baid's one-line env files
/// are rewritten in that form.
fn env_file(dir: &Path, name: &str, acct: &Account) -> PathBuf {
    let path = dir.join(name);
    let text: String = crate::CLIENT_ENV
        .iter()
        .map(|k| format!("export {k}={}\n", acct.get(k)))
        .collect();
    std::fs::write(&path, text).expect("write env file");
    path
}

/// The number before `word` in pytest's summary line ("10 passed, 1 failed in 65.2s").
pub fn count(summary: &str, word: &str) -> u32 {
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

/// What a suite run printed: pytest's summary line and everything for a failure report.
pub struct SuiteRun {
    pub summary: String,
    pub report: String,
}

impl SuiteRun {
    /// Asserts at least `passed` cases passed and none failed, errored or was skipped.
    pub fn assert_all_pass(&self, passed: u32) {
        let s = &self.summary;
        assert!(
            count(s, "passed") >= passed,
            "expected {passed} cases to pass\n{}",
            self.report
        );
        for word in ["failed", "error", "errors", "skipped"] {
            assert_eq!(count(s, word), 0, "{word}:\n{}", self.report);
        }
    }
}

/// Where `bai_patience.py` is: a pytest plugin that gives each of the suites' `backend.ai`
/// commands 120 s instead of 5 s and changes nothing else. The client alone takes 2-3 s to
/// start on an idle 2-core machine, so a busy one missed the 5 s now and then.
fn patience_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/official")
}

/// Runs `backend.ai test run-cli PACKAGE` with the three accounts the suite asks for.
pub fn run_cli(
    s: &Server,
    package: &str,
    user: &Account,
    user2: &Account,
    admin: &Account,
) -> SuiteRun {
    let dir = s.work.path().join(format!("suite-{package}"));
    // The suite finds the CLI at <build root>/backend.ai; the CLI's plugin loader, which also
    // reads BACKEND_BUILD_ROOT, wants <build root>/src to be a directory.
    let root = dir.join("build");
    std::fs::create_dir_all(root.join("src")).expect("build root");
    std::fs::write(root.join("BUILD_ROOT"), "").expect("marker");
    std::os::unix::fs::symlink(official_client(), root.join("backend.ai")).expect("symlink");
    let user = env_file(&dir, "env-user.sh", user);
    let user2 = env_file(&dir, "env-user2.sh", user2);
    let admin = env_file(&dir, "env-admin.sh", admin);
    let mut cmd = Command::new(official_client());
    cmd.args(["test", "run-cli", package, "--user-file"])
        .arg(&user)
        .arg("--user2-file")
        .arg(&user2)
        .arg("--admin-file")
        .arg(&admin)
        .current_dir(&dir)
        .env("BACKEND_BUILD_ROOT", &root)
        // The suites' per-command limit, 5 s, raised (fixtures/official/bai_patience.py).
        .env("PYTEST_PLUGINS", "bai_patience")
        .env("PYTHONPATH", patience_dir());
    for k in crate::CLIENT_ENV {
        cmd.env_remove(k);
    }
    let out = cmd.output().expect("run backend.ai test run-cli");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("bai_patience: "),
        "the suite ran without its patience plugin:\n{stdout}\n{stderr}"
    );
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
    SuiteRun { summary, report }
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn summary_counts_are_read_from_pytest_lines() {
        let line = "=========== 8 passed, 1 failed, 1 skipped in 65.24s (0:01:05) ===========";
        assert_eq!(count(line, "passed"), 8);
        assert_eq!(count(line, "failed"), 1);
        assert_eq!(count(line, "skipped"), 1);
        assert_eq!(count(line, "error"), 0);
    }
}

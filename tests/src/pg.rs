//! A PostgreSQL cluster of one test's own (Debian's postgresql, through
//! `scripts/test-postgres.sh` with a data dir and a port of its own), for a test that restarts
//! the database: the tests' shared cluster must stay up for the tests beside it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A running private cluster; stopped and removed when dropped.
pub struct PrivatePostgres {
    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub url: String,
    dir: tempfile::TempDir,
}

/// The newest installed server's programs.
fn pg_bin() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is installed (scripts/test-postgres.sh)")
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|p| p.join("pg_ctl").exists())
        .collect();
    found.sort_by_key(|p| {
        p.parent()
            .and_then(Path::file_name)
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    found
        .pop()
        .expect("a PostgreSQL server in /usr/lib/postgresql")
}

impl PrivatePostgres {
    pub fn start() -> PrivatePostgres {
        let dir = tempfile::Builder::new()
            .prefix("bai-e2e-pg-")
            .tempdir()
            .expect("tempdir");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/test-postgres.sh");
        let out = Command::new(script)
            .env("BAI_PG_DIR", dir.path())
            .env("BAI_PG_PORT", crate::free_port().to_string())
            .stdin(Stdio::null())
            .output()
            .expect("run scripts/test-postgres.sh");
        assert!(
            out.status.success(),
            "a private PostgreSQL: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let url = String::from_utf8_lossy(&out.stdout).trim().to_string();
        PrivatePostgres { url, dir }
    }

    /// `pg_ctl ARGS` on this cluster, as the postgres user (PostgreSQL refuses root).
    fn pg_ctl(&self, args: &[&str]) -> std::process::Output {
        let data = self.dir.path().join("data");
        let mut cmd = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"])
                .arg(pg_bin().join("pg_ctl"));
            c
        } else {
            Command::new(pg_bin().join("pg_ctl"))
        };
        cmd.arg("-D")
            .arg(data)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run pg_ctl")
    }

    /// Restarts the server: every connection is ended (`-m fast`), then it serves again.
    pub fn restart(&self) {
        // Its output to its log file: a server holding pg_ctl's pipes open would hang here.
        let log = self.dir.path().join("server.log");
        let log = log.to_str().expect("a UTF-8 path");
        let out = self.pg_ctl(&["-w", "-t", "60", "-m", "fast", "-l", log, "restart"]);
        assert!(
            out.status.success(),
            "pg_ctl restart: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let _ = self.pg_ctl(&["-w", "-m", "immediate", "stop"]);
    }
}

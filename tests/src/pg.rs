//! A PostgreSQL cluster of one test's own (Debian's postgresql, through
//! `scripts/test-postgres.sh` with a data dir and a port of its own), for a test that restarts
//! the database: the tests' shared cluster must stay up for the tests beside it.

use std::path::Path;
use std::process::{Command, Stdio};

/// A running private cluster; stopped and removed when dropped.
pub struct PrivatePostgres {
    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub url: String,
    port: u16,
    dir: tempfile::TempDir,
}

impl PrivatePostgres {
    pub fn start() -> PrivatePostgres {
        let dir = tempfile::Builder::new()
            .prefix("bai-e2e-pg-")
            .tempdir()
            .expect("tempdir");
        let mut pg = PrivatePostgres {
            url: String::new(),
            port: crate::free_port(),
            dir,
        };
        pg.url = pg.script(None);
        pg
    }

    /// `scripts/test-postgres.sh [ACTION]` on this cluster.
    fn command(&self, action: Option<&str>) -> Command {
        let mut cmd =
            Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/test-postgres.sh"));
        cmd.args(action)
            .env("BAI_PG_DIR", self.dir.path())
            .env("BAI_PG_PORT", self.port.to_string())
            .stdin(Stdio::null());
        cmd
    }

    /// Runs [`Self::command`]; what it printed (the cluster's URL).
    fn script(&self, action: Option<&str>) -> String {
        let out = self
            .command(action)
            .output()
            .expect("run scripts/test-postgres.sh");
        assert!(
            out.status.success(),
            "scripts/test-postgres.sh {}: {}",
            action.unwrap_or(""),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Restarts the server: every connection is ended (`-m fast`), then it serves again.
    pub fn restart(&self) {
        self.script(Some("restart"));
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let _ = self.command(Some("stop")).output();
    }
}

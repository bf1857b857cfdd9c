//! What one command did: its exit code and output, and the checks tests make of them.

use std::process::Output;

/// The outcome of one command.
#[derive(Debug, Clone)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub cmd: String,
}

impl Run {
    /// The outcome of a command run elsewhere (`cmd`: how it is named in failures).
    pub fn of(o: Output, cmd: String) -> Run {
        Self::from(o, cmd)
    }

    pub(crate) fn from(o: Output, cmd: String) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            cmd,
        }
    }
    pub fn ok(&self) -> bool {
        self.code == 0
    }
    #[track_caller]
    pub fn expect_ok(&self) -> &Run {
        assert!(self.ok(), "command failed: {self:#?}");
        self
    }
    #[track_caller]
    pub fn expect_fail(&self, needle: &str) -> &Run {
        assert!(!self.ok(), "command should have failed: {self:#?}");
        assert!(
            self.stderr.to_lowercase().contains(&needle.to_lowercase()),
            "stderr should mention {needle:?}: {self:#?}"
        );
        self
    }
}

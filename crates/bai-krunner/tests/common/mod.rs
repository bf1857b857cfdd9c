//! What the runner's integration tests share.

use std::path::PathBuf;
use std::process::Child;

/// A runner started by a test and its directory: killed and removed on drop.
pub struct Runner(pub Child, pub PathBuf);

impl Drop for Runner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        let _ = std::fs::remove_dir_all(&self.1);
    }
}

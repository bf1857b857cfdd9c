//! The SSH server of kernels whose image has none: Dropbear and OpenSSH's sftp-server,
//! static (`scripts/build-sshd.sh`), kept beside the runner as `bai-dropbear` and
//! `bai-sftp-server` and mounted read-only beside it in every kernel (Docker: binds;
//! Kubernetes on the node: hostPath files; a detached pod's init container copies them from
//! the agent's image with the runner). The runner starts it when the image has no
//! `/usr/sbin/sshd` (`bai-krunner/src/apps.rs`). Absent files are left out: such kernels
//! have no SSH app, as before.

use std::path::{Path, PathBuf};

/// Each file: its name beside the runner, where it goes inside a kernel.
pub const FILES: [(&str, &str); 2] = [
    ("bai-dropbear", "/opt/bai/bin/dropbear"),
    ("bai-sftp-server", "/opt/bai/bin/sftp-server"),
];

/// The files beside `krunner` that exist: where they are, where they go inside a kernel.
pub fn beside(krunner: &Path) -> Vec<(PathBuf, &'static str)> {
    FILES
        .iter()
        .map(|(name, inside)| (krunner.with_file_name(name), *inside))
        .filter(|(host, _)| host.is_file())
        .collect()
}

/// Their read-only Docker binds.
pub fn binds(krunner: &Path) -> Vec<String> {
    crate::kernel_files::etc::read_only_binds(beside(krunner))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_files_that_are_there_are_bound() {
        let dir = tempfile::tempdir().unwrap();
        let krunner = dir.path().join("bai-krunner");
        assert!(binds(&krunner).is_empty());
        std::fs::write(dir.path().join("bai-dropbear"), b"x").unwrap();
        let b = binds(&krunner);
        assert_eq!(
            b,
            [format!(
                "{}:/opt/bai/bin/dropbear:ro",
                dir.path().join("bai-dropbear").display()
            )]
        );
    }
}

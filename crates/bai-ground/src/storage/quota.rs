//! Folder directories on their hosts: creation, removal, and folders with a quota, which are
//! filesystems of their own (an ext4 image, loop-mounted). These run system tools and walk
//! directories: from async code, call them through their `*_async` variants, never
//! directly.

use super::files::own;
use super::{Storage, io};
use bai_core::Problem;
use bai_store::VFolderRow;
use std::path::{Path, PathBuf};

impl Storage {
    /// The image file holding a folder with a quota.
    fn image(&self, v: &VFolderRow) -> Result<PathBuf, Problem> {
        Ok(self.root_of(v)?.join(format!("{}.img", v.id.simple())))
    }

    /// Creates the folder's directory on its host. With a quota, the folder is a filesystem of
    /// exactly that size (an ext4 image, loop-mounted), so writes past it fail everywhere —
    /// in sessions and in uploads — with "no space left on device".
    pub fn create(&self, v: &VFolderRow) -> Result<PathBuf, Problem> {
        let dir = self.folder_dir(v)?;
        std::fs::create_dir_all(&dir).map_err(|e| io("the folder", e))?;
        if let Some(q) = v.quota_bytes {
            let img = self.image(v)?;
            let f = std::fs::File::create(&img).map_err(|e| io("the quota image", e))?;
            f.set_len(q).map_err(|e| io("the quota image", e))?;
            drop(f);
            run(
                "mkfs.ext4",
                &[
                    "-q",
                    "-F",
                    "-m",
                    "0",
                    "-O",
                    "^has_journal",
                    &img.to_string_lossy(),
                ],
            )?;
            self.mount_quota(v)?;
            let _ = std::fs::remove_dir(dir.join("lost+found"));
        }
        own(&dir);
        Ok(dir)
    }

    /// Mounts a quota folder's filesystem (at creation and when baid starts).
    pub fn mount_quota(&self, v: &VFolderRow) -> Result<(), Problem> {
        let dir = self.folder_dir(v)?;
        if is_mountpoint(&dir) {
            return Ok(());
        }
        std::fs::create_dir_all(&dir).map_err(|e| io("the folder", e))?;
        run(
            "mount",
            &[
                "-o",
                "loop",
                &self.image(v)?.to_string_lossy(),
                &dir.to_string_lossy(),
            ],
        )
    }

    /// Removes the folder's directory (and its filesystem, unmounted first, with a quota).
    pub fn remove(&self, v: &VFolderRow) -> Result<(), Problem> {
        let dir = self.folder_dir(v)?;
        if is_mountpoint(&dir) {
            run("umount", &["-l", &dir.to_string_lossy()])?;
        }
        let _ = std::fs::remove_file(self.image(v)?);
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io("the folder", e)),
        }
    }
}

/// Runs a system tool; its stderr becomes the error.
fn run(cmd: &str, args: &[&str]) -> Result<(), Problem> {
    let out = std::process::Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| Problem::internal(format!("cannot run {cmd}: {e}")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(Problem::internal(format!(
            "{cmd} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// Whether `p` is a mount point (its device differs from its parent's).
fn is_mountpoint(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(p), p.parent().map(std::fs::metadata)) {
        (Ok(a), Some(Ok(b))) => a.dev() != b.dev(),
        _ => false,
    }
}

//! The local storage host of data folders: one directory per folder under
//! `$BAI_DATA_DIR/volumes/volume1`, owned by the kernels' `work` user (uid/gid 1000) so that
//! sessions and the API read and write the same files.
//!
//! Every user path goes through [`bai_core::vpath::confine`] and then [`Storage::resolve`],
//! which refuses to follow any symlink on the way, so nothing outside the folder is reachable.

use bai_core::Problem;
use bai_core::vpath::{confine, confine_name};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use uuid::Uuid;

/// The storage host name clients see.
pub const HOST: &str = "local:volume1";
/// Owner of folder contents (the kernel image's `work` user).
pub const WORK_UID: u32 = 1000;

/// A pending upload or download, reached by an unsigned URL with a token.
#[derive(Debug, Clone)]
pub struct Transfer {
    pub vfolder: Uuid,
    pub path: PathBuf,
    pub size: u64,
    pub upload: bool,
    pub expires: std::time::Instant,
}

#[derive(Debug, Clone)]
pub struct Storage {
    pub root: PathBuf,
}

fn bad(e: impl std::fmt::Display) -> Problem {
    Problem::invalid(e.to_string())
}

fn io(what: &str, e: std::io::Error) -> Problem {
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            Problem::not_found("file", format!("{what}: no such file or directory"))
        }
        std::io::ErrorKind::AlreadyExists => Problem::conflict(
            "file-exists",
            "The file exists.",
            format!("{what} already exists"),
        ),
        _ => Problem::internal(format!("{what}: {e}")),
    }
}

fn iso(t: std::io::Result<SystemTime>) -> String {
    t.ok()
        .map(|t| chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339())
        .unwrap_or_default()
}

impl Storage {
    pub fn new(data_dir: &Path) -> Storage {
        Storage {
            root: data_dir.join("volumes").join("volume1"),
        }
    }

    pub fn folder_dir(&self, id: Uuid) -> PathBuf {
        self.root.join(id.simple().to_string())
    }

    /// The image file holding a folder with a quota.
    fn image(&self, id: Uuid) -> PathBuf {
        self.root.join(format!("{}.img", id.simple()))
    }

    /// Creates the folder's directory. With a quota, the folder is a filesystem of exactly
    /// that size (an ext4 image, loop-mounted), so writes past it fail everywhere — in
    /// sessions and in uploads — with "no space left on device".
    pub fn create(&self, id: Uuid, quota: Option<u64>) -> Result<PathBuf, Problem> {
        let dir = self.folder_dir(id);
        std::fs::create_dir_all(&dir).map_err(|e| io("the folder", e))?;
        if let Some(q) = quota {
            let img = self.image(id);
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
            self.mount_quota(id)?;
            let _ = std::fs::remove_dir(dir.join("lost+found"));
        }
        own(&dir);
        Ok(dir)
    }

    /// Mounts a quota folder's filesystem (at creation and when baid starts).
    pub fn mount_quota(&self, id: Uuid) -> Result<(), Problem> {
        let dir = self.folder_dir(id);
        if is_mountpoint(&dir) {
            return Ok(());
        }
        std::fs::create_dir_all(&dir).map_err(|e| io("the folder", e))?;
        run(
            "mount",
            &[
                "-o",
                "loop",
                &self.image(id).to_string_lossy(),
                &dir.to_string_lossy(),
            ],
        )
    }

    pub fn remove(&self, id: Uuid) -> Result<(), Problem> {
        let dir = self.folder_dir(id);
        if is_mountpoint(&dir) {
            run("umount", &["-l", &dir.to_string_lossy()])?;
        }
        let _ = std::fs::remove_file(self.image(id));
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io("the folder", e)),
        }
    }

    /// The absolute path of `rel` inside folder `id`; no symlink is followed on the way.
    pub fn resolve(&self, id: Uuid, rel: &str) -> Result<PathBuf, Problem> {
        let rel = confine(rel).map_err(bad)?;
        let base = self.folder_dir(id);
        let mut cur = base.clone();
        for c in rel.components() {
            cur.push(c);
            if let Ok(md) = std::fs::symlink_metadata(&cur)
                && md.file_type().is_symlink()
            {
                return Err(Problem::invalid(format!(
                    "{} is a symbolic link; links are not followed in data folders",
                    rel.display()
                )));
            }
        }
        Ok(cur)
    }

    /// `{"items": [{name, type, size, mode, created, modified}]}` of a directory.
    pub fn list(&self, id: Uuid, rel: &str) -> Result<Value, Problem> {
        let dir = self.resolve(id, rel)?;
        let mut items = Vec::new();
        let rd = std::fs::read_dir(&dir).map_err(|e| io(rel, e))?;
        for entry in rd.flatten() {
            let Ok(md) = entry.metadata() else { continue };
            let ty = if md.file_type().is_symlink() {
                "SYMLINK"
            } else if md.is_dir() {
                "DIRECTORY"
            } else {
                "FILE"
            };
            use std::os::unix::fs::PermissionsExt;
            items.push(json!({
                "name": entry.file_name().to_string_lossy(),
                "type": ty,
                "size": md.len(),
                "mode": format!("{:o}", md.permissions().mode() & 0o7777),
                "created": iso(md.created().or_else(|_| md.modified())),
                "modified": iso(md.modified()),
            }));
        }
        items.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        Ok(json!({ "items": items }))
    }

    /// Creates directories; answers the official client's `{results: {success, failed}}`.
    pub fn mkdir(&self, id: Uuid, paths: &[String], parents: bool, exist_ok: bool) -> Value {
        let mut ok = Vec::new();
        let mut failed = Vec::new();
        for p in paths {
            let r = self.resolve(id, p).and_then(|abs| {
                let res = if parents {
                    std::fs::create_dir_all(&abs)
                } else {
                    std::fs::create_dir(&abs)
                };
                match res {
                    Ok(()) => {
                        own_tree(&self.folder_dir(id), &abs);
                        Ok(())
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && exist_ok => Ok(()),
                    Err(e) => Err(io(p, e)),
                }
            });
            match r {
                Ok(()) => ok.push(json!({"item": p, "msg": null})),
                Err(e) => failed.push(json!({"item": p, "msg": e.msg})),
            }
        }
        json!({"results": {"success": ok, "failed": failed}})
    }

    pub fn rename_file(&self, id: Uuid, target: &str, new_name: &str) -> Result<(), Problem> {
        let from = self.resolve(id, target)?;
        let name = confine_name(new_name).map_err(bad)?;
        let to = from
            .parent()
            .map(|p| p.join(&name))
            .ok_or_else(|| Problem::invalid("the folder itself cannot be renamed here"))?;
        if from == self.folder_dir(id) {
            return Err(Problem::invalid(
                "give a file or directory inside the folder",
            ));
        }
        if to.exists() {
            return Err(io(new_name, std::io::ErrorKind::AlreadyExists.into()));
        }
        std::fs::rename(&from, &to).map_err(|e| io(target, e))
    }

    pub fn move_file(&self, id: Uuid, src: &str, dst: &str) -> Result<(), Problem> {
        let from = self.resolve(id, src)?;
        let mut to = self.resolve(id, dst)?;
        if from == self.folder_dir(id) {
            return Err(Problem::invalid(
                "give a file or directory inside the folder",
            ));
        }
        if to.is_dir()
            && let Some(n) = from.file_name()
        {
            to = to.join(n);
        }
        if to.starts_with(&from) {
            return Err(Problem::invalid(format!("cannot move {src} into itself")));
        }
        std::fs::rename(&from, &to).map_err(|e| io(src, e))
    }

    pub fn delete_files(&self, id: Uuid, files: &[String], recursive: bool) -> Result<(), Problem> {
        // Check everything before removing anything.
        let mut paths = Vec::new();
        for f in files {
            let p = self.resolve(id, f)?;
            if p == self.folder_dir(id) {
                return Err(Problem::invalid(
                    "the folder itself cannot be deleted this way",
                ));
            }
            let md = std::fs::symlink_metadata(&p).map_err(|e| io(f, e))?;
            if md.is_dir() && !recursive {
                return Err(Problem::invalid(format!(
                    "{f} is a directory: delete it with recursive (rm -r)"
                )));
            }
            paths.push((p, md.is_dir()));
        }
        for (p, dir) in paths {
            let r = if dir {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
            r.map_err(|e| io(&p.to_string_lossy(), e))?;
        }
        Ok(())
    }

    /// Number of files and bytes in a folder (for info).
    pub fn usage(&self, id: Uuid) -> (u64, u64) {
        fn walk(p: &Path, n: &mut u64, b: &mut u64) {
            let Ok(rd) = std::fs::read_dir(p) else { return };
            for e in rd.flatten() {
                let Ok(md) = e.metadata() else { continue };
                if md.is_dir() {
                    walk(&e.path(), n, b);
                } else {
                    *n += 1;
                    *b += md.len();
                }
            }
        }
        let (mut n, mut b) = (0, 0);
        walk(&self.folder_dir(id), &mut n, &mut b);
        (n, b)
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

/// Hands a path to the kernels' `work` user (best effort: needs root).
pub fn own(p: &Path) {
    let _ = std::os::unix::fs::lchown(p, Some(WORK_UID), Some(WORK_UID));
}

/// [`own`] for `p` and every directory between the folder root and it.
pub fn own_tree(root: &Path, p: &Path) {
    let mut cur = p.to_path_buf();
    while cur.starts_with(root) && cur != root {
        own(&cur);
        if !cur.pop() {
            break;
        }
    }
}

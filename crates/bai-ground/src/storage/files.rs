//! Files inside a folder: confined path resolution, listing, directories, renames, moves,
//! deletion and usage. Every user path goes through [`Storage::resolve`]. Listing, deleting
//! and usage read or walk directories: from async code, run them through
//! [`Storage::blocking`] (or `usage_async`).

use super::{Storage, WORK_UID, bad, io};
use bai_core::Problem;
use bai_core::files::{FileEntry, FileType, Listing, MkdirAnswer, MkdirItem, MkdirResults};
use bai_core::vpath::{confine, confine_name};
use bai_store::VFolderRow;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

fn iso(t: std::io::Result<SystemTime>) -> String {
    t.ok()
        .map(|t| chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339())
        .unwrap_or_default()
}

impl Storage {
    /// The absolute path of `rel` inside folder `v`; no symlink is followed on the way.
    pub fn resolve(&self, v: &VFolderRow, rel: &str) -> Result<PathBuf, Problem> {
        let base = self.folder_dir(v)?;
        let rel = confine(rel).map_err(bad)?;
        let mut cur = base;
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

    /// The entries of a directory, by name.
    pub fn list(&self, v: &VFolderRow, rel: &str) -> Result<Listing, Problem> {
        let dir = self.resolve(v, rel)?;
        let mut items = Vec::new();
        let rd = std::fs::read_dir(&dir).map_err(|e| io(rel, e))?;
        for entry in rd.flatten() {
            let Ok(md) = entry.metadata() else { continue };
            let kind = if md.file_type().is_symlink() {
                FileType::Symlink
            } else if md.is_dir() {
                FileType::Directory
            } else {
                FileType::File
            };
            use std::os::unix::fs::PermissionsExt;
            items.push(FileEntry {
                name: entry.file_name().to_string_lossy().into_owned(),
                kind,
                size: md.len(),
                mode: format!("{:o}", md.permissions().mode() & 0o7777),
                created: iso(md.created().or_else(|_| md.modified())),
                modified: iso(md.modified()),
            });
        }
        items.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Listing { items })
    }

    /// Creates directories; answers the official client's `{results: {success, failed}}`.
    pub fn mkdir(
        &self,
        v: &VFolderRow,
        paths: &[String],
        parents: bool,
        exist_ok: bool,
    ) -> Result<MkdirAnswer, Problem> {
        let base = self.folder_dir(v)?;
        let mut ok = Vec::new();
        let mut failed = Vec::new();
        for p in paths {
            if bai_core::vpath::confine(p).is_ok_and(|rel| rel.as_os_str().is_empty()) {
                failed.push(MkdirItem {
                    item: p.clone(),
                    msg: Some(
                        "an empty path names the folder itself; give the directory to make".into(),
                    ),
                });
                continue;
            }
            let r = self.resolve(v, p).and_then(|abs| {
                let res = if parents {
                    std::fs::create_dir_all(&abs)
                } else {
                    std::fs::create_dir(&abs)
                };
                match res {
                    Ok(()) => {
                        own_tree(&base, &abs);
                        Ok(())
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && exist_ok => Ok(()),
                    Err(e) => Err(io(p, e)),
                }
            });
            match r {
                Ok(()) => ok.push(MkdirItem {
                    item: p.clone(),
                    msg: None,
                }),
                Err(e) => failed.push(MkdirItem {
                    item: p.clone(),
                    msg: Some(e.msg),
                }),
            }
        }
        Ok(MkdirAnswer {
            results: MkdirResults {
                success: ok,
                failed,
            },
        })
    }

    pub fn rename_file(&self, v: &VFolderRow, target: &str, new_name: &str) -> Result<(), Problem> {
        let from = self.resolve(v, target)?;
        let name = confine_name(new_name).map_err(bad)?;
        let to = from
            .parent()
            .map(|p| p.join(&name))
            .ok_or_else(|| Problem::invalid("the folder itself cannot be renamed here"))?;
        if from == self.folder_dir(v)? {
            return Err(Problem::invalid(
                "give a file or directory inside the folder",
            ));
        }
        if to.exists() {
            return Err(io(new_name, std::io::ErrorKind::AlreadyExists.into()));
        }
        std::fs::rename(&from, &to).map_err(|e| io(target, e))
    }

    pub fn move_file(&self, v: &VFolderRow, src: &str, dst: &str) -> Result<(), Problem> {
        let from = self.resolve(v, src)?;
        let mut to = self.resolve(v, dst)?;
        if from == self.folder_dir(v)? {
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

    pub fn delete_files(
        &self,
        v: &VFolderRow,
        files: &[String],
        recursive: bool,
    ) -> Result<(), Problem> {
        let base = self.folder_dir(v)?;
        // Check everything before removing anything.
        let mut paths = Vec::new();
        for f in files {
            let p = self.resolve(v, f)?;
            if p == base {
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
    pub fn usage(&self, v: &VFolderRow) -> Result<(u64, u64), Problem> {
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
        walk(&self.folder_dir(v)?, &mut n, &mut b);
        Ok((n, b))
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

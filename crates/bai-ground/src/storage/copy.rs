//! Copying one folder's files into another (a clone). Symlinks are copied as links, never
//! followed, so nothing outside the source folder is read; special files are skipped.
//! Blocking: from async code, run it through [`Storage::blocking`].

use super::files::own;
use super::{Storage, io};
use bai_core::Problem;
use bai_store::VFolderRow;
use std::path::Path;

/// How far a copy is: files copied of files found.
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64);

impl Storage {
    /// Copies every file of `src` into the (new, empty) folder `dst`; `progress` hears each
    /// file copied. Returns the number of files copied.
    pub fn copy_folder(
        &self,
        src: &VFolderRow,
        dst: &VFolderRow,
        progress: Progress<'_>,
    ) -> Result<u64, Problem> {
        let from = self.folder_dir(src)?;
        let to = self.folder_dir(dst)?;
        let total = count(&from);
        let mut done = 0;
        copy_dir(&from, &to, &mut |_| {
            done += 1;
            progress(done, total);
        })?;
        Ok(done)
    }
}

fn count(dir: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    rd.flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => count(&e.path()),
            Ok(t) if t.is_file() || t.is_symlink() => 1,
            _ => 0,
        })
        .sum()
}

fn copy_dir(from: &Path, to: &Path, each: &mut dyn FnMut(&Path)) -> Result<(), Problem> {
    let rd = std::fs::read_dir(from).map_err(|e| io("the source folder", e))?;
    for e in rd {
        let e = e.map_err(|e| io("the source folder", e))?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let t = e.file_type().map_err(|e| io("a source file", e))?;
        if t.is_dir() {
            std::fs::create_dir(&dst).map_err(|e| io("a folder of the clone", e))?;
            copy_dir(&src, &dst, each)?;
        } else if t.is_symlink() {
            let target = std::fs::read_link(&src).map_err(|e| io("a source link", e))?;
            std::os::unix::fs::symlink(&target, &dst).map_err(|e| io("a link of the clone", e))?;
            each(&dst);
        } else if t.is_file() {
            std::fs::copy(&src, &dst).map_err(|e| io("a file of the clone", e))?;
            each(&dst);
        } else {
            continue;
        }
        own(&dst);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_files_and_directories_and_keeps_links_as_links() {
        let t = tempfile::tempdir().expect("tempdir");
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        std::fs::create_dir_all(a.join("nested/deeper")).expect("mkdir");
        std::fs::create_dir(&b).expect("mkdir");
        std::fs::write(a.join("one.txt"), "1").expect("write");
        std::fs::write(a.join("nested/deeper/two.txt"), "22").expect("write");
        std::os::unix::fs::symlink("/etc/passwd", a.join("outside")).expect("link");
        let mut seen = 0;
        copy_dir(&a, &b, &mut |_| seen += 1).expect("copy");
        assert_eq!(seen, 3);
        assert_eq!(count(&a), 3);
        assert_eq!(
            std::fs::read_to_string(b.join("one.txt")).expect("read"),
            "1"
        );
        assert_eq!(
            std::fs::read_to_string(b.join("nested/deeper/two.txt")).expect("read"),
            "22"
        );
        let link = b.join("outside");
        assert!(std::fs::symlink_metadata(&link).expect("meta").is_symlink());
        assert_eq!(
            std::fs::read_link(&link).expect("link"),
            Path::new("/etc/passwd")
        );
    }
}

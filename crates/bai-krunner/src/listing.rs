//! `{"op":"list-files","path":…}`: one directory of the kernel, as its user sees it (mounted
//! folders included), in Backend.AI's shape: `[{"filename","size","mode","mtime"}]` with
//! `mode` like `-rw-r--r--` and `mtime` in epoch seconds. A relative path is taken under the
//! working directory. Links are listed, not followed.

use serde::Serialize;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

#[derive(Debug, Serialize, PartialEq)]
pub struct Entry {
    pub filename: String,
    pub size: u64,
    pub mode: String,
    pub mtime: f64,
}

/// `ls -l`'s mode column for `meta`.
pub fn mode_string(meta: &std::fs::Metadata) -> String {
    let t = meta.file_type();
    let kind = if t.is_dir() {
        'd'
    } else if t.is_symlink() {
        'l'
    } else if t.is_fifo() {
        'p'
    } else if t.is_socket() {
        's'
    } else if t.is_char_device() {
        'c'
    } else if t.is_block_device() {
        'b'
    } else {
        '-'
    };
    let bits = meta.permissions().mode();
    let mut s = String::with_capacity(10);
    s.push(kind);
    for shift in [6u32, 3, 0] {
        let b = (bits >> shift) & 7;
        s.push(if b & 4 != 0 { 'r' } else { '-' });
        s.push(if b & 2 != 0 { 'w' } else { '-' });
        s.push(if b & 1 != 0 { 'x' } else { '-' });
    }
    s
}

/// Where `path` points: itself when absolute, else under `workdir`.
pub fn resolve(workdir: &Path, path: &str) -> PathBuf {
    let p = Path::new(if path.is_empty() { "." } else { path });
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        workdir.join(p)
    }
}

/// The entries of the directory at `dir`, by name.
pub fn list(dir: &Path) -> std::io::Result<Vec<Entry>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue; // gone meanwhile
        };
        out.push(Entry {
            filename: e.file_name().to_string_lossy().into_owned(),
            size: meta.len(),
            mode: mode_string(&meta),
            mtime: meta.mtime() as f64 + f64::from(meta.mtime_nsec() as u32) / 1e9,
        });
    }
    out.sort_by(|a, b| a.filename.cmp(&b.filename));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_names_sizes_and_modes_without_following_links() {
        let dir = std::env::temp_dir().join(format!("krunner-ls-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).expect("dir");
        std::fs::write(dir.join("a.txt"), "hello").expect("file");
        std::fs::set_permissions(dir.join("a.txt"), std::fs::Permissions::from_mode(0o640))
            .expect("chmod");
        std::os::unix::fs::symlink("/etc/passwd", dir.join("link")).expect("link");
        let got: Vec<(String, u64, String)> = list(&dir)
            .expect("list")
            .into_iter()
            .map(|e| (e.filename, e.size, e.mode))
            .collect();
        assert_eq!(got[0], ("a.txt".into(), 5, "-rw-r-----".into()));
        assert_eq!(got[1].0, "link");
        assert!(got[1].2.starts_with('l'), "{got:?}");
        assert!(got[2].2.starts_with('d'), "{got:?}");
        assert_eq!(
            resolve(Path::new("/home/work"), ""),
            Path::new("/home/work/.")
        );
        assert_eq!(resolve(Path::new("/home/work"), "/tmp"), Path::new("/tmp"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

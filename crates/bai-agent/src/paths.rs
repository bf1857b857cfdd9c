//! Per-kernel host directories and confinement of user-given paths.

use std::path::{Component, Path, PathBuf};
use uuid::Uuid;

/// `data_dir/kernels/<kernel_id>/{work,run}`: `work` becomes /home/work (the scratch dir,
/// deleted with the kernel), `run` holds the krunner socket.
#[derive(Debug, Clone)]
pub struct KernelDirs {
    pub root: PathBuf,
    pub work: PathBuf,
    pub run: PathBuf,
    pub socket: PathBuf,
}

/// Longest Unix socket path the kernel accepts (`sun_path` is 108 bytes with the NUL).
const MAX_SOCKET_PATH: usize = 107;

impl KernelDirs {
    pub fn new(data_dir: &Path, kernel_id: Uuid) -> KernelDirs {
        Self::under(&data_dir.join("kernels"), kernel_id)
    }

    /// The same layout under `parent/<id>` (a pool kernel's, under `data_dir/pool`).
    pub fn under(parent: &Path, id: Uuid) -> KernelDirs {
        let root = parent.join(id.to_string());
        KernelDirs {
            work: root.join("work"),
            run: root.join("run"),
            socket: root.join("run").join("krunner.sock"),
            root,
        }
    }

    /// Unix socket paths are short; a deep data directory would make every kernel fail.
    pub fn check_socket_path(&self) -> Result<(), String> {
        let len = self.socket.as_os_str().len();
        if len > MAX_SOCKET_PATH {
            return Err(format!(
                "the kernel socket path {} is {len} bytes long, over the limit of \
                 {MAX_SOCKET_PATH}: choose a shorter data directory",
                self.socket.display()
            ));
        }
        Ok(())
    }
}

/// Makes the data directory's `kernels` directory and gives the data directory back made
/// absolute: what both backends do with it when they start.
pub fn prepare_data_dir(data_dir: &Path) -> Result<PathBuf, String> {
    let kernels = data_dir.join("kernels");
    std::fs::create_dir_all(&kernels)
        .map_err(|e| format!("cannot create {}: {e}", kernels.display()))?;
    std::fs::canonicalize(data_dir).map_err(|e| format!("cannot use {}: {e}", data_dir.display()))
}

/// Joins a user-given relative path under `base`, refusing anything that could escape it.
pub fn confined_join(base: &Path, rel: &str) -> Result<PathBuf, String> {
    if rel.contains('\0') {
        return Err("the path contains a NUL byte".into());
    }
    let p = Path::new(rel);
    let mut out = base.to_path_buf();
    let mut depth = 0;
    for c in p.components() {
        match c {
            Component::Normal(n) => {
                out.push(n);
                depth += 1;
            }
            Component::CurDir => {}
            Component::ParentDir => return Err(format!("{rel:?} must not contain '..'")),
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!("{rel:?} must be a relative path"));
            }
        }
    }
    if depth == 0 {
        return Err(format!("{rel:?} names no file"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside() {
        let base = Path::new("/data/k/work");
        assert_eq!(
            confined_join(base, "a/b.py").unwrap(),
            Path::new("/data/k/work/a/b.py")
        );
        assert_eq!(
            confined_join(base, "./x").unwrap(),
            Path::new("/data/k/work/x")
        );
        assert!(confined_join(base, "../etc/passwd").is_err());
        assert!(confined_join(base, "a/../../x").is_err());
        assert!(confined_join(base, "/etc/passwd").is_err());
        assert!(confined_join(base, "a\0b").is_err());
        assert!(confined_join(base, ".").is_err());
        assert!(confined_join(base, "").is_err());
    }

    #[test]
    fn socket_paths_must_be_short() {
        let k = Uuid::nil();
        assert!(
            KernelDirs::new(Path::new("/var/lib/bai"), k)
                .check_socket_path()
                .is_ok()
        );
        let deep = "/x".repeat(40);
        assert!(
            KernelDirs::new(Path::new(&deep), k)
                .check_socket_path()
                .is_err()
        );
    }
}

//! Files the agent mounts read-only into every kernel's `/etc`, written once into the agent's
//! data directory (`etc/`) when it connects:
//! - the system tmux configuration ([`TMUX_CONF`] at `/etc/tmux.conf`): the web terminal's
//!   defaults (the mouse on), which a user's own `~/.tmux.conf` adds to or changes;
//! - a login-shell hook ([`PROFILE`] in `/etc/profile.d/`): Debian's `/etc/profile` sets `PATH`
//!   anew for every login shell (the web terminal's tmux windows, an SSH login), which would
//!   drop the session's own variables (a user's `PATH`, the GPU driver's directories). The hook
//!   sources what krunner wrote of the kernel's environment (`/opt/bai/run/environ.sh`) after
//!   `/etc/profile`'s defaults and before the user's `~/.profile`, which may still add to it.

use crate::error::runtime;
use bai_core::agent::AgentError;
use std::path::{Path, PathBuf};

/// The system tmux configuration of every kernel.
pub const TMUX_CONF: &str = "# bai's defaults for the web terminal; ~/.tmux.conf adds to them.\n\
set -g mouse on\n";

/// The login-shell hook of every kernel.
pub const PROFILE: &str = "# bai: the session's environment (its variables, PATH among them) over /etc/profile's\n\
# defaults; ~/.profile runs after this and may add to it.\n\
if [ -r /opt/bai/run/environ.sh ]; then . /opt/bai/run/environ.sh; fi\n";

/// Where each file goes inside a kernel.
const FILES: [(&str, &str, &str); 2] = [
    ("tmux.conf", "/etc/tmux.conf", TMUX_CONF),
    ("profile.sh", "/etc/profile.d/zz-bai-environ.sh", PROFILE),
];

/// Writes the files under `data_dir/etc` (again when their text changed).
pub fn write(data_dir: &Path) -> Result<(), AgentError> {
    let dir = data_dir.join("etc");
    std::fs::create_dir_all(&dir)
        .map_err(|e| runtime(format_args!("cannot create {}", dir.display()), e))?;
    for (name, _, text) in FILES {
        let p = dir.join(name);
        if std::fs::read_to_string(&p).is_ok_and(|t| t == text) {
            continue;
        }
        let tmp = dir.join(format!(".{name}.new"));
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &p))
            .map_err(|e| runtime(format_args!("cannot write {}", p.display()), e))?;
    }
    Ok(())
}

/// Each file: where it is on the node, where it goes inside a kernel (read-only).
pub fn files(data_dir: &Path) -> Vec<(PathBuf, &'static str)> {
    FILES
        .iter()
        .map(|(name, inside, _)| (data_dir.join("etc").join(name), *inside))
        .collect()
}

/// Each file: its name, where it goes inside a kernel, its text (for a kernel whose files
/// travel in its own Secret: Kubernetes with `--runner-reach network`).
pub fn texts() -> [(&'static str, &'static str, &'static str); 2] {
    FILES
}

/// The read-only Docker binds of the files into a kernel.
pub fn binds(data_dir: &Path) -> Vec<String> {
    read_only_binds(files(data_dir))
}

/// Docker binds of files (where they are, where they go inside a kernel), read-only.
pub fn read_only_binds(files: Vec<(PathBuf, &str)>) -> Vec<String> {
    files
        .into_iter()
        .map(|(host, inside)| format!("{}:{inside}:ro", host.display()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_are_written_once_and_bound_read_only() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path()).unwrap();
        write(dir.path()).unwrap();
        let tmux = std::fs::read_to_string(dir.path().join("etc/tmux.conf")).unwrap();
        assert!(tmux.contains("set -g mouse on"), "{tmux}");
        let b = binds(dir.path());
        assert_eq!(b.len(), 2);
        assert!(b[0].ends_with("/etc/tmux.conf:/etc/tmux.conf:ro"), "{b:?}");
        assert!(
            b[1].ends_with("/etc/profile.sh:/etc/profile.d/zz-bai-environ.sh:ro"),
            "{b:?}"
        );
    }
}

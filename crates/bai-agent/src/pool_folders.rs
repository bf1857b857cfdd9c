//! Data folders in a claimed pool kernel, for both backends. A container's bind mounts (a
//! pod's volumes) are fixed when it is made, so a pool kernel's home is bound with slave
//! propagation (Docker's `rslave`, a pod's `mountPropagation: HostToContainer`) from a
//! shared mount of the kernels' directory: a folder bind-mounted under the kernel's home on
//! the host at the claim shows inside at the same place (`/home/work/<folder>`), read-only
//! where the session asks.
//! Before a kernel's directory is removed every mount under it is taken away and checked
//! gone, so a removal never reaches into a folder.

use crate::paths::confined_join;
use bai_core::agent::{AgentError, Mount};
use rustix::mount::{
    MountFlags, MountPropagationFlags, UnmountFlags, mount_bind_recursive, mount_change,
    mount_move, mount_remount, unmount,
};
use std::path::{Path, PathBuf};

/// Where a kernel's folders go inside: its home.
pub(crate) const HOME: &str = "/home/work";

pub(crate) fn fail(what: impl std::fmt::Display, e: impl std::fmt::Display) -> AgentError {
    AgentError::Runtime(format!("{what}: {e}"))
}

/// One line of `/proc/self/mountinfo`: the mount point, and whether it is shared.
fn mounts() -> Vec<(PathBuf, bool)> {
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let fields: Vec<&str> = l.split(' ').collect();
            let point = unescape(fields.get(4)?);
            let optional = fields.iter().skip(6).take_while(|f| **f != "-");
            let shared = optional.clone().any(|f| f.starts_with("shared:"));
            Some((PathBuf::from(point), shared))
        })
        .collect()
}

/// mountinfo's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 4], 8)
        {
            out.push(v);
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Makes `dir` a shared mount (a bind of itself, the first time): what a pool kernel's home
/// is bound from, so mounts made under it later reach the container.
pub fn ensure_shared(dir: &Path) -> Result<(), AgentError> {
    let last = mounts().into_iter().rev().find(|(p, _)| p == dir);
    match last {
        Some((_, true)) => return Ok(()),
        Some((_, false)) => {}
        None => mount_bind_recursive(dir, dir)
            .map_err(|e| fail(format_args!("cannot bind {} onto itself", dir.display()), e))?,
    }
    // Private first: a bind of a shared mount (a systemd host's `/`) would join its peers;
    // this one is a peer group of its own.
    mount_change(dir, MountPropagationFlags::PRIVATE)
        .and_then(|()| mount_change(dir, MountPropagationFlags::SHARED))
        .map_err(|e| fail(format_args!("cannot share the mount {}", dir.display()), e))
}

/// A private mount where a folder's bind is made read-only before it is moved under a
/// kernel's home: a mount's flags are copied when it propagates, not changed after.
pub(crate) fn staging(data_dir: &Path) -> Result<PathBuf, AgentError> {
    let dir = data_dir.join(".mounts");
    std::fs::create_dir_all(&dir)
        .map_err(|e| fail(format_args!("cannot make {}", dir.display()), e))?;
    if !mounts().iter().any(|(p, _)| *p == dir) {
        mount_bind_recursive(&dir, &dir)
            .map_err(|e| fail(format_args!("cannot bind {} onto itself", dir.display()), e))?;
    }
    mount_change(&dir, MountPropagationFlags::PRIVATE)
        .map_err(|e| fail(format_args!("cannot make {} private", dir.display()), e))?;
    Ok(dir)
}

/// The place in `work` (the kernel's home on the host) of a folder mounted at
/// `kernel_path` inside, if it is under the home.
pub fn place(work: &Path, kernel_path: &str) -> Option<PathBuf> {
    let rel = kernel_path.strip_prefix(HOME)?.strip_prefix('/')?;
    if rel.is_empty() {
        return None;
    }
    confined_join(work, rel).ok()
}

/// Whether a folder mounted at `kernel_path` inside is under the home.
pub fn in_home(kernel_path: &str) -> bool {
    place(Path::new("/w"), kernel_path).is_some()
}

/// Whether a folder's host path can be bound at a claim: absolute, without `:`.
pub fn host_bindable(m: &Mount) -> bool {
    Path::new(&m.host_path).is_absolute() && !m.host_path.contains(':')
}

/// Whether every folder of `mounts` can be bound under a claimed kernel's home: a
/// [`host_bindable`] path, mounted under the home inside.
pub fn all_in_home(mounts: &[Mount]) -> bool {
    mounts
        .iter()
        .all(|m| host_bindable(m) && in_home(&m.kernel_path))
}

/// Binds each folder under `work` (the claimed kernel's home on the host): the same folders,
/// places and modes a cold kernel's container gets. Each is bound in a private staging
/// place, made read-only there if it is, then moved under the home, so the container's copy
/// has its final flags. Folders outside the home are `inject.rs`'s.
pub fn bind(data_dir: &Path, work: &Path, mounts: &[Mount]) -> Result<(), AgentError> {
    let home: Vec<(&Mount, PathBuf)> = mounts
        .iter()
        .filter_map(|m| Some((m, place(work, &m.kernel_path)?)))
        .collect();
    if home.is_empty() {
        return Ok(());
    }
    let stage = staging(data_dir)?;
    for (m, target) in home {
        std::fs::create_dir_all(&target)
            .map_err(|e| fail(format_args!("cannot make {}", target.display()), e))?;
        let step = staged(&stage, m)?;
        let moved = mount_move(&step, &target)
            .map_err(|e| fail(format_args!("cannot place folder {}", m.name), e));
        unstage(&step, moved.is_err());
        moved?;
    }
    Ok(())
}

/// A folder's bind at a new place under `stage`, read-only if the session asks.
pub(crate) fn staged(stage: &Path, m: &Mount) -> Result<PathBuf, AgentError> {
    let step = stage.join(uuid::Uuid::new_v4().to_string());
    std::fs::create_dir(&step)
        .map_err(|e| fail(format_args!("cannot make {}", step.display()), e))?;
    let bound = mount_bind_recursive(&m.host_path, &step)
        .map_err(|e| fail(format_args!("cannot mount folder {}", m.name), e))
        .and_then(|()| {
            if m.read_only {
                mount_remount(&step, MountFlags::BIND | MountFlags::RDONLY, "")
                    .map_err(|e| fail(format_args!("cannot make folder {} read-only", m.name), e))
            } else {
                Ok(())
            }
        });
    match bound {
        Ok(()) => Ok(step),
        Err(e) => {
            unstage(&step, true);
            Err(e)
        }
    }
}

/// Removes a staging place (unmounting what is still there, if `mounted`).
pub(crate) fn unstage(step: &Path, mounted: bool) {
    if mounted {
        let _ = unmount(step, UnmountFlags::DETACH);
    }
    let _ = std::fs::remove_dir(step);
}

/// Takes away every mount under `root` (deepest first), and fails when one is still there:
/// then `root` must not be removed.
pub fn release(root: &Path) -> Result<(), AgentError> {
    let under = |ms: Vec<(PathBuf, bool)>| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = ms
            .into_iter()
            .map(|(p, _)| p)
            .filter(|p| p.starts_with(root) && p != root)
            .collect();
        v.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
        v.dedup();
        v
    };
    for p in under(mounts()) {
        if let Err(e) = unmount(&p, UnmountFlags::DETACH) {
            tracing::warn!(mount = %p.display(), error = %e, "cannot unmount a folder");
        }
    }
    let left = under(mounts());
    if left.is_empty() {
        Ok(())
    } else {
        Err(AgentError::Runtime(format!(
            "{} is still mounted; {} is kept",
            left[0].display(),
            root.display()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_go_under_the_home_only() {
        let w = Path::new("/k/work");
        assert_eq!(
            place(w, "/home/work/data"),
            Some(PathBuf::from("/k/work/data"))
        );
        assert_eq!(
            place(w, "/home/work/a/b"),
            Some(PathBuf::from("/k/work/a/b"))
        );
        assert_eq!(place(w, "/home/work"), None);
        assert_eq!(place(w, "/home/work/"), None);
        assert_eq!(place(w, "/home/workshop"), None);
        assert_eq!(place(w, "/data"), None);
        assert_eq!(place(w, "/home/work/../etc"), None);
    }

    #[test]
    fn mountinfo_escapes_are_read() {
        assert_eq!(unescape("/a\\040b"), "/a b");
        assert_eq!(unescape("/plain"), "/plain");
    }
}

//! Data folders a claimed kernel has outside its home (a serving replica's model at
//! `/models`). No bind of the pool kernel's container reaches there, so each is put into the
//! container's own mount namespace: a detached copy of the folder's bind (`open_tree`), made
//! read-only first where the session asks, is moved to its place (`move_mount`) by a thread
//! made for it, which leaves the agent's filesystem context and joins the container's mount
//! namespace (`setns`), and ends there. The mount goes with the container's namespace.

use crate::pool_folders::{HOME, fail, staged, staging, unstage};
use bai_core::agent::{AgentError, Mount};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::CWD;
use rustix::mount::{MoveMountFlags, OpenTreeFlags, move_mount, open_tree};
use rustix::thread::{LinkNameSpaceType, UnshareFlags, move_into_link_name_space};
use std::path::{Component, Path, PathBuf};

/// Where a folder may be put outside the home: an absolute, plain path (no `.` or `..`),
/// not the root, and nowhere the kernel's own mounts are (the home and what holds it, the
/// kernel's filesystems, the runner's directory). Anything else starts cold.
pub fn elsewhere(kernel_path: &str) -> Option<PathBuf> {
    let p = Path::new(kernel_path);
    let mut parts = p.components();
    if parts.next() != Some(Component::RootDir) {
        return None;
    }
    let names: Vec<&str> = parts
        .map(|c| match c {
            Component::Normal(n) => n.to_str(),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let first = *names.first()?;
    let home = Path::new(HOME);
    let reserved = ["proc", "sys", "dev", "run", "etc"].contains(&first)
        || p.starts_with(home)
        || home.starts_with(p)
        || p.starts_with("/opt/bai");
    (!reserved).then(|| p.to_path_buf())
}

/// The folders of `mounts` outside the home, each with its place inside; an error if one
/// is where [`elsewhere`] refuses.
pub fn outside(mounts: &[Mount]) -> Result<Vec<(&Mount, PathBuf)>, AgentError> {
    mounts
        .iter()
        .filter(|m| !crate::pool_folders::in_home(&m.kernel_path))
        .map(|m| {
            elsewhere(&m.kernel_path).map(|p| (m, p)).ok_or_else(|| {
                AgentError::BadRequest(format!(
                    "folder {} cannot be put at {}",
                    m.name, m.kernel_path
                ))
            })
        })
        .collect()
}

/// Puts each folder of `outside` (from [`outside`]) into the mount namespace of the process
/// `pid` (the kernel's init), at its place there, read-only if the session asks.
pub fn inject(
    data_dir: &Path,
    pid: u32,
    outside: Vec<(&Mount, PathBuf)>,
) -> Result<(), AgentError> {
    if outside.is_empty() {
        return Ok(());
    }
    let ns = std::fs::File::open(format!("/proc/{pid}/ns/mnt")).map_err(|e| {
        fail(
            format_args!("cannot open the kernel's mount namespace ({pid})"),
            e,
        )
    })?;
    let stage = staging(data_dir)?;
    let mut trees = Vec::new();
    for (m, target) in outside {
        let step = staged(&stage, m)?;
        let tree = open_tree(
            CWD,
            &step,
            OpenTreeFlags::OPEN_TREE_CLONE
                | OpenTreeFlags::OPEN_TREE_CLOEXEC
                | OpenTreeFlags::AT_RECURSIVE,
        )
        .map_err(|e| {
            fail(
                format_args!("cannot copy the mount of folder {}", m.name),
                e,
            )
        });
        // The detached copy holds the folder now (with the flags it had); the stage goes.
        unstage(&step, true);
        trees.push((m.name.clone(), tree?, target));
    }
    std::thread::Builder::new()
        .name("bai-inject".into())
        .spawn(move || place_in(ns, trees))
        .map_err(|e| fail("cannot start the thread that mounts folders", e))?
        .join()
        .map_err(|_| AgentError::Runtime("the thread that mounts folders panicked".into()))?
}

/// On a thread of its own (never used for anything else): joins the namespace `ns` and
/// attaches each tree at its target there.
fn place_in(ns: std::fs::File, trees: Vec<(String, OwnedFd, PathBuf)>) -> Result<(), AgentError> {
    // A thread shares its root and working directory with the process's other threads, and
    // the kernel refuses such a thread another mount namespace; this one takes its own.
    // (`unshare` is deprecated for what `FILES` can do; `FS` only parts this thread's root,
    // working directory and umask from the others.)
    #[allow(deprecated)]
    rustix::thread::unshare(UnshareFlags::FS)
        .map_err(|e| fail("cannot part a thread's filesystem context", e))?;
    move_into_link_name_space(ns.as_fd(), Some(LinkNameSpaceType::Mount))
        .map_err(|e| fail("cannot join the kernel's mount namespace", e))?;
    // From here on paths are the container's.
    for (name, tree, target) in trees {
        std::fs::create_dir_all(&target).map_err(|e| {
            fail(
                format_args!("cannot make {} in the kernel", target.display()),
                e,
            )
        })?;
        move_mount(
            tree.as_fd(),
            "",
            CWD,
            &target,
            MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
        )
        .map_err(|e| {
            fail(
                format_args!("cannot put folder {name} at {}", target.display()),
                e,
            )
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_outside_the_home_go_only_where_nothing_of_the_kernel_is() {
        for ok in [
            "/models",
            "/models/iris",
            "/data",
            "/mnt/x",
            "/opt/model",
            "/home/other",
        ] {
            assert_eq!(elsewhere(ok), Some(PathBuf::from(ok)), "{ok}");
        }
        for refused in [
            "/",
            "models",
            "/home",
            "/home/work",
            "/home/work/x",
            "/proc/x",
            "/sys",
            "/dev/shm",
            "/run/x",
            "/etc/ssh",
            "/opt/bai",
            "/opt/bai/run",
            "/models/../etc",
        ] {
            assert_eq!(elsewhere(refused), None, "{refused}");
        }
    }
}

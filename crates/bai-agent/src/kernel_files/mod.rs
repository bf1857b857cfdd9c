//! A kernel's files on the node, the same on both backends: its scratch home and runner
//! directories (the host side of a Docker bind mount or a Kubernetes hostPath), the
//! owner's dotfiles written into the home before it starts ([`home`]), the read-only files of
//! every kernel's `/etc` ([`etc`]), a cluster session's keys and host table ([`cluster`]) and
//! uploads into a running kernel's home ([`upload`]). The kernel's user in images without
//! it is `bai-accounts`' (text shared with the runner).

pub mod cluster;
pub mod etc;
pub mod home;
pub mod upload;

use crate::error::runtime;
use bai_core::agent::AgentError;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// uid and gid of the `work` user inside kernel images.
pub use bai_accounts::WORK_UID;

/// Hands `p` to the work user (uid and gid [`WORK_UID`]).
pub(crate) fn hand_to_work_user(p: &Path) -> Result<(), AgentError> {
    std::os::unix::fs::chown(p, Some(WORK_UID), Some(WORK_UID)).map_err(|e| {
        runtime(
            format_args!("cannot hand {} to the kernel user", p.display()),
            e,
        )
    })
}

/// Whether the tests run as root (handing files to the work user needs it).
#[cfg(test)]
pub(crate) fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Creates `p` (and missing parents) owned by the work user.
pub fn make_work_dir(p: &Path) -> Result<(), AgentError> {
    std::fs::create_dir_all(p)
        .map_err(|e| runtime(format_args!("cannot create {}", p.display()), e))?;
    let meta = std::fs::metadata(p)
        .map_err(|e| runtime(format_args!("cannot stat {}", p.display()), e))?;
    if meta.uid() != WORK_UID || meta.gid() != WORK_UID {
        std::os::unix::fs::chown(p, Some(WORK_UID), Some(WORK_UID)).map_err(|e| {
            runtime(
                format_args!(
                    "cannot hand {} to uid {WORK_UID} (is the agent root?)",
                    p.display()
                ),
                e,
            )
        })?;
    }
    Ok(())
}

//! Storage hosts of data folders. Every server has `local:volume1`, a directory under
//! `$BAI_DATA_DIR/volumes/volume1`; more hosts come from configuration (`baid up
//! --storage-host NAME=PATH`, e.g. an NFS export mounted at the same path on every agent).
//! Each folder lives in `<host root>/<id>` of its own host (the `vfolders.host` column), owned
//! by the kernels' `work` user (uid/gid 1000) so that sessions and the API read and write the
//! same files.
//!
//! Every user path goes through [`bai_core::vpath::confine`] and then [`Storage::resolve`],
//! which refuses to follow any symlink on the way, so nothing outside the folder is reachable.
//!
//! `hosts`: host names and configuration; `quota`: folder directories and quota filesystems
//! (mkfs, mount); `files`: files inside a folder; `blocking`: the async variants, which run
//! the slow operations on a blocking thread; `transfer`: pending uploads and downloads.

mod blocking;
mod copy;
mod files;
mod hosts;
mod quota;
mod transfer;

pub use files::{own, own_tree};
pub use hosts::{Host, StorageConfig, check_host_name, host_unavailable, parse_host_specs};
pub use transfer::Transfer;

use bai_core::Problem;
use bai_store::VFolderRow;
use hosts::prepare_root;
use std::path::{Path, PathBuf};

/// The storage host every server has, under the data dir.
pub const LOCAL_HOST: &str = "local:volume1";
/// Owner of folder contents (the kernel image's `work` user).
pub const WORK_UID: u32 = 1000;

/// Every storage host of this server, and the default one.
#[derive(Debug, Clone)]
pub struct Storage {
    hosts: Vec<Host>,
    default: String,
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

impl Storage {
    /// Only the built-in host `local:volume1` under `data_dir` (nothing is checked or created).
    pub fn local(data_dir: &Path) -> Storage {
        Storage {
            hosts: vec![Host {
                name: LOCAL_HOST.into(),
                root: data_dir.join("volumes").join("volume1"),
                builtin: true,
            }],
            default: LOCAL_HOST.into(),
        }
    }

    /// The built-in host plus the configured ones; every root is created if missing and must
    /// be a writable directory, and the default must be one of the hosts. The error is one
    /// line saying what to fix.
    pub fn open(data_dir: &Path, config: &StorageConfig) -> Result<Storage, String> {
        let mut s = Storage::local(data_dir);
        for (name, root) in &config.hosts {
            check_host_name(name)?;
            if name == LOCAL_HOST {
                return Err(format!(
                    "storage host {LOCAL_HOST} is built in (under the data dir); give the other host another name"
                ));
            }
            if s.host(name).is_some() {
                return Err(format!("storage host {name} is configured twice"));
            }
            if !root.is_absolute() {
                return Err(format!(
                    "storage host {name}: the path {:?} must be absolute",
                    root.display().to_string()
                ));
            }
            s.hosts.push(Host {
                name: name.clone(),
                root: root.clone(),
                builtin: false,
            });
        }
        if let Some(d) = &config.default {
            let d = d.trim();
            if s.host(d).is_none() {
                return Err(format!(
                    "the default storage host {d:?} is not configured; configured hosts: {}",
                    s.names().join(", ")
                ));
            }
            s.default = d.to_string();
        }
        for h in &s.hosts {
            prepare_root(&h.name, &h.root)?;
        }
        Ok(s)
    }

    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    pub fn names(&self) -> Vec<&str> {
        self.hosts.iter().map(|h| h.name.as_str()).collect()
    }

    pub fn default_host(&self) -> &str {
        &self.default
    }

    pub fn host(&self, name: &str) -> Option<&Host> {
        self.hosts.iter().find(|h| h.name == name)
    }

    /// The root of the folder's host, or 503 `storage-host-unavailable`.
    fn root_of(&self, v: &VFolderRow) -> Result<&Path, Problem> {
        self.host(&v.host)
            .map(|h| h.root.as_path())
            .ok_or_else(|| host_unavailable(&v.host, &self.names()))
    }

    /// The folder's directory on its own host (503 when that host is not configured).
    pub fn folder_dir(&self, v: &VFolderRow) -> Result<PathBuf, Problem> {
        Ok(self.root_of(v)?.join(v.id.simple().to_string()))
    }

    /// Total and used bytes of the filesystem holding a host's root.
    pub fn host_usage(root: &Path) -> Option<(u64, u64)> {
        let st = rustix::fs::statvfs(root).ok()?;
        let frsize = st.f_frsize;
        Some((
            st.f_blocks.saturating_mul(frsize),
            st.f_blocks
                .saturating_sub(st.f_bfree)
                .saturating_mul(frsize),
        ))
    }
}

#[cfg(test)]
mod tests;

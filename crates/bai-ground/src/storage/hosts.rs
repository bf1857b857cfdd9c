//! Storage hosts: their names, their configuration and the check of their root directories.

use bai_core::Problem;
use std::path::{Path, PathBuf};

/// One storage host: a name in Backend.AI's `proxy:volume` form and the directory holding its
/// folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub name: String,
    pub root: PathBuf,
    /// The host under the data dir (`local:volume1`), as opposed to a configured one.
    pub builtin: bool,
}

impl Host {
    /// The backend name `GET /folders/_/hosts` reports: `local` for the directory under the
    /// data dir, `vfs` (a plain directory, e.g. an NFS mount) for configured hosts.
    pub fn backend(&self) -> bai_core::storage::Backend {
        if self.builtin {
            bai_core::storage::Backend::Local
        } else {
            bai_core::storage::Backend::Vfs
        }
    }
}

/// Storage hosts as configured for `baid up`: the extra hosts and the default one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StorageConfig {
    /// Extra hosts, name → root directory.
    pub hosts: Vec<(String, PathBuf)>,
    /// Where folders go when a request names no host (default `local:volume1`).
    pub default: Option<String>,
}

/// Checks a storage host name: `proxy:volume`, exactly one colon, each side 1 to 64 letters,
/// digits, '-', '_' or '.'.
pub fn check_host_name(name: &str) -> Result<(), String> {
    let side = |s: &str| {
        (1..=64).contains(&s.len())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    match name.split_once(':') {
        Some((proxy, volume)) if side(proxy) && side(volume) => Ok(()),
        _ => Err(format!(
            "storage host name {name:?} is invalid: use PROXY:VOLUME (one colon; letters, digits, '-', '_' or '.' on each side), e.g. nfs:shared"
        )),
    }
}

/// `NAME=PATH` items, each possibly a comma-separated list (`BAI_STORAGE_HOSTS="a:b=/x,c:d=/y"`),
/// into (name, path) pairs. The names and paths are checked by [`Storage::open`].
pub fn parse_host_specs(items: &[String]) -> Result<Vec<(String, PathBuf)>, String> {
    items
        .iter()
        .flat_map(|i| i.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|spec| {
            let (name, path) = spec.split_once('=').ok_or_else(|| {
                format!("storage host {spec:?} must be NAME=PATH, e.g. nfs:shared=/mnt/nfs/bai")
            })?;
            Ok((name.trim().to_string(), PathBuf::from(path.trim())))
        })
        .collect()
}

/// The problem of a folder whose host is not configured (any more) on this server.
pub fn host_unavailable(host: &str, configured: &[&str]) -> Problem {
    Problem::new(
        503,
        "storage-host-unavailable",
        "Storage host unavailable.",
        format!(
            "the folder's storage host {host:?} is not configured on this server (configured: {}); its files are out of reach until an administrator adds it again (baid up --storage-host {host}=PATH)",
            configured.join(", ")
        ),
    )
}

/// Creates `root` if missing and checks that it is a directory this process can write.
pub(super) fn prepare_root(name: &str, root: &Path) -> Result<(), String> {
    std::fs::create_dir_all(root)
        .map_err(|e| format!("storage host {name}: cannot create {}: {e}", root.display()))?;
    let md = std::fs::metadata(root)
        .map_err(|e| format!("storage host {name}: {}: {e}", root.display()))?;
    if !md.is_dir() {
        return Err(format!(
            "storage host {name}: {} is not a directory",
            root.display()
        ));
    }
    let probe = root.join(format!(".bai-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| {
        format!(
            "storage host {name}: cannot write in {}: {e}",
            root.display()
        )
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

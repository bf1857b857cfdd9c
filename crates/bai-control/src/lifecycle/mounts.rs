//! Data folders of a session: checked when it is queued (so a wrong name is a clear 400 at
//! once), bound to their host paths again when it launches (so what waited hours sees the
//! folders as they are then).

use super::Lifecycle;
use bai_core::agent::Mount;
use bai_core::spec::{FolderRef, MountAsk};
use bai_core::{Problem, Reason};
use bai_store::SessionRow;
use uuid::Uuid;

/// The folders asked for, by name or id, each where asked inside the container (default
/// `/home/work/NAME`), and the owner's automount folders: the owner's folders only.
pub(super) fn resolve_mounts(
    lifecycle: &Lifecycle,
    user_id: &str,
    asked: &[MountAsk],
) -> Result<Vec<bai_core::agent::Mount>, Problem> {
    let mut out: Vec<bai_core::agent::Mount> = Vec::new();
    let mut wanted: Vec<(bai_store::VFolderRow, Option<String>)> = Vec::new();
    let by_id = |id: &str| {
        Uuid::parse_str(id)
            .ok()
            .and_then(|u| lifecycle.store.vfolder(u).ok().flatten())
            .filter(|v| lifecycle.store.can_see_vfolder(user_id, v).unwrap_or(false))
    };
    for ask in asked {
        let v = match &ask.folder {
            // A name first; a folder may also be given by its id (`-lifecycle 3f2a…`).
            FolderRef::Name(name) => match lifecycle
                .store
                .visible_vfolder_by_name(user_id, name, false)?
            {
                Some(v) => v,
                None => by_id(name).ok_or_else(|| {
                    Problem::not_found(
                        "vfolder",
                        format!("no data folder named {name:?} is visible to you"),
                    )
                })?,
            },
            FolderRef::Id(id) => by_id(id).ok_or_else(|| {
                Problem::not_found(
                    "vfolder",
                    format!("no data folder with id {id:?} is visible to you"),
                )
            })?,
        };
        wanted.push((v, ask.target.clone()));
    }
    // The owner's automount folders (names starting with '.', such as `.ssh`, whose
    // authorized_keys admit them over SSH) are mounted in every session at /home/work/NAME;
    // one whose storage host is not configured any more is left out (with a warning) rather
    // than blocking every session of its owner.
    for auto in lifecycle.store.vfolders(Some(user_id))? {
        if auto.project.is_none()
            && auto.name.starts_with('.')
            && !auto.is_trashed()
            && !wanted.iter().any(|(v, _)| v.id == auto.id)
        {
            if lifecycle.storage.host(&auto.host).is_none() {
                tracing::warn!(
                    vfolder = %auto.id, host = %auto.host,
                    "automount folder {:?} is not mounted: its storage host is not configured",
                    auto.name
                );
                continue;
            }
            let target = auto.name.clone();
            wanted.push((auto, Some(target)));
        }
    }
    for (v, target) in wanted {
        if out.iter().any(|x| x.vfolder_id == v.id) {
            continue;
        }
        if v.is_trashed() {
            return Err(Problem::invalid(format!(
                "data folder {:?} is in the trash; restore it to mount it",
                v.name
            )));
        }
        if v.status == bai_store::CLONING {
            return Err(Problem::invalid(format!(
                "data folder {:?} is still being filled by a clone; mount it when it is ready",
                v.name
            )));
        }
        // The owner's own permission on it: a share overrides the folder's.
        let read_only = lifecycle
            .store
            .folder_access(user_id, &v)?
            .is_none_or(|p| p.is_read_only());
        // A folder on a storage host this server no longer has cannot be mounted.
        let host_path = lifecycle.storage.folder_dir(&v).map_err(|e| Problem {
            status: 400,
            msg: format!("data folder {:?} cannot be mounted: {}", v.name, e.msg),
            ..e
        })?;
        let target = target.unwrap_or_else(|| v.name.clone());
        let rel = target.strip_prefix("/home/work/").unwrap_or(&target);
        if rel.starts_with('/') || rel.contains(':') {
            return Err(Problem::invalid(format!(
                "mount path {target:?} must be inside /home/work and contain no ':'"
            )));
        }
        let rel = bai_core::vpath::confine(rel)
            .map_err(|e| Problem::invalid(format!("mount path: {e}")))?;
        if let Some(why) = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .and_then(bai_core::vpath::reserved_name)
        {
            return Err(Problem::invalid(format!(
                "mount path {target:?} is reserved ({why}); mount the folder elsewhere"
            )));
        }
        if rel.as_os_str().is_empty() {
            return Err(Problem::invalid(
                "a folder cannot be mounted over /home/work itself",
            ));
        }
        let kernel_path = format!("/home/work/{}", rel.display());
        if out.iter().any(|x| x.kernel_path == kernel_path) {
            return Err(Problem::invalid(format!(
                "two folders are mounted at {kernel_path}"
            )));
        }
        out.push(bai_core::agent::Mount {
            vfolder_id: v.id,
            name: v.name.clone(),
            host_path: host_path.display().to_string(),
            kernel_path,
            read_only,
        });
    }
    Ok(out)
}

/// The session's folders as they are now: each one still visible to the owner, on a storage
/// host this server has, with today's permission. A folder that went away while the
/// session waited ends the launch with `mount-failed` naming it.
pub fn bind_at_launch(lifecycle: &Lifecycle, row: &SessionRow) -> Result<Vec<Mount>, Reason> {
    let mut out = Vec::with_capacity(row.spec.mounts.len());
    for queued in &row.spec.mounts {
        let v = match lifecycle.store.vfolder(queued.vfolder_id) {
            Ok(Some(v)) if v.is_trashed() => {
                return Err(Reason::MountFailed(format!(
                    "data folder {:?} was moved to the trash while the session waited",
                    queued.name
                )));
            }
            Ok(Some(v))
                if lifecycle
                    .store
                    .can_see_vfolder(&row.spec.user_id, &v)
                    .unwrap_or(false) =>
            {
                v
            }
            Ok(_) => {
                return Err(Reason::MountFailed(format!(
                    "data folder {:?} was deleted while the session waited",
                    queued.name
                )));
            }
            Err(e) => {
                return Err(Reason::MountFailed(format!(
                    "data folder {:?} cannot be read: {e}",
                    queued.name
                )));
            }
        };
        let host_path = lifecycle
            .storage
            .folder_dir(&v)
            .map_err(|e| Reason::MountFailed(format!("data folder {:?}: {}", v.name, e.msg)))?;
        out.push(Mount {
            vfolder_id: v.id,
            name: v.name.clone(),
            host_path: host_path.display().to_string(),
            kernel_path: queued.kernel_path.clone(),
            read_only: queued.read_only
                || lifecycle
                    .store
                    .folder_access(&row.spec.user_id, &v)
                    .ok()
                    .flatten()
                    .is_none_or(|p| p.is_read_only()),
        });
    }
    Ok(out)
}

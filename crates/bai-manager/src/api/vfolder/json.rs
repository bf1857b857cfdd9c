//! A folder as the API shows it (the REST listing and GraphQL's `vfolder_*_list` share it)
//! and the storage hosts.

use crate::state::Manager;
use bai_api::folders::{
    Capability, Folder, FolderStatus, Hosts, Ownership, UsageMode, VolumeInfo, VolumeUsage,
};
use bai_core::Problem;
use bai_ground::storage::{Host, Storage};
use bai_store::VFolderRow;
use std::sync::Arc;

/// A folder as the API shows it. A folder whose storage host is not configured lists
/// with status `unavailable` and no usage. Its usage walks the folder's tree: call it from
/// blocking code (async code: `folder_json_async`, or a `spawn_blocking` around a batch).
pub fn folder_view(m: &Manager, v: &VFolderRow, caller_id: &str) -> Folder {
    let (status, (files, bytes)) = match m.storage.usage(v) {
        Ok(u) => (word::<FolderStatus>(&v.status), u),
        Err(_) => (None, (0, 0)),
    };
    let (ownership, is_owner) = match &v.project {
        Some(_) => (Ownership::Group, false),
        None => (Ownership::User, v.user_id == caller_id),
    };
    // The caller's own permission: a share overrides the folder's.
    let permission = m
        .store
        .folder_access(caller_id, v)
        .ok()
        .flatten()
        .unwrap_or(v.permission);
    Folder {
        id: v.id.simple().to_string(),
        name: v.name.clone(),
        host: v.host.clone(),
        usage_mode: word(&v.usage_mode).unwrap_or(UsageMode::General),
        permission,
        status: status.unwrap_or(FolderStatus::Unavailable),
        created_at: v.created_at.clone(),
        is_owner,
        ownership_type: ownership,
        kind: ownership,
        user: v.project.is_none().then(|| v.user_id.clone()),
        creator: v.user_id.clone(),
        group: v.project.clone(),
        group_name: v.project.clone(),
        cloneable: true,
        max_size: v.quota_bytes.map(|q| q / (1 << 20)).unwrap_or(0),
        quota: v.quota_bytes,
        num_files: files,
        used_bytes: bytes,
    }
}

/// A stored word (a folder's status or usage mode) as its wire type, if it is one.
fn word<T: serde::de::DeserializeOwned>(w: &str) -> Option<T> {
    use serde::de::IntoDeserializer;
    let text: serde::de::value::StrDeserializer<'_, serde::de::value::Error> =
        w.into_deserializer();
    T::deserialize(text).ok()
}

/// [`folder_view`] on a blocking thread: its usage walks the folder's tree.
pub(super) async fn folder_json_async(
    m: &Arc<Manager>,
    v: &VFolderRow,
    caller_id: &str,
) -> Result<Folder, Problem> {
    let (m, v, caller_id) = (m.clone(), v.clone(), caller_id.to_string());
    tokio::task::spawn_blocking(move || folder_view(&m, &v, &caller_id))
        .await
        .map_err(|e| Problem::internal(format!("reading the folder failed: {e}")))
}

pub(super) fn hosts_json(storage: &Storage) -> Hosts {
    let volume_info = storage
        .hosts()
        .iter()
        .map(|h: &Host| {
            let (total_bytes, used_bytes) = Storage::host_usage(&h.root).unwrap_or((0, 0));
            let info = VolumeInfo {
                backend: h.backend(),
                capabilities: vec![Capability::Vfolder],
                usage: VolumeUsage {
                    total_bytes,
                    used_bytes,
                },
            };
            (h.name.clone(), info)
        })
        .collect();
    Hosts {
        default: storage.default_host().to_string(),
        allowed: storage.names().into_iter().map(str::to_string).collect(),
        volume_info,
    }
}

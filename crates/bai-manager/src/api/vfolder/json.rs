//! A folder's JSON (the REST listing and GraphQL's `vfolder_*_list` share it) and the
//! storage hosts' JSON.

use crate::state::Manager;
use crate::storage::{Host, Storage};
use bai_core::Problem;
use bai_store::VFolderRow;
use serde_json::{Value, json};
use std::sync::Arc;

/// A folder's JSON. A folder whose storage host is not configured lists with status
/// `unavailable` and no usage. Its usage walks the folder's tree: call it from blocking code
/// (async code: `folder_json_async`, or a `spawn_blocking` around a batch).
pub fn folder_json(m: &Manager, v: &VFolderRow, caller_id: &str) -> Value {
    let (status, (files, bytes)) = match m.storage.usage(v) {
        Ok(u) => (v.status.as_str(), u),
        Err(_) => ("unavailable", (0, 0)),
    };
    let (ownership, is_owner) = match &v.project {
        Some(_) => ("group", false),
        None => ("user", v.user_id == caller_id),
    };
    // The caller's own permission: a share overrides the folder's.
    let permission = m
        .store
        .folder_access(caller_id, v)
        .ok()
        .flatten()
        .unwrap_or(v.permission);
    json!({
        "id": v.id.simple().to_string(),
        "name": v.name,
        "host": v.host,
        "usage_mode": v.usage_mode,
        "permission": permission.as_str(),
        "status": status,
        "created_at": v.created_at,
        "is_owner": is_owner,
        "ownership_type": ownership,
        "type": ownership,
        "user": if v.project.is_some() { Value::Null } else { json!(v.user_id) },
        "creator": v.user_id,
        "group": v.project,
        "group_name": v.project,
        "cloneable": true,
        "max_size": v.quota_bytes.map(|q| q / (1 << 20)).unwrap_or(0),
        "quota": v.quota_bytes,
        "numFiles": files,
        "used_bytes": bytes,
    })
}

/// [`folder_json`] on a blocking thread: its usage walks the folder's tree.
pub(super) async fn folder_json_async(
    m: &Arc<Manager>,
    v: &VFolderRow,
    caller_id: &str,
) -> Result<Value, Problem> {
    let (m, v, caller_id) = (m.clone(), v.clone(), caller_id.to_string());
    tokio::task::spawn_blocking(move || folder_json(&m, &v, &caller_id))
        .await
        .map_err(|e| Problem::internal(format!("reading the folder failed: {e}")))
}

pub(super) fn hosts_json(storage: &Storage) -> Value {
    let info: serde_json::Map<String, Value> = storage
        .hosts()
        .iter()
        .map(|h: &Host| {
            let (total, used) = Storage::host_usage(&h.root).unwrap_or((0, 0));
            (
                h.name.clone(),
                json!({
                    "backend": h.backend(),
                    "capabilities": ["vfolder"],
                    "usage": {"total_bytes": total, "used_bytes": used},
                }),
            )
        })
        .collect();
    json!({
        "default": storage.default_host(),
        "allowed": storage.names(),
        "volume_info": info,
    })
}

//! Storage hosts as Backend.AI's storage volumes: `storage_volume_list` and `storage_volume`
//! (administrators). Each host's backend, capabilities, root path and usage come from the
//! hosts bai serves folders from.

use super::{Args, err};
use bai_gql::{FieldError, OperationKind};
use serde_json::{Value, json};

pub fn handles(field: &str) -> bool {
    matches!(field, "storage_volume_list" | "storage_volume")
}

fn volume_json(h: &bai_ground::storage::Host) -> Value {
    let (total, used) = bai_ground::storage::Storage::host_usage(&h.root).unwrap_or((0, 0));
    json!({
        "id": h.name,
        "backend": h.backend(),
        "capabilities": ["vfolder"],
        "path": h.root.display().to_string(),
        "fsprefix": "",
        "hardware_metadata": json!({}).to_string(),
        "performance_metric": json!({
            "capacity_bytes": total,
            "used_bytes": used,
        })
        .to_string(),
        "usage": json!({"capacity_bytes": total, "used_bytes": used}).to_string(),
    })
}

pub(super) fn resolve(a: &Args<'_>, kind: OperationKind, field: &str) -> Result<Value, FieldError> {
    a.admin_only("read storage volumes")?;
    let hosts = a.m.storage.hosts();
    match (kind, field) {
        (OperationKind::Query, "storage_volume_list") => {
            let (limit, offset) = a.limit_offset();
            let items: Vec<Value> = hosts
                .iter()
                .skip(offset as usize)
                .take(limit as usize)
                .map(volume_json)
                .collect();
            Ok(json!({"items": items, "total_count": hosts.len()}))
        }
        (OperationKind::Query, "storage_volume") => {
            let id = a.text("id")?;
            Ok(hosts
                .iter()
                .find(|h| h.name == id)
                .map(volume_json)
                .unwrap_or(Value::Null))
        }
        _ => Err(err(format!("{field} is not supported"))),
    }
}

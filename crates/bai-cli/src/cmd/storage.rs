//! `bai admin storage list|info`: the storage hosts (GraphQL `storage_volume_list`,
//! `storage_volume`).

use super::accounts::listing;
use crate::args::AdminStorageCmd;
use anyhow::{Result, bail};
use bai_client::Client;
use serde_json::{Value, json};

const FIELDS: &str = "id backend capabilities path usage";

/// A volume with its usage read out of the JSON text GraphQL carries it in.
fn readable(mut v: Value) -> Value {
    let usage: Value = v["usage"]
        .as_str()
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_default();
    let bytes = |k: &str| usage[k].as_u64().unwrap_or(0);
    let (cap, used) = (bytes("capacity_bytes"), bytes("used_bytes"));
    v["capacity"] = json!(bai_core::resources::format_bytes(cap));
    v["used"] = json!(bai_core::resources::format_bytes(used));
    v["usage"] = usage;
    v
}

pub async fn admin_storage(client: &Client, c: &AdminStorageCmd) -> Result<i32> {
    let columns = [
        ("NAME", "id"),
        ("BACKEND", "backend"),
        ("PATH", "path"),
        ("CAPACITY", "capacity"),
        ("USED", "used"),
    ];
    match c {
        AdminStorageCmd::List { json } => {
            let q = format!(
                "query {{ storage_volume_list(limit: 100, offset: 0) {{ items {{ {FIELDS} }} }} }}"
            );
            let v = client.gql(&q, json!({})).await?;
            let items: Vec<Value> = v["storage_volume_list"]["items"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(readable)
                .collect();
            listing(&items, *json, &columns)?;
        }
        AdminStorageCmd::Info { name } => {
            let q = format!("query($id: String!) {{ storage_volume(id: $id) {{ {FIELDS} }} }}");
            let v = client.gql(&q, json!({ "id": name })).await?;
            if v["storage_volume"].is_null() {
                bail!("no storage host named {name:?} (see `bai admin storage list`)");
            }
            listing(&[readable(v["storage_volume"].clone())], false, &columns)?;
        }
    }
    Ok(0)
}

//! `bai ps` and `bai admin sessions`.

use crate::args::PsArgs;
use crate::output::table;
use anyhow::{Result, bail};
use bai_client::Client;
use serde_json::Value;

fn cell(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub async fn ps(client: &Client, a: &PsArgs, access_key: Option<&str>, admin: bool) -> Result<i32> {
    if admin {
        let kp = client.keypair_info().await?;
        if !kp["is_admin"].as_bool().unwrap_or(false) {
            bail!("`bai admin sessions` needs an administrator keypair (use env-admin.sh)");
        }
    }
    let fields = if admin {
        "name id access_key status status_info type image status_changed"
    } else {
        "name id status status_info type image status_changed"
    };
    let statuses = a.statuses();
    let mut rows = Vec::new();
    let mut offset = a.offset;
    let total;
    loop {
        let page = if a.all { 100 } else { a.limit };
        let (items, t) = client
            .list_sessions(&statuses, access_key, page, offset, fields)
            .await?;
        let n = items.len() as i64;
        for it in items {
            let mut r = vec![cell(&it["name"]), cell(&it["id"])];
            if admin {
                r.push(cell(&it["access_key"]));
            }
            for k in ["status", "status_info", "type", "image", "status_changed"] {
                r.push(cell(&it[k]));
            }
            rows.push(r);
        }
        offset += n;
        if !a.all || n == 0 || offset >= t {
            total = t;
            break;
        }
    }
    if rows.is_empty() {
        println!("No matching items.");
        return Ok(0);
    }
    let mut headers = vec!["Session Name", "Session ID"];
    if admin {
        headers.push("Owner Access Key");
    }
    headers.extend(["Status", "Status Info", "Type", "Image", "Last Updated"]);
    table(&headers, &rows);
    let shown = rows.len() as i64;
    if a.offset + shown < total {
        eprintln!(
            "(showing {shown} of {total}; use --offset {} or --all to see more)",
            a.offset + shown
        );
    }
    Ok(0)
}

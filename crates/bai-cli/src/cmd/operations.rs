//! `bai admin audit` and `bai admin keypair …`.

use crate::args::AdminAuditArgs;
use crate::output::table;
use anyhow::{Result, bail};
use bai_api::server::AuditQuery;
use bai_client::Client;

pub async fn audit(client: &Client, a: &AdminAuditArgs) -> Result<i32> {
    if !(1..=1000).contains(&a.limit) {
        bail!("--limit must be 1 to 1000");
    }
    let list = client
        .audit(&AuditQuery {
            actor: a.actor.clone(),
            action: a.action.clone(),
            target: a.target.clone(),
            since: a.since.clone(),
            limit: Some(a.limit),
        })
        .await?;
    if crate::output::json_items(&list.entries) {
        return Ok(0);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(0);
    }
    if list.entries.is_empty() {
        println!("No entries.");
        return Ok(0);
    }
    let rows: Vec<Vec<String>> = list
        .entries
        .iter()
        .map(|e| {
            vec![
                e.at.chars().take(19).collect::<String>().replace('T', " "),
                e.actor.clone(),
                e.action.clone(),
                e.target.clone(),
                if e.detail.is_empty() {
                    e.outcome.clone()
                } else {
                    format!("{} ({})", e.outcome, e.detail)
                },
            ]
        })
        .collect();
    table(&["AT (UTC)", "WHO", "ACTION", "TARGET", "OUTCOME"], &rows);
    Ok(0)
}

//! `bai admin audit` and `bai admin keypair …`.

use crate::args::{AdminAuditArgs, AdminKeypairCmd};
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

pub async fn keypair(client: &Client, c: &AdminKeypairCmd) -> Result<i32> {
    match c {
        AdminKeypairCmd::Info { access_key } => {
            let kp = client.keypair_of(Some(access_key)).await?;
            table(
                &[
                    "ACCESS KEY",
                    "OWNER",
                    "ACTIVE",
                    "ADMIN",
                    "RATE LIMIT / 15 MIN",
                ],
                &[vec![
                    kp.access_key,
                    kp.user_id.unwrap_or_default(),
                    kp.is_active.to_string(),
                    kp.is_admin.to_string(),
                    if kp.rate_limit == 0 {
                        "no limit".into()
                    } else {
                        kp.rate_limit.to_string()
                    },
                ]],
            );
            Ok(0)
        }
        AdminKeypairCmd::Update {
            access_key,
            rate_limit,
            deactivate,
            activate,
        } => {
            let active = match (activate, deactivate) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            };
            if active.is_none() && rate_limit.is_none() {
                bail!("nothing to change: give --rate-limit, --activate or --deactivate");
            }
            if rate_limit.is_some_and(|n| n < 0) {
                bail!("--rate-limit must be 0 (no limit) or more");
            }
            client
                .modify_keypair(access_key, active, *rate_limit)
                .await?;
            println!("Keypair {access_key} updated.");
            Ok(0)
        }
    }
}

//! `bai rm`, `logs`, `session info|rename|history`.

use crate::args::{InfoArgs, RmArgs};
use anyhow::Result;
use bai_client::Client;
use serde_json::Value;

pub async fn rm(client: &Client, a: &RmArgs) -> Result<i32> {
    let mut failed = false;
    for r in &a.references {
        match client.destroy(r, a.forced).await {
            Ok(v) => {
                let st = v["stats"]["status"]
                    .as_str()
                    .or(v["status"].as_str())
                    .unwrap_or("terminated")
                    .to_ascii_lowercase();
                println!("Session {r} is {st}.");
            }
            Err(e) => {
                eprintln!("error: {r}: {e}");
                failed = true;
            }
        }
    }
    Ok(if failed { 1 } else { 0 })
}

pub async fn logs(client: &Client, reference: &str) -> Result<i32> {
    let text = client.logs(reference).await?;
    print!("{text}");
    if !text.is_empty() && !text.ends_with('\n') {
        println!();
    }
    Ok(0)
}

pub async fn rename(client: &Client, reference: &str, new_name: &str) -> Result<i32> {
    bai_core::SessionName::parse(new_name).map_err(|e| anyhow::anyhow!("{e}"))?;
    client.rename(reference, new_name).await?;
    println!("Session {reference} is renamed to {new_name}.");
    Ok(0)
}

fn show(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub async fn info(client: &Client, a: &InfoArgs) -> Result<i32> {
    let v = client.info(&a.reference).await?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(0);
    }
    for k in [
        "name",
        "id",
        "type",
        "status",
        "status_info",
        "result",
        "exit_code",
        "image",
        "access_key",
        "user_email",
        "scaling_group",
        "agent",
        "cpu",
        "mem",
        "shmem",
        "created_at",
        "starts_at",
        "batch_timeout",
        "terminated_at",
    ] {
        println!("{k:<14} {}", show(&v[k]));
    }
    Ok(0)
}

pub async fn history(client: &Client, reference: &str) -> Result<i32> {
    let h = client.status_history(reference).await?;
    let mut entries: Vec<(String, String)> = h
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (show(v), k.clone())).collect())
        .unwrap_or_default();
    entries.sort();
    for (t, st) in entries {
        println!("{st:<12} {t}");
    }
    let sched = client.scheduling_history(reference).await?;
    if let Some(items) = sched.as_array()
        && !items.is_empty()
    {
        println!();
        let rows: Vec<Vec<String>> = items
            .iter()
            .map(|r| {
                vec![
                    show(&r["phase"]),
                    show(&r["result"]),
                    format!("{} -> {}", show(&r["from_status"]), show(&r["to_status"])),
                    show(&r["attempts"]),
                    show(&r["message"]),
                    show(&r["updated_at"]),
                ]
            })
            .collect();
        crate::output::table(
            &[
                "Phase",
                "Result",
                "Transition",
                "Attempts",
                "Message",
                "Updated",
            ],
            &rows,
        );
    }
    Ok(0)
}

//! `bai agents` and the `bai admin agent-token | agent` commands.

use super::resources::{items, slots_text};
use crate::args::{AdminAgentCmd, AdminAgentTokenCmd};
use crate::output::{cell, table};
use anyhow::Result;
use bai_client::Client;
use serde_json::Value;

/// The state column: the status, and `drained` when it is.
fn state(a: &Value) -> String {
    let status = match a["status"].as_str() {
        Some(s) => s.to_ascii_lowercase(),
        None if a["alive"].as_bool() == Some(true) => "alive".into(),
        None => "lost".into(),
    };
    if a["drained"].as_bool() == Some(true) {
        format!("{status}, drained")
    } else {
        status
    }
}

pub async fn agents(client: &Client) -> Result<i32> {
    let v = client.agents().await?;
    let rows: Vec<Vec<String>> = items(&v, "agents")
        .iter()
        .map(|a| {
            let address = match a["address"].as_str() {
                Some(s) if !s.is_empty() => s.to_string(),
                _ if a["remote"].as_bool() == Some(true) => "-".into(),
                _ => "(in the manager)".into(),
            };
            vec![
                cell(&a["id"]),
                cell(&a["scaling_group"]),
                address,
                state(a),
                slots_text(&a["capacity"]),
                slots_text(&a["used"]),
                slots_text(&a["free"]),
                cell(&a["last_heartbeat"]),
                cell(&a["version"]),
            ]
        })
        .collect();
    table(
        &[
            "Agent",
            "Resource group",
            "Address",
            "State",
            "Capacity",
            "Used",
            "Free",
            "Last heartbeat",
            "Version",
        ],
        &rows,
    );
    // Accelerator devices, one line each (the mock plugin's say so).
    for a in items(&v, "agents") {
        for d in a["devices"].as_array().into_iter().flatten() {
            let gib = d["memory"].as_u64().unwrap_or(0) as f64 / (1u64 << 30) as f64;
            let mock = if d["plugin"] == "mock" { "  MOCK" } else { "" };
            println!(
                "{} device {}: {} ({gib:.0} GiB), {} {}{mock}",
                cell(&a["id"]),
                cell(&d["id"]),
                cell(&d["model"]),
                cell(&d["capacity"]),
                cell(&d["slot"]),
            );
        }
    }
    Ok(0)
}

pub async fn admin_token(client: &Client, c: &AdminAgentTokenCmd) -> Result<i32> {
    match c {
        AdminAgentTokenCmd::Create { group } => {
            let v = client.create_agent_token(group.as_deref()).await?;
            // The token alone on stdout (for `$(…)`); where agents join on stderr.
            println!("{}", cell(&v["token"]));
            if let Some(addr) = v["agent_listen"].as_str() {
                eprintln!(
                    "join token {} for resource group {}; on the new machine: baid agent --manager THIS-HOST:{} --token TOKEN",
                    cell(&v["id"]),
                    cell(&v["group"]),
                    addr.rsplit(':').next().unwrap_or(addr)
                );
            }
        }
        AdminAgentTokenCmd::List => {
            let v = client.agent_tokens().await?;
            let rows: Vec<Vec<String>> = items(&v, "tokens")
                .iter()
                .map(|t| {
                    vec![
                        cell(&t["id"]),
                        cell(&t["group"]),
                        cell(&t["created_by"]),
                        cell(&t["created_at"]),
                        match t["revoked_at"].as_str() {
                            Some(r) => format!("revoked {r}"),
                            None => "valid".into(),
                        },
                    ]
                })
                .collect();
            table(
                &["Token", "Resource group", "Created by", "Created", "State"],
                &rows,
            );
        }
        AdminAgentTokenCmd::Revoke { id } => {
            client.revoke_agent_token(id).await?;
            println!("join token {id} revoked; its agents were disconnected");
        }
    }
    Ok(0)
}

pub async fn admin_agent(client: &Client, c: &AdminAgentCmd) -> Result<i32> {
    match c {
        AdminAgentCmd::Drain { id } => {
            client.drain_agent(id, true).await?;
            println!("agent {id} drained: no new sessions go there; running ones stay");
        }
        AdminAgentCmd::Undrain { id } => {
            client.drain_agent(id, false).await?;
            println!("agent {id} takes new sessions again");
        }
        AdminAgentCmd::Remove { id } => {
            client.remove_agent(id).await?;
            println!("agent {id} removed");
        }
    }
    Ok(0)
}

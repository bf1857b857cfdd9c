//! `bai agents` and the `bai admin agent-token | agent` commands.

use super::resources::slots_text;
use crate::args::{AdminAgentCmd, AdminAgentTokenCmd};
use crate::output::table;
use anyhow::Result;
use bai_api::resources::Agent;
use bai_client::Client;

/// The state column: the status, and `drained` or `withheld` when it is.
fn state(a: &Agent) -> String {
    let mut state = a.status.to_ascii_lowercase();
    if a.drained {
        state.push_str(", drained");
    }
    if a.withheld.is_some() {
        state.push_str(", withheld");
    }
    state
}

/// A text, or `-` for an empty one.
fn or_dash(s: &str) -> String {
    if s.is_empty() {
        "-".into()
    } else {
        s.to_string()
    }
}

pub async fn agents(client: &Client) -> Result<i32> {
    let list = client.agents().await?;
    let rows: Vec<Vec<String>> = list
        .agents
        .iter()
        .map(|a| {
            let address = if !a.address.is_empty() {
                a.address.clone()
            } else if a.remote {
                "-".into()
            } else {
                "(in the manager)".into()
            };
            vec![
                or_dash(&a.id),
                or_dash(&a.scaling_group),
                address,
                state(a),
                slots_text(&a.capacity),
                slots_text(&a.used),
                slots_text(&a.free),
                or_dash(&a.last_heartbeat),
                or_dash(&a.version),
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
    // Agents that cannot enforce egress policies, and why.
    for a in &list.agents {
        if let Some(why) = &a.egress_error {
            println!(
                "{}: cannot enforce egress policies (takes only sessions of open groups): {why}",
                a.id
            );
        }
    }
    // Agents that offer nothing now, and why.
    for a in &list.agents {
        if let Some(why) = &a.withheld {
            println!(
                "{}: offers nothing now (no new sessions go there): {why}",
                a.id
            );
        }
    }
    // Agents that give one kernel less than they have, and why.
    for a in &list.agents {
        for m in &a.kernel_most {
            println!(
                "{}: a kernel may have at most {}={} here: {}",
                a.id, m.slot, m.most, m.why
            );
        }
    }
    // Warm pools, one line each, then what they did.
    for a in &list.agents {
        let w = &a.warm_pool;
        for p in &w.pools {
            let mut making = if p.making > 0 {
                format!(", {} being made", p.making)
            } else {
                String::new()
            };
            if p.kept < p.target {
                making.push_str(&format!(", idle: keeps {}", p.kept));
            }
            if p.kept > p.target {
                making.push_str(&format!(", a burst: keeps {}", p.kept));
            }
            println!(
                "{} warm pool {}: {} of {} ready{making}",
                a.id, p.shape, p.ready, p.target
            );
        }
        if !w.pools.is_empty() || w.hits + w.misses > 0 {
            println!(
                "{} warm pools: {} hits, {} misses, {} made, {} failed to bind, {} given up for room",
                a.id, w.hits, w.misses, w.refills, w.bind_failures, w.evictions
            );
        }
    }
    // Accelerator devices, one line each (the mock plugin's say so).
    for a in &list.agents {
        for d in &a.devices {
            let gib = d.memory as f64 / (1u64 << 30) as f64;
            let mock = if d.plugin == "mock" { "  MOCK" } else { "" };
            println!(
                "{} device {}: {} ({gib:.0} GiB), {} {}{mock}",
                a.id, d.id, d.model, d.capacity, d.slot,
            );
        }
    }
    Ok(0)
}

pub async fn admin_token(client: &Client, c: &AdminAgentTokenCmd) -> Result<i32> {
    match c {
        AdminAgentTokenCmd::Create { group } => {
            let t = client.create_agent_token(group.as_deref()).await?;
            // The token alone on stdout (for `$(…)`); where agents join on stderr.
            println!("{}", t.token.as_deref().unwrap_or("-"));
            if let Some(addr) = &t.agent_listen {
                eprintln!(
                    "join token {} for resource group {}; on the new machine: baid agent --manager THIS-HOST:{} --token TOKEN",
                    t.id,
                    t.group,
                    addr.rsplit(':').next().unwrap_or(addr)
                );
            }
        }
        AdminAgentTokenCmd::List => {
            let list = client.agent_tokens().await?;
            let rows: Vec<Vec<String>> = list
                .tokens
                .iter()
                .map(|t| {
                    vec![
                        or_dash(&t.id),
                        or_dash(&t.group),
                        or_dash(&t.created_by),
                        or_dash(&t.created_at),
                        match &t.revoked_at {
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

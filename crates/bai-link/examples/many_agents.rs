//! Load for the agent-link benchmark: N dummy agents, each with its own connection to the
//! manager (`bai_link::join::run`, the same code `baid agent` runs), heartbeating at the
//! given interval until killed. One process holds them all.
//!
//!   cargo run --release -p bai-link --example many_agents -- HOST:PORT TOKEN N [HEARTBEAT_MS]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may stop on a failure

use bai_agent::{DummyAgent, DummyAgentConfig};
use bai_core::agent::AgentRpc;
use bai_core::resources::ResourceSlots;
use bai_link::JoinToken;
use bai_link::credential::CredentialFile;
use bai_link::join::{JoinConfig, run};
use std::sync::Arc;
use std::time::Duration;

#[tokio::main]
async fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: many_agents HOST:PORT TOKEN N [HEARTBEAT_MS]";
    let manager = args.get(1).ok_or(usage)?.clone();
    let token = JoinToken::parse(args.get(2).ok_or(usage)?)?;
    let n: usize = args.get(3).and_then(|s| s.parse().ok()).ok_or(usage)?;
    let heartbeat =
        Duration::from_millis(args.get(4).and_then(|s| s.parse().ok()).unwrap_or(10_000));
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let prefix = format!("load-{}", std::process::id());
    for i in 0..n {
        let id = format!("{prefix}-{i:04}");
        let agent: Arc<dyn AgentRpc> = Arc::new(DummyAgent::new(DummyAgentConfig {
            id: id.clone(),
            scaling_group: "default".into(),
            capacity: ResourceSlots {
                cpu_milli: 8000,
                mem: 32 << 30,
                ..Default::default()
            },
            start_delay: Duration::ZERO,
            images: vec!["bai/python:3.11-bookworm".into()],
        }));
        let config = JoinConfig {
            managers: vec![manager.clone()],
            token: token.clone(),
            agent_id: id.clone(),
            group: None,
            credentials: Arc::new(CredentialFile(dir.path().join(&id))),
            heartbeat,
            keepalive: heartbeat,
            version: "load".into(),
        };
        tokio::spawn(async move {
            if let Err(e) = run(config, agent).await {
                eprintln!("{e}");
            }
        });
        // Join at a steady pace rather than all in one instant.
        if i % 50 == 49 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    println!("{n} agents started");
    std::future::pending::<()>().await;
    Ok(())
}

//! `baid agent`: this machine's Docker engine (or, with `--backend kubernetes`, pods on a
//! Kubernetes cluster) as an agent of a manager elsewhere. It dials
//! the manager (so it works behind NAT), pins the manager's certificate by the hash in the
//! join token, and serves the agent interface over that one connection, dialing again
//! whenever it breaks.

use crate::backend::{Backend, BackendArgs};
use crate::node::{self, NodeArgs};
use anyhow::{Context, Result};
use bai_core::agent::AgentRpc;
use bai_link::JoinToken;
use bai_link::credential::{CredentialFile, CredentialStore};
use bai_link::join::{JoinConfig, JoinError};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args)]
pub struct AgentArgs {
    /// The manager's agent address, HOST:PORT (what `baid up` prints as "agents join"); with
    /// several managers of one database, all of them, comma-separated: the agent follows
    /// whichever leads.
    #[arg(long, env = "BAI_MANAGER", value_delimiter = ',', required = true)]
    manager: Vec<String>,
    /// A join token from `bai admin agent-token create` (better passed as BAI_AGENT_TOKEN,
    /// so it stays out of the process list).
    #[arg(long, env = "BAI_AGENT_TOKEN", hide_env_values = true)]
    token: String,
    /// The resource group to join; the token decides, a different one is refused.
    #[arg(long, env = "BAI_AGENT_GROUP")]
    group: Option<String>,
    /// This agent's id (default: the one kept in the data dir, else HOSTNAME-xxxx).
    #[arg(long, env = "BAI_AGENT_NAME")]
    name: Option<String>,
    /// Where kernel scratch directories, the agent id and its credential live.
    #[arg(long, env = "BAI_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// A storage host this machine mounts, NAME=PATH (repeatable), at the same path as on the
    /// manager (NFS in production): sessions mounting its folders may run here.
    #[arg(
        long = "storage-host",
        env = "BAI_STORAGE_HOSTS",
        value_name = "NAME=PATH"
    )]
    storage_hosts: Vec<String>,
    /// How often the agent tells the manager it is alive; three silent ones close the link
    /// (either side), so a manager that stopped answering is left, and the next one listed
    /// dialled, within three of them.
    #[arg(long, env = "BAI_AGENT_HEARTBEAT", default_value = "2s", value_parser = crate::parse_duration)]
    heartbeat: Duration,
    #[command(flatten)]
    node: NodeArgs,
    #[command(flatten)]
    backend: BackendArgs,
}

/// The agent id: the flag, else the one this data dir already has, else a new one.
fn agent_id(args: &AgentArgs, data_dir: &std::path::Path) -> Result<String> {
    let file = data_dir.join("agent-id");
    if let Some(n) = &args.name {
        std::fs::write(&file, n).with_context(|| format!("cannot write {}", file.display()))?;
        return Ok(n.clone());
    }
    if let Ok(id) = std::fs::read_to_string(&file)
        && !id.trim().is_empty()
    {
        return Ok(id.trim().to_string());
    }
    let host = std::fs::read_to_string("/etc/hostname").unwrap_or_else(|_| "agent".into());
    let host: String = host
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(40)
        .collect();
    let id = format!("{host}-{}", hex::encode(rand::random::<[u8; 2]>()));
    std::fs::write(&file, &id).with_context(|| format!("cannot write {}", file.display()))?;
    Ok(id)
}

/// How this process joins the manager as agent `id`.
fn join_config(
    args: &AgentArgs,
    token: JoinToken,
    id: String,
    credentials: Arc<dyn CredentialStore>,
) -> JoinConfig {
    JoinConfig {
        managers: args.manager.clone(),
        token,
        agent_id: id,
        group: args.group.clone(),
        credentials,
        heartbeat: args.heartbeat,
        keepalive: args.heartbeat,
        version: env!("CARGO_PKG_VERSION").to_string(),
    }
}

pub async fn run(args: AgentArgs) -> Result<()> {
    let token = match JoinToken::parse(&args.token) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("Error: bad --token: {e}");
            std::process::exit(2);
        }
    };
    let kubernetes = args.backend.backend == Backend::Kubernetes;
    if let Err(why) = crate::credentials::check(args.backend.credentials, kubernetes)
        .and_then(|()| crate::backend::check_enforcement(&args.backend))
    {
        eprintln!("Error: {why}");
        std::process::exit(2);
    }
    let data_dir = args
        .data_dir
        .clone()
        .unwrap_or_else(crate::default_data_dir);
    std::fs::create_dir_all(&data_dir)
        .with_context(|| format!("cannot create the data dir {}", data_dir.display()))?;
    let group = args.group.clone().unwrap_or_else(|| "default".into());
    let mut storage_hosts = std::collections::BTreeMap::new();
    match bai_ground::storage::parse_host_specs(&args.storage_hosts) {
        Ok(hosts) => {
            for (name, path) in hosts {
                if !path.is_dir() {
                    eprintln!(
                        "Error: storage host {name}: {} is not a directory here",
                        path.display()
                    );
                    std::process::exit(2);
                }
                storage_hosts.insert(name, path);
            }
        }
        Err(e) => {
            eprintln!("Error: bad --storage-host: {e}");
            std::process::exit(2);
        }
    }
    // The manager's host as dialled: a multi-node session's tunnel to the manager's own agent.
    let manager_host = args
        .manager
        .first()
        .and_then(|m| m.rsplit_once(':'))
        .map(|(h, _)| h.trim_start_matches('[').trim_end_matches(']').to_string());
    if kubernetes && args.backend.each_node {
        let shared = crate::each_node::Shared {
            name: args.name.clone(),
            group,
            data_dir: data_dir.clone(),
            storage_hosts,
            manager_host,
            credentials: args.backend.credentials,
            // Each node's agent sets its own id and credential store.
            join: join_config(
                &args,
                token,
                String::new(),
                Arc::new(CredentialFile(data_dir.join("agent-credential"))),
            ),
        };
        return crate::each_node::run(&args.backend, &args.node, shared).await;
    }
    let id = agent_id(&args, &data_dir)?;
    let (agent, docker, kube): (Arc<dyn AgentRpc>, _, _) = match args.backend.backend {
        Backend::Docker => {
            let docker = node::docker_agent(
                &args.node,
                &id,
                &group,
                &data_dir,
                storage_hosts,
                manager_host,
            )
            .await?;
            (Arc::new(docker.clone()), Some(docker), None)
        }
        Backend::Kubernetes => {
            let kube = crate::backend::kubernetes_agent(crate::backend::kubernetes_config(
                &args.backend,
                &args.node,
                &id,
                &group,
                &data_dir,
                storage_hosts,
                manager_host,
                None,
            )?)
            .await?;
            println!(
                "bai agent {id}: Kubernetes node {} (namespace {})",
                kube.node(),
                kube.namespace()
            );
            (Arc::new(kube.clone()), None, Some(kube))
        }
    };
    let info = agent.info().await?;
    println!(
        "bai agent {} ({} cores, {} memory, {} images) joining {}",
        info.id,
        bai_core::resources::format_cpu(info.capacity.cpu_milli),
        bai_core::resources::format_bytes(info.capacity.mem),
        info.images.len(),
        args.manager.join(", ")
    );
    let credentials = crate::credentials::store(
        args.backend.credentials,
        data_dir.join("agent-credential"),
        kube.as_ref(),
    );
    let config = join_config(&args, token, id, credentials);
    let ended = tokio::select! {
        r = bai_link::join::run(config, agent) => match r {
            Ok(()) => Ok(()),
            Err(JoinError::Refused(reason)) => {
                eprintln!("Error: the manager refused this agent: {reason}");
                std::process::exit(3);
            }
            Err(e) => Err(e.into()),
        },
        _ = crate::shutdown_signal() => Ok(()),
    };
    if let Some(docker) = docker {
        docker.stop().await;
    }
    if let Some(kube) = kube {
        kube.stop().await;
    }
    ended
}

//! Which agents of a group may take a session besides their free slots: those that have its
//! image and, for a remote agent, the storage hosts of the folders it mounts (declared with
//! `baid agent --storage-host NAME=PATH` at the path the manager has them). An agent inside
//! the manager's process has every storage host. An agent with a registry may also take an
//! image the cluster's registry holds (it pulls it). Computed once per distinct need per pass.

use super::Scheduler;
use bai_ground::agents::AgentHandle;
use bai_sched::Eligible;
use bai_store::PendingRow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// What a session needs of its agent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Needs {
    pub image: String,
    /// Storage hosts with their roots on the manager.
    pub hosts: Vec<(String, String)>,
    /// The cluster's registry holds the image: an agent with a registry may pull it.
    pub in_registry: bool,
}

pub fn needs(scheduler: &Scheduler, row: &PendingRow) -> Needs {
    let mut hosts: Vec<(String, String)> = row
        .mount_paths
        .iter()
        .filter_map(|p| {
            scheduler
                .storage
                .hosts()
                .iter()
                .find(|h| std::path::Path::new(p).starts_with(&h.root))
                .map(|h| (h.name.clone(), h.root.display().to_string()))
        })
        .collect();
    hosts.sort();
    hosts.dedup();
    Needs {
        image: row.image.clone(),
        hosts,
        in_registry: scheduler.registry.holds(&row.image),
    }
}

fn holds(a: &AgentHandle, image: &str) -> bool {
    let info = a.info.read().unwrap_or_else(|p| p.into_inner());
    info.images.iter().any(|i| i.name == image)
}

fn has(a: &AgentHandle, n: &Needs) -> bool {
    let info = a.info.read().unwrap_or_else(|p| p.into_inner());
    (info.images.iter().any(|i| i.name == n.image) || (n.in_registry && info.registry.is_some()))
        && (a.remote.is_none()
            || n.hosts
                .iter()
                .all(|(name, root)| info.storage_hosts.get(name) == Some(root)))
}

/// The agents of `group` that meet `n`, or None when all of them do (no restriction).
pub fn eligible(group: &str, agents: &[Arc<AgentHandle>], n: &Needs) -> Option<Eligible> {
    let ok: HashSet<String> = agents
        .iter()
        .filter(|a| has(a, n))
        .map(|a| a.id.clone())
        .collect();
    // Of those, the agents that hold the image: tried first, the others would pull it.
    let holders: HashSet<String> = agents
        .iter()
        .filter(|a| ok.contains(&a.id) && holds(a, &n.image))
        .map(|a| a.id.clone())
        .collect();
    let preferred = (!holders.is_empty() && holders.len() < ok.len()).then(|| Arc::new(holders));
    if ok.len() == agents.len() {
        return preferred.map(|p| Eligible {
            agents: Arc::new(ok),
            why: String::new(),
            preferred: Some(p),
        });
    }
    let hosts: Vec<&str> = n.hosts.iter().map(|(h, _)| h.as_str()).collect();
    let with_image = agents
        .iter()
        .filter(|a| {
            a.info
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .images
                .iter()
                .any(|i| i.name == n.image)
        })
        .count();
    let why = if with_image == 0 {
        format!("no agent of group {group} has image {}", n.image)
    } else if ok.is_empty() {
        format!(
            "no agent of group {group} with image {} mounts storage host {}",
            n.image,
            hosts.join(", ")
        )
    } else {
        let mut names: Vec<&str> = ok.iter().map(String::as_str).collect();
        names.sort();
        format!(
            "it needs image {}{}, which only {} of group {group} has",
            n.image,
            if hosts.is_empty() {
                String::new()
            } else {
                format!(" and storage host {}", hosts.join(", "))
            },
            names.join(", ")
        )
    };
    Some(Eligible {
        agents: Arc::new(ok),
        why,
        preferred,
    })
}

/// Per pass: one answer per distinct need (sessions without folders, the usual case, are
/// looked up by their image alone, without allocating).
#[derive(Default)]
pub struct Cache {
    by_image: HashMap<String, Option<Eligible>>,
    by_need: HashMap<Needs, Option<Eligible>>,
}

impl Cache {
    pub fn get(
        &mut self,
        scheduler: &Scheduler,
        group: &str,
        agents: &[Arc<AgentHandle>],
        row: &PendingRow,
    ) -> Option<Eligible> {
        if row.mount_paths.is_empty() {
            if let Some(e) = self.by_image.get(&row.image) {
                return e.clone();
            }
            let n = needs(scheduler, row);
            let e = eligible(group, agents, &n);
            self.by_image.insert(row.image.clone(), e.clone());
            return e;
        }
        let n = needs(scheduler, row);
        self.by_need
            .entry(n)
            .or_insert_with_key(|n| eligible(group, agents, n))
            .clone()
    }
}

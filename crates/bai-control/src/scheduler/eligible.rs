//! Which agents of a group may take a session besides their free slots: those that have its
//! image and, for a remote agent, the storage hosts of the folders it mounts (declared with
//! `baid agent --storage-host NAME=PATH` at the path the manager has them). An agent inside
//! the manager's process has every storage host. An agent with a registry may also take an
//! image the cluster's registry holds (it pulls it). Computed once per distinct need per pass.

use super::Scheduler;
use bai_core::agent::KernelMost;
use bai_ground::agents::AgentHandle;
use bai_sched::Eligible;
use bai_store::PendingRow;
use std::collections::{BTreeMap, HashMap, HashSet};
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

/// The agents of a group that cannot enforce egress rules (`AgentInfo::egress_error`), with
/// why: read once per group and pass, not once per session.
pub fn blind(agents: &[Arc<AgentHandle>]) -> Vec<(String, String)> {
    agents
        .iter()
        .filter_map(|a| {
            let info = a.info.read().unwrap_or_else(|p| p.into_inner());
            info.egress_error.clone().map(|why| (a.id.clone(), why))
        })
        .collect()
}

/// Narrows `e` (None: every agent of the group) to the agents that can enforce the group's
/// egress policy `mode`: an agent that cannot (in `blind`, the group's [`blind`] agents, read
/// once per pass) takes only sessions of `open` groups. When that leaves none, the pending
/// reason says so, with the first such agent's own reason (a Kubernetes agent without
/// `--network-policies enforced`, a Docker agent without nftables).
pub fn enforcing(
    e: Option<Eligible>,
    group: &str,
    mode: bai_core::egress::EgressMode,
    agents: &[Arc<AgentHandle>],
    blind: &[(String, String)],
) -> Option<Eligible> {
    if mode == bai_core::egress::EgressMode::Open {
        return e;
    }
    narrow(
        e,
        agents.iter().map(|a| a.id.as_str()),
        blind,
        egress_said(group, mode.as_str()),
    )
}

/// The pending reason of [`enforcing`].
fn egress_said<'a>(group: &'a str, mode: &'a str) -> impl FnOnce(bool, &str, &str) -> String + 'a {
    move |none_left, agent, why| {
        if none_left {
            format!(
                "no agent of group {group} can enforce its egress policy {mode} ({agent}: {why})"
            )
        } else {
            format!(
                "only the agents of group {group} that can enforce its egress policy {mode} may \
                 take it ({agent}: {why})"
            )
        }
    }
}

/// The agents of a group that give one kernel less than they have of some slot
/// ([`bai_core::agent::AgentInfo::kernel_most`]: GPUs shared with MPS), with their limits:
/// read once per group and pass, not once per session.
pub fn limited(agents: &[Arc<AgentHandle>]) -> Vec<(String, BTreeMap<String, KernelMost>)> {
    agents
        .iter()
        .filter_map(|a| {
            let info = a.info.read().unwrap_or_else(|p| p.into_inner());
            (!info.kernel_most.is_empty()).then(|| (a.id.clone(), info.kernel_most.clone()))
        })
        .collect()
}

/// Narrows `e` (None: every agent of the group) to the agents that give one kernel of `row`
/// all it asks for (its request divided by its cluster size): of `limited` (the group's
/// [`limited`] agents), those that give a kernel less are left out, and the pending reason
/// says which limit, when it leaves none. Nothing is computed in a group without such agents.
pub fn within_kernel_most(
    e: Option<Eligible>,
    group: &str,
    row: &PendingRow,
    agents: &[Arc<AgentHandle>],
    limited: &[(String, BTreeMap<String, KernelMost>)],
) -> Option<Eligible> {
    if limited.is_empty() {
        return e;
    }
    let kernel = row.requested_slots.divided(u64::from(row.cluster_size));
    narrow(
        e,
        agents.iter().map(|a| a.id.as_str()),
        &over_limits(limited, &kernel),
        kernel_said(group),
    )
}

/// Of `limited`, the agents that give one kernel less than `kernel`, each with the limit
/// in words.
fn over_limits(
    limited: &[(String, BTreeMap<String, KernelMost>)],
    kernel: &bai_core::ResourceSlots,
) -> Vec<(String, String)> {
    limited
        .iter()
        .filter_map(|(id, most)| {
            bai_core::agent::over_kernel_most(most, kernel).map(|o| (id.clone(), o.on(id)))
        })
        .collect()
}

/// The pending reason of [`within_kernel_most`].
fn kernel_said(group: &str) -> impl FnOnce(bool, &str, &str) -> String + '_ {
    move |none_left, _, on| {
        if none_left {
            format!("no agent of group {group} can give one kernel all it asks for: {on}")
        } else {
            format!(
                "only the agents of group {group} that give one kernel all it asks for may take \
                 it: {on}"
            )
        }
    }
}

/// Narrows `e` (None: every agent in `all`) to the agents not in `left_out` (each with why it
/// is). The reason, when some are left out, is `said(none left, first left out, its why)`,
/// after what `e` said already where that leaves none.
fn narrow<'a>(
    e: Option<Eligible>,
    all: impl Iterator<Item = &'a str>,
    left_out: &[(String, String)],
    said: impl FnOnce(bool, &str, &str) -> String,
) -> Option<Eligible> {
    if left_out.is_empty() {
        return e;
    }
    let out = |id: &str| left_out.iter().any(|(b, _)| b == id);
    let ok: HashSet<String> = match &e {
        Some(e) => e.agents.iter().filter(|a| !out(a)).cloned().collect(),
        None => all.filter(|a| !out(a)).map(str::to_string).collect(),
    };
    let (agent, why) = &left_out[0];
    let words = said(ok.is_empty(), agent, why);
    let why = match &e {
        Some(e) if !e.why.is_empty() && !ok.is_empty() => e.why.clone(),
        Some(e) if !e.why.is_empty() => format!("{}; {words}", e.why),
        _ => words,
    };
    let preferred = e
        .and_then(|e| e.preferred)
        .map(|p| {
            p.iter()
                .filter(|a| ok.contains(*a))
                .cloned()
                .collect::<HashSet<_>>()
        })
        .filter(|p| !p.is_empty())
        .map(Arc::new);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn blind() -> Vec<(String, String)> {
        vec![("k8s".to_string(), "not enforced here".to_string())]
    }

    #[test]
    fn agents_that_cannot_enforce_are_left_out_with_their_reason() {
        let e = narrow(
            None,
            ["k8s", "dock"].into_iter(),
            &blind(),
            egress_said("g", "default"),
        )
        .expect("some");
        assert_eq!(*e.agents, HashSet::from(["dock".to_string()]));
        let e = narrow(
            None,
            ["k8s"].into_iter(),
            &blind(),
            egress_said("g", "closed"),
        )
        .expect("some");
        assert!(e.agents.is_empty());
        assert_eq!(
            e.why,
            "no agent of group g can enforce its egress policy closed (k8s: not enforced here)"
        );
        // What the session needs otherwise is kept, and said first.
        let image = Eligible {
            agents: Arc::new(HashSet::from(["k8s".to_string()])),
            why: "it needs image X, which only k8s of group g has".into(),
            preferred: None,
        };
        let e = narrow(
            Some(image.clone()),
            std::iter::empty(),
            &blind(),
            egress_said("g", "default"),
        )
        .expect("some");
        assert!(e.agents.is_empty());
        assert!(
            e.why.starts_with("it needs image X") && e.why.contains("(k8s: not enforced here)")
        );
        assert!(narrow(None, ["a"].into_iter(), &[], egress_said("g", "default")).is_none());
    }

    /// An agent that gives one kernel less of a slot than the session's kernel asks (an MPS
    /// node: one slice) is left out, and the reason names its limit; a kernel within the
    /// limit may go anywhere.
    #[test]
    fn agents_that_give_a_kernel_less_than_it_asks_are_left_out() {
        let limited = vec![(
            "mps".to_string(),
            BTreeMap::from([(
                "cuda.shares".to_string(),
                KernelMost {
                    amount: 250,
                    why: "its GPUs are shared with MPS 4 ways".into(),
                },
            )]),
        )];
        let kernel = |milli: u64| bai_core::ResourceSlots {
            cpu_milli: 500,
            mem: 1 << 28,
            accel: BTreeMap::from([("cuda.shares".to_string(), milli)]),
        };
        assert!(over_limits(&limited, &kernel(250)).is_empty());
        let over = over_limits(&limited, &kernel(500));
        let e = narrow(None, ["mps", "sliced"].into_iter(), &over, kernel_said("g")).expect("some");
        assert_eq!(*e.agents, HashSet::from(["sliced".to_string()]));
        let e = narrow(None, ["mps"].into_iter(), &over, kernel_said("g")).expect("some");
        assert!(e.agents.is_empty());
        assert_eq!(
            e.why,
            "no agent of group g can give one kernel all it asks for: a kernel may have at \
             most cuda.shares=0.25 on mps (its GPUs are shared with MPS 4 ways)"
        );
    }
}

//! The bridge networks of cluster sessions on this node, and which session holds which.
//!
//! Making a bridge and removing it cost the engine tens of milliseconds each, on the path of
//! every single-node cluster start and end. So when the last kernel of such a session goes,
//! its bridge (empty now, holding nothing of the session) is kept as this agent's one spare,
//! and the next single-node cluster session takes it instead of making one. A second spare
//! is removed as before; the spare is removed when the agent stops, and of the bridges a
//! crash left, the agent's start keeps at most one empty one as its spare.
//! Such networks are named `bai-cluster-net-<id>`, not after a session (the engine cannot
//! rename a network); which session holds which is kept here while it lives, and on each
//! container in the `ai.bai.network` label.
//! A multi-node session's bridge is made for it (its addresses and bridge name are the
//! session's), under the session's name, as before.

use super::{Inner, LABEL_AGENT, LABEL_SESSION, overlay};
use crate::error::{is_not_found, runtime};
use bai_core::agent::{AgentError, KernelSpec};
use bollard::models::NetworkCreateRequest;
use std::collections::HashMap;
use uuid::Uuid;

/// Label on containers (the network they are on) and on networks bai made.
pub const LABEL_NETWORK: &str = "ai.bai.network";

/// Prefix of every network bai makes for cluster sessions.
const PREFIX: &str = "bai-cluster-";
/// Prefix of the pooled ones (single-node sessions).
const POOLED: &str = "bai-cluster-net-";

/// The spare bridge and the networks held by sessions whose kernels are being made.
#[derive(Debug, Default)]
pub struct Networks {
    spare: Option<String>,
    held: HashMap<Uuid, String>,
}

impl Networks {
    /// The network `session` holds, if its kernels are being made here now.
    fn of(&self, session: Uuid) -> Option<&String> {
        self.held.get(&session)
    }

    /// Forgets `name` (removed from the engine).
    fn forget(&mut self, name: &str) {
        self.held.retain(|_, n| n != name);
        if self.spare.as_deref() == Some(name) {
            self.spare = None;
        }
    }

    /// What the removal of a kernel of `session` on network `name` does to the network.
    fn on_release(&self, name: &str, session: Option<Uuid>) -> Step {
        let ours = session.and_then(|s| self.held.get(&s)).map(String::as_str) == Some(name);
        if self.spare.as_deref() == Some(name) || (!ours && self.held.values().any(|n| n == name)) {
            return Step::Leave;
        }
        if name.starts_with(POOLED) && self.spare.is_none() {
            return Step::SpareIfEmpty;
        }
        Step::Remove
    }

    /// Whether `name` is the spare or held by a session being made (not to be pruned).
    fn in_use(&self, name: &str) -> bool {
        self.spare.as_deref() == Some(name) || self.held.values().any(|n| n == name)
    }
}

/// See [`Networks::on_release`].
#[derive(Debug, PartialEq, Eq)]
enum Step {
    /// The spare already, or another session's by now.
    Leave,
    /// Kept as the spare if no container is on it any more.
    SpareIfEmpty,
    /// Removed if no container is on it any more.
    Remove,
}

async fn make(
    inner: &Inner,
    name: &str,
    session: Option<Uuid>,
    settings: Option<(HashMap<String, String>, bollard::models::Ipam)>,
) -> Result<(), AgentError> {
    let mut labels = HashMap::from([
        (LABEL_AGENT.to_string(), inner.config.agent_id.clone()),
        (LABEL_NETWORK.to_string(), name.to_string()),
    ]);
    if let Some(s) = session {
        labels.insert(LABEL_SESSION.to_string(), s.to_string());
    }
    let (options, ipam) = match settings {
        Some((o, i)) => (Some(o), Some(i)),
        None => (None, None),
    };
    let req = NetworkCreateRequest {
        name: name.to_string(),
        driver: Some("bridge".into()),
        options,
        ipam,
        labels: Some(labels),
        ..Default::default()
    };
    inner
        .docker
        .create_network(req)
        .await
        .map_err(|e| runtime(format_args!("cannot make network {name}"), e))?;
    tracing::info!(network = name, session = ?session, "cluster network made");
    Ok(())
}

fn pooled_name() -> String {
    format!("{POOLED}{}", Uuid::new_v4().simple())
}

/// The network the kernel `spec` joins, made or taken now unless its session already holds
/// one here (kernels of one session are made at once: the first takes it, the others find
/// it). `name` is the session's network name, used for a multi-node session's bridge.
pub async fn ensure(inner: &Inner, spec: &KernelSpec, name: &str) -> Result<String, AgentError> {
    let mut nets = inner.networks.lock().await;
    if let Some(n) = nets.of(spec.session_id) {
        return Ok(n.clone());
    }
    let overlay = spec.cluster.as_ref().and_then(|c| c.overlay.as_ref());
    let Some(o) = overlay else {
        let taken = match nets.spare.take() {
            Some(n) => n,
            None => {
                let n = pooled_name();
                make(inner, &n, None, None).await?;
                n
            }
        };
        nets.held.insert(spec.session_id, taken.clone());
        return Ok(taken);
    };
    if inner.docker.inspect_network(name, None).await.is_err() {
        let settings = overlay::network_settings(spec.session_id, o);
        if let Err(e) = make(inner, name, Some(spec.session_id), Some(settings.clone())).await {
            // The session's subnet is its own in the cluster; a bai network on this engine
            // holding it with no container is a leftover of an agent that crashed (perhaps
            // under another id, as test machines are): it goes, and the make is tried again.
            if !e.to_string().contains("overlap") || !remove_stale(inner, &o.subnet).await {
                return Err(e);
            }
            make(inner, name, Some(spec.session_id), Some(settings)).await?;
        }
        if let Err(e) = overlay::join(inner, spec.session_id, o).await {
            drop(nets);
            release(inner, name, Some(spec.session_id)).await;
            return Err(e);
        }
    }
    nets.held.insert(spec.session_id, name.to_string());
    Ok(name.to_string())
}

/// Removes the spare bridge (the agent is stopping: a new agent would not know it).
pub async fn drop_spare(inner: &Inner) {
    let spare = inner.networks.lock().await.spare.take();
    if let Some(n) = spare {
        remove(inner, &n).await;
    }
}

/// Removes a network once no container is on it: the last kernel's removal removes it (or
/// keeps it as the spare), the others are refused by the engine, which is fine. `session`
/// is the session of the kernel just removed: a pooled bridge that another session holds by
/// now is not this one's to touch.
pub async fn release(inner: &Inner, name: &str, session: Option<Uuid>) {
    {
        let mut nets = inner.networks.lock().await;
        match nets.on_release(name, session) {
            Step::Leave => return,
            Step::Remove => {}
            Step::SpareIfEmpty => {
                if is_empty(inner, name).await {
                    nets.held.retain(|_, n| n != name);
                    nets.spare = Some(name.to_string());
                    tracing::debug!(network = name, "cluster network kept as the spare");
                    return;
                }
            }
        }
    }
    remove(inner, name).await;
}

/// Whether the network exists and no container is on it.
async fn is_empty(inner: &Inner, name: &str) -> bool {
    inner
        .docker
        .inspect_network(name, None)
        .await
        .is_ok_and(|n| n.containers.is_none_or(|c| c.is_empty()))
}

/// The engine's networks with a label filter (`key` or `key=value`).
async fn labelled(
    inner: &Inner,
    label: String,
) -> Result<Vec<bollard::models::Network>, bollard::errors::Error> {
    let opts = bollard::query_parameters::ListNetworksOptions {
        filters: Some(HashMap::from([("label".to_string(), vec![label])])),
    };
    inner.docker.list_networks(Some(opts)).await
}

async fn remove(inner: &Inner, name: &str) {
    match inner.docker.remove_network(name).await {
        Ok(()) => {
            tracing::info!(network = name, "cluster network removed");
            inner.networks.lock().await.forget(name);
            super::egress::unbind(inner, name).await;
            if let Some(session) = name
                .strip_prefix(PREFIX)
                .and_then(|s| Uuid::parse_str(s).ok())
            {
                overlay::leave(session).await;
            }
        }
        Err(e) if is_not_found(&e) => {}
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 403 | 409,
            ..
        }) => {}
        Err(e) => tracing::warn!(network = name, error = %e, "cannot remove cluster network"),
    }
}

/// Removes bai's networks (of any agent) on `subnet` that no container uses. Whether one was.
async fn remove_stale(inner: &Inner, subnet: &str) -> bool {
    let Ok(listed) = labelled(inner, LABEL_NETWORK.to_string()).await else {
        return false;
    };
    let mut removed = false;
    for n in listed {
        let on_subnet = n
            .ipam
            .as_ref()
            .and_then(|i| i.config.as_ref())
            .is_some_and(|c| c.iter().any(|c| c.subnet.as_deref() == Some(subnet)));
        let Some(name) = n.name.filter(|_| on_subnet) else {
            continue;
        };
        if is_empty(inner, &name).await && inner.docker.remove_network(&name).await.is_ok() {
            tracing::warn!(
                network = name,
                subnet,
                "removed a stale cluster network on the session's subnet"
            );
            removed = true;
        }
    }
    removed
}

/// Removes this agent's cluster networks that no container uses (after a crash), except the
/// spare and those being joined now; with no spare yet, one empty single-node bridge is kept
/// as the spare instead (as any release does).
pub async fn prune(inner: &Inner) {
    let mine = format!("{LABEL_AGENT}={}", inner.config.agent_id);
    let listed = match labelled(inner, mine).await {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "cannot list cluster networks");
            return;
        }
    };
    let names: Vec<String> = {
        let nets = inner.networks.lock().await;
        listed
            .into_iter()
            .filter_map(|n| n.name)
            .filter(|n| n.starts_with(PREFIX) && !nets.in_use(n))
            .collect()
    };
    for n in names {
        release(inner, &n, None).await;
    }
    overlay::prune().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spare_and_held_networks_are_in_use_until_forgotten() {
        let mut n = Networks {
            spare: Some("bai-cluster-net-a".into()),
            ..Default::default()
        };
        let s = Uuid::new_v4();
        n.held.insert(s, "bai-cluster-net-b".into());
        assert!(n.in_use("bai-cluster-net-a"));
        assert_eq!(n.of(s).map(String::as_str), Some("bai-cluster-net-b"));
        assert!(!n.in_use("bai-cluster-net-c"));
        n.forget("bai-cluster-net-b");
        assert_eq!(n.of(s), None);
        n.forget("bai-cluster-net-a");
        assert!(!n.in_use("bai-cluster-net-a"));
    }

    #[test]
    fn a_late_release_never_touches_a_bridge_another_session_holds() {
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let mut n = Networks::default();
        let net = pooled_name();
        n.held.insert(a, net.clone());
        // a's kernels go: the bridge may become the spare.
        assert_eq!(n.on_release(&net, Some(a)), Step::SpareIfEmpty);
        n.held.remove(&a);
        n.spare = Some(net.clone());
        assert_eq!(n.on_release(&net, Some(a)), Step::Leave);
        // b takes it; a's late removal must leave it alone.
        n.spare = None;
        n.held.insert(b, net.clone());
        assert_eq!(n.on_release(&net, Some(a)), Step::Leave);
        assert_eq!(n.on_release(&net, None), Step::Leave);
        assert_eq!(n.on_release(&net, Some(b)), Step::SpareIfEmpty);
        // With a spare already, an emptied bridge is removed; a multi-node one always is.
        n.spare = Some(pooled_name());
        assert_eq!(n.on_release(&net, Some(b)), Step::Remove);
        let overlay = format!("{PREFIX}{b}");
        assert_eq!(n.on_release(&overlay, None), Step::Remove);
    }

    #[test]
    fn pooled_names_are_cluster_networks_and_not_sessions() {
        let a = pooled_name();
        assert!(a.starts_with(PREFIX));
        assert!(Uuid::parse_str(a.strip_prefix(PREFIX).unwrap_or_default()).is_err());
        assert_ne!(a, pooled_name());
    }
}

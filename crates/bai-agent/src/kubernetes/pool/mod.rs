//! Warm pools on Kubernetes: pods started ahead of time for the shapes the manager asks for
//! (`AgentRpc::warm_pool`), each `bai-pool-<id>` with a runner in its pool mode, waiting for
//! the session it will be given. A pool pod is nobody's: it carries the agent's label but no
//! kernel's or session's, so no listing of kernels shows it, and it holds no user data.
//!
//! A create whose kernel fits ([`fits`]) takes a ready pod of its shape ([`claim`]): its
//! directory is renamed to the kernel's (the pod's hostPath mounts follow it), the owner's
//! dotfiles are written (a detached pool pod's through its runner, over the pod network,
//! its Secret and token becoming the kernel's), its NetworkPolicy made where policies are enforced, the pod
//! relabelled as the kernel's, and the runner given the session's whole environment. Any
//! failure there deletes the pool pod and the create goes the cold way. How many pods a
//! pool keeps follows the demand for its shape, as on Docker ([`Demand`]: a burst of misses
//! grows it, an idle pool keeps one). [`fill`] makes pool pods again in the background, one
//! at a time, only into room the node has free; a cold
//! create that Kubernetes cannot place while pool pods hold room deletes them
//! ([`room::evict_for`]), so the pools never keep a session waiting.

pub mod claim;
pub mod fill;
pub mod make;
pub mod room;

use super::Inner;
use super::labels;
use crate::pool_demand::Demand;
use bai_core::agent::KernelSpec;
use bai_core::pool::{PoolCounters, PoolReport, PoolShape, PoolStatus, PoolTarget};
use kube::api::ListParams;
use uuid::Uuid;

/// Label on a pool pod: its id (the pod is `bai-pool-<id>` until claimed, and keeps the
/// name after).
pub const LABEL_POOL: &str = "ai.bai.pool";

/// A pool pod whose runner answers, ready to be claimed.
#[derive(Debug, Clone)]
pub struct Ready {
    pub id: Uuid,
    pub shape: PoolShape,
    /// The pod's uid (what its NetworkPolicy names as owner at the claim).
    pub uid: String,
    /// A detached pool pod's runner at its pod IP, with its token (`None`: on its socket).
    pub net: Option<crate::runner::RunnerAt>,
}

/// The pools of this agent.
#[derive(Debug, Default)]
pub struct Pools {
    pub targets: Vec<PoolTarget>,
    pub ready: Vec<Ready>,
    /// The pool pods being made, by id.
    pub making: Vec<(Uuid, PoolShape)>,
    /// The demand for each shape: how many each pool keeps now (bursts, idle shrinking).
    pub demand: Demand,
    pub counters: PoolCounters,
}

impl Pools {
    /// The manager's targets for this agent's pools.
    pub fn set_targets(&mut self, targets: Vec<PoolTarget>) {
        self.demand.targets_set(&targets);
        self.targets = targets;
    }

    /// A create of `shape` asked its pool: a hit, or a miss that grows the pool by one
    /// while the shape is asked for (a burst of starts).
    pub fn asked(&mut self, shape: &PoolShape, hit: bool) {
        self.demand.asked(shape);
        if !hit {
            self.counters.misses += 1;
            self.demand.grow(shape);
        }
    }

    /// How many of `shape` are ready or being made.
    pub fn have(&self, shape: &PoolShape) -> usize {
        self.ready.iter().filter(|r| &r.shape == shape).count()
            + self.making.iter().filter(|(_, m)| m == shape).count()
    }

    /// The first target with fewer pods than its pool keeps now.
    pub fn wanting(&self) -> Option<PoolShape> {
        self.targets
            .iter()
            .find(|t| self.have(&t.shape) < self.demand.kept(t) as usize)
            .map(|t| t.shape.clone())
    }

    /// Ready pods past what their pools keep now (a target gone or lowered, a pool idle);
    /// what a burst added to an idle pool is forgotten first.
    pub fn unwanted(&mut self) -> Vec<Ready> {
        self.demand.forget_idle();
        let mut keep: Vec<Ready> = Vec::new();
        let mut out = Vec::new();
        for r in self.ready.drain(..) {
            let count = self
                .targets
                .iter()
                .find(|t| t.shape == r.shape)
                .map_or(0, |t| self.demand.kept(t) as usize);
            if keep.iter().filter(|k| k.shape == r.shape).count() < count {
                keep.push(r);
            } else {
                out.push(r);
            }
        }
        self.ready = keep;
        out
    }

    /// Takes a ready pod of `shape`.
    pub fn take(&mut self, shape: &PoolShape) -> Option<Ready> {
        let i = self.ready.iter().position(|r| &r.shape == shape)?;
        Some(self.ready.remove(i))
    }

    pub fn report(&self) -> PoolReport {
        PoolReport {
            pools: self
                .targets
                .iter()
                .map(|t| PoolStatus {
                    shape: t.shape.to_string(),
                    target: t.count,
                    kept: self.demand.kept(t),
                    ready: self.ready.iter().filter(|r| r.shape == t.shape).count() as u32,
                    making: self.making.iter().filter(|(_, m)| *m == t.shape).count() as u32,
                })
                .collect(),
            counters: self.counters,
        }
    }
}

/// The shape a create's kernel would take from a pool, if it can take one at all: the one
/// kernel of its session, with no accelerator (a running pod cannot be given a device
/// afterwards), and data folders only under the home where `folders` (the pool pods' homes
/// receive mounts made on the node: [`make::home_propagates`]); a folder elsewhere would be
/// a volume the running pod lacks.
pub fn fits(spec: &KernelSpec, folders: bool) -> Option<PoolShape> {
    let alone = spec.cluster.as_ref().is_none_or(|c| c.size <= 1);
    let mounts_ok =
        spec.mounts.is_empty() || (folders && crate::pool_folders::all_in_home(&spec.mounts));
    let plain = mounts_ok && spec.slots.accel.values().all(|v| *v == 0);
    (alone && plain).then(|| PoolShape {
        image: spec.image.clone(),
        cpu_milli: spec.slots.cpu_milli,
        mem: spec.slots.mem,
        shmem: spec.shmem,
    })
}

/// The selector of this agent's pool pods.
pub fn selector(agent: &str) -> String {
    format!("{},{LABEL_POOL}", labels::agent_selector(agent))
}

/// At the agent's start: pool pods a previous run of it left (unclaimed, so nobody's) and
/// their directories (or Secrets) go.
pub async fn sweep(inner: &Inner) {
    let lp = ListParams::default().labels(&selector(&inner.config.agent_id));
    let pods = match inner.pods.list(&lp).await {
        Ok(l) => l.items,
        Err(e) => {
            tracing::warn!(error = %e, "cannot list the pool pods a previous run left");
            return;
        }
    };
    for p in pods {
        if labels::kernel_of(p.metadata.labels.as_ref()).is_some() {
            continue; // claimed: a kernel, re-adopted by the watch
        }
        let Some(id) = p
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(LABEL_POOL))
            .and_then(|v| v.parse::<Uuid>().ok())
        else {
            continue;
        };
        make::remove(inner, id).await;
    }
    // Detached pool pods' Secrets a crash left before their pods owned them.
    if let Ok(list) = inner.secrets.list(&lp).await {
        for sec in list.items {
            let owned = labels::owned(&sec.metadata);
            if let (false, Some(name)) = (owned, sec.metadata.name.as_deref()) {
                super::secret::delete(inner, name).await;
            }
        }
    }
    let dir = make::pool_dir(inner);
    match crate::pool_folders::release(&dir) {
        Ok(()) => {
            let _ = tokio::fs::remove_dir_all(&dir).await;
        }
        Err(e) => tracing::error!(error = %e, "the pool pods' directory is kept"),
    }
}

/// The agent is stopping: no more targets, and every pool pod (ready or being made) goes.
pub async fn stop(inner: &Inner) {
    let ids: Vec<Uuid> = {
        let mut pools = inner.pools();
        pools.targets.clear();
        let mut ids: Vec<Uuid> = pools.ready.drain(..).map(|r| r.id).collect();
        ids.extend(pools.making.drain(..).map(|(id, _)| id));
        ids
    };
    for id in ids {
        make::remove(inner, id).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(mem: u64) -> PoolShape {
        PoolShape {
            image: "bai/python:3.11-bookworm".into(),
            cpu_milli: 500,
            mem,
            shmem: 64 << 20,
        }
    }

    fn ready(mem: u64) -> Ready {
        Ready {
            id: Uuid::new_v4(),
            shape: shape(mem),
            uid: String::new(),
            net: None,
        }
    }

    #[test]
    fn pools_make_what_targets_lack_and_give_up_what_none_wants() {
        let mut p = Pools::default();
        p.set_targets(vec![PoolTarget {
            shape: shape(1 << 28),
            count: 2,
        }]);
        assert_eq!(p.wanting(), Some(shape(1 << 28)));
        p.ready.push(ready(1 << 28));
        p.making.push((Uuid::new_v4(), shape(1 << 28)));
        assert_eq!(p.wanting(), None, "one ready and one being made");
        p.ready.push(ready(1 << 29));
        p.ready.push(ready(1 << 28));
        let gone = p.unwanted();
        assert_eq!(gone.len(), 1, "the other shape's pod goes");
        assert_eq!(gone[0].shape, shape(1 << 29));
        assert_eq!(p.ready.len(), 2, "both of the target's shape stay");
        p.targets[0].count = 1;
        assert_eq!(p.unwanted().len(), 1, "a lowered target gives one up");
        let r = p.report();
        assert_eq!(
            (r.pools[0].target, r.pools[0].ready, r.pools[0].making),
            (1, 1, 1)
        );
        assert!(p.take(&shape(1 << 28)).is_some());
        assert!(p.take(&shape(1 << 28)).is_none());
    }

    #[test]
    fn a_burst_of_misses_grows_a_pool_and_an_idle_pool_shrinks_to_one() {
        let mut p = Pools::default();
        p.set_targets(vec![PoolTarget {
            shape: shape(1 << 28),
            count: 2,
        }]);
        p.ready.push(ready(1 << 28));
        p.ready.push(ready(1 << 28));
        assert_eq!(p.wanting(), None, "the target's two are there");
        // Two creates found the pool empty: it keeps two more while the shape is asked for.
        p.asked(&shape(1 << 28), false);
        p.asked(&shape(1 << 28), false);
        assert_eq!(p.counters.misses, 2);
        assert_eq!(p.report().pools[0].kept, 4);
        assert_eq!(p.wanting(), Some(shape(1 << 28)));
        p.ready.push(ready(1 << 28));
        p.ready.push(ready(1 << 28));
        assert_eq!(p.wanting(), None);
        assert!(p.unwanted().is_empty());
        // Nobody asks any more: the pool keeps one, and the burst is forgotten.
        p.demand.idle_after = std::time::Duration::ZERO;
        assert_eq!(p.unwanted().len(), 3);
        assert_eq!(p.ready.len(), 1);
        assert_eq!(p.report().pools[0].kept, 1);
        p.demand.idle_after = crate::pool_demand::IDLE_AFTER;
        p.asked(&shape(1 << 28), true);
        assert_eq!(
            p.report().pools[0].kept,
            2,
            "asked again: the target, no old burst"
        );
    }

    #[test]
    fn only_a_lone_kernel_without_devices_and_with_folders_under_its_home_fits_a_pool() {
        let mut spec = crate::pool_kernel::spec(&shape(1 << 28), Uuid::new_v4());
        assert_eq!(fits(&spec, false), Some(shape(1 << 28)));
        spec.slots.accel.insert("cuda.device".into(), 1000);
        assert_eq!(fits(&spec, true), None);
        spec.slots.accel.clear();
        spec.mounts.push(bai_core::agent::Mount {
            vfolder_id: Uuid::nil(),
            name: "data".into(),
            host_path: "/srv/data".into(),
            kernel_path: "/home/work/data".into(),
            read_only: false,
        });
        assert_eq!(fits(&spec, true), Some(shape(1 << 28)));
        assert_eq!(
            fits(&spec, false),
            None,
            "pool pods whose homes receive no mounts take no folder"
        );
        // A folder outside the home would be a volume the running pod lacks.
        spec.mounts.push(bai_core::agent::Mount {
            vfolder_id: Uuid::nil(),
            name: "model".into(),
            host_path: "/srv/model".into(),
            kernel_path: "/models".into(),
            read_only: true,
        });
        assert_eq!(fits(&spec, true), None);
        spec.mounts.pop();
        spec.mounts[0].host_path = "srv/data".into();
        assert_eq!(fits(&spec, true), None, "a relative host path");
        spec.mounts.clear();
        spec.cluster = Some(bai_core::cluster::ClusterInfo::single(Uuid::new_v4()));
        assert_eq!(fits(&spec, false), Some(shape(1 << 28)), "a cluster of one");
    }
}

//! The warm pools, the manager's side: which shapes each agent keeps kernels started for.
//! Every [`TICK`], for each resource group: the shapes its admin configured, and, while its
//! automatic mode is on, its most launched shapes of the last hour ([`AUTO_SHAPES`], `auto`
//! kernels each); each alive agent of the group is sent those it has the image of and room
//! for (once per change), and asked what its pools hold and did, which `bai agents`, the
//! Agents page and `/metrics` show. The agents make, claim and give up pool kernels
//! themselves (`bai-agent` `docker/pool`).

use bai_core::pool::{AUTO_SHAPES, PoolReport, PoolShape, PoolTarget};
use bai_ground::agents::Agents;
use bai_store::Store;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the pools' targets are worked out and their reports read.
pub const TICK: Duration = Duration::from_secs(2);
/// How far back the automatic mode looks.
pub const RECENT: Duration = Duration::from_secs(3600);

pub struct WarmPools {
    store: Arc<Store>,
    agents: Arc<Agents>,
    /// False: no agent is sent any shape (`baid --no-warm-pools`).
    enabled: bool,
    /// What each agent was sent last.
    sent: Mutex<HashMap<String, Vec<PoolTarget>>>,
    /// What each agent said of its pools last.
    reports: Mutex<BTreeMap<String, PoolReport>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl WarmPools {
    pub fn new(store: Arc<Store>, agents: Arc<Agents>, enabled: bool) -> Arc<WarmPools> {
        Arc::new(WarmPools {
            store,
            agents,
            enabled,
            sent: Mutex::new(HashMap::new()),
            reports: Mutex::new(BTreeMap::new()),
        })
    }

    /// What an agent said of its pools last (empty when it keeps none).
    pub fn report(&self, agent: &str) -> PoolReport {
        lock(&self.reports).get(agent).cloned().unwrap_or_default()
    }

    /// Every agent's last report.
    pub fn reports(&self) -> BTreeMap<String, PoolReport> {
        lock(&self.reports).clone()
    }

    /// The targets of each resource group: configured ones, then the automatic mode's.
    fn group_targets(&self) -> HashMap<String, Vec<PoolTarget>> {
        let mut out = HashMap::new();
        let Ok(groups) = self.store.resource_groups() else {
            return out;
        };
        let since = chrono::Utc::now()
            - chrono::Duration::from_std(RECENT).unwrap_or(chrono::Duration::hours(1));
        let since = since.to_rfc3339_opts(chrono::SecondsFormat::Micros, false);
        for g in groups {
            let mut targets = g.warm_pool.targets.clone();
            if g.warm_pool.auto > 0 {
                let recent = self
                    .store
                    .recent_shapes(&g.name, &since, AUTO_SHAPES)
                    .unwrap_or_default();
                for shape in recent {
                    if !targets.iter().any(|t| t.shape == shape) {
                        targets.push(PoolTarget {
                            shape,
                            count: g.warm_pool.auto,
                        });
                    }
                }
            }
            out.insert(g.name, targets);
        }
        out
    }

    /// One round: targets sent where they changed, reports read.
    pub async fn round(&self) {
        let by_group = if self.enabled {
            self.group_targets()
        } else {
            HashMap::new()
        };
        for a in self.agents.all() {
            if !a.is_alive() {
                continue;
            }
            let info = a.info();
            let fits = |s: &PoolShape| {
                s.cpu_milli <= info.capacity.cpu_milli
                    && s.mem <= info.capacity.mem
                    && info.images.iter().any(|i| i.name == s.image)
            };
            let targets: Vec<PoolTarget> = if a.is_drained() {
                Vec::new()
            } else {
                by_group
                    .get(&info.scaling_group)
                    .map(|t| t.iter().filter(|t| fits(&t.shape)).cloned().collect())
                    .unwrap_or_default()
            };
            let changed = lock(&self.sent).get(&a.id) != Some(&targets);
            let asked = a.rpc.warm_pool(changed.then(|| targets.clone())).await;
            match asked {
                Ok(report) => {
                    if changed {
                        lock(&self.sent).insert(a.id.clone(), targets);
                    }
                    lock(&self.reports).insert(a.id.clone(), report);
                }
                Err(e) => {
                    tracing::debug!(agent = %a.id, error = %e, "cannot reach the agent's warm pools");
                }
            }
        }
    }
}

/// A metric's name, its help, and how it is read.
type Metric<T, V> = (&'static str, &'static str, fn(&T) -> V);

impl WarmPools {
    /// The pools' counters and sizes in Prometheus' text format, for `/metrics`.
    pub fn metrics(&self) -> String {
        use std::fmt::Write;
        let reports = self.reports();
        let esc = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        let mut out = String::new();
        let counters: [Metric<PoolReport, u64>; 5] = [
            ("hits", "Creates that took a pool kernel.", |r| {
                r.counters.hits
            }),
            (
                "misses",
                "Creates of a pooled shape that found none ready or could not bind one.",
                |r| r.counters.misses,
            ),
            ("refills", "Pool kernels made.", |r| r.counters.refills),
            (
                "bind_failures",
                "Pool kernels that failed their binding (their creates went cold).",
                |r| r.counters.bind_failures,
            ),
            (
                "evictions",
                "Pool kernels given up to make room for sessions.",
                |r| r.counters.evictions,
            ),
        ];
        for (name, help, get) in counters {
            let _ = writeln!(out, "# HELP bai_warm_pool_{name}_total {help}");
            let _ = writeln!(out, "# TYPE bai_warm_pool_{name}_total counter");
            for (agent, r) in &reports {
                let _ = writeln!(
                    out,
                    "bai_warm_pool_{name}_total{{agent=\"{}\"}} {}",
                    esc(agent),
                    get(r)
                );
            }
        }
        let gauges: [Metric<bai_core::pool::PoolStatus, u32>; 2] = [
            (
                "ready",
                "Started, unclaimed pool kernels of a shape.",
                |p| p.ready,
            ),
            (
                "target",
                "Pool kernels of a shape an agent should keep.",
                |p| p.target,
            ),
        ];
        for (name, help, get) in gauges {
            let _ = writeln!(out, "# HELP bai_warm_pool_{name} {help}");
            let _ = writeln!(out, "# TYPE bai_warm_pool_{name} gauge");
            for (agent, r) in &reports {
                for p in &r.pools {
                    let _ = writeln!(
                        out,
                        "bai_warm_pool_{name}{{agent=\"{}\",shape=\"{}\"}} {}",
                        esc(agent),
                        esc(&p.shape),
                        get(p)
                    );
                }
            }
        }
        out
    }
}

/// Runs [`WarmPools::round`] every [`TICK`], for good.
pub fn spawn(pools: Arc<WarmPools>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            pools.round().await;
        }
    });
}

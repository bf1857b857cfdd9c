//! Room on the node: what its kernels and pool kernels hold (their containers' limits)
//! against what it offers. Pool kernels are counted as free by the manager, so when a
//! session needs their room they go ([`evict`], [`shrink_to_fit`]).

use super::make;
use crate::docker::Inner;
use bai_core::resources::ResourceSlots;
use bollard::query_parameters::ListContainersOptions;
use std::collections::HashMap;

/// What the node offers kernels (as the agent reports it to the manager).
fn capacity(inner: &Inner) -> ResourceSlots {
    let c = &inner.config;
    ResourceSlots {
        cpu_milli: (crate::host::cores() * 1000).saturating_sub(c.reserved_cpu_milli),
        mem: crate::host::total_memory()
            .unwrap_or(0)
            .saturating_sub(c.reserved_mem),
        accel: Default::default(),
    }
}

/// What this agent's running containers (kernels and pool kernels) hold.
async fn held(inner: &Inner) -> ResourceSlots {
    let mut filters = HashMap::new();
    filters.insert(
        "label".to_string(),
        vec![format!(
            "{}={}",
            crate::docker::LABEL_AGENT,
            inner.config.agent_id
        )],
    );
    let opts = ListContainersOptions {
        filters: Some(filters),
        ..Default::default()
    };
    let mut sum = ResourceSlots::default();
    let Ok(list) = inner.docker.list_containers(Some(opts)).await else {
        return sum;
    };
    for c in list {
        let Some(id) = c.id else { continue };
        let Ok(i) = inner.docker.inspect_container(&id, None).await else {
            continue;
        };
        let hc = i.host_config.unwrap_or_default();
        sum.cpu_milli += hc.nano_cpus.unwrap_or(0).max(0) as u64 / 1_000_000;
        sum.mem += hc.memory.unwrap_or(0).max(0) as u64;
    }
    sum
}

/// The node's room for more (pool kernels count as held).
pub async fn free(inner: &Inner) -> ResourceSlots {
    let cap = capacity(inner);
    let used = held(inner).await;
    ResourceSlots {
        cpu_milli: cap.cpu_milli.saturating_sub(used.cpu_milli),
        mem: cap.mem.saturating_sub(used.mem),
        accel: Default::default(),
    }
}

/// Gives up every ready pool kernel (a create could not get its cores or memory).
/// Returns how many went.
pub async fn evict(inner: &Inner) -> usize {
    let gone: Vec<_> = {
        let mut pools = inner.pools();
        let gone = std::mem::take(&mut pools.ready);
        pools.removing += gone.len();
        gone
    };
    let n = gone.len();
    make::remove_taken(inner, gone.into_iter().map(|r| r.id)).await;
    if n > 0 {
        inner.pools().counters.evictions += n as u64;
        tracing::info!(evicted = n, "pool kernels given up for a session");
    }
    n
}

/// Gives up pool kernels while the node's kernels and pool kernels hold more than it offers.
pub async fn shrink_to_fit(inner: &Inner) {
    if inner.pools().ready.is_empty() {
        return;
    }
    let cap = capacity(inner);
    let mut used = held(inner).await;
    while used.cpu_milli > cap.cpu_milli || used.mem > cap.mem {
        let Some(r) = ({
            let mut pools = inner.pools();
            let r = pools.ready.pop();
            pools.removing += usize::from(r.is_some());
            r
        }) else {
            return;
        };
        used.cpu_milli = used.cpu_milli.saturating_sub(r.shape.cpu_milli);
        used.mem = used.mem.saturating_sub(r.shape.mem);
        make::remove_taken(inner, [r.id]).await;
        inner.pools().counters.evictions += 1;
        tracing::info!(pool_kernel = %r.id, "pool kernel given up: the node is full");
    }
}

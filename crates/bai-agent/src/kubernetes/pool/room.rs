//! Pool pods give their room up: they carry the agent's label, so bai's scheduler counts
//! their room as free and may place a session there; when Kubernetes then cannot place that
//! session's pod, every pool pod of the agent goes.

use super::make;
use crate::kubernetes::Inner;
use uuid::Uuid;

/// A cold create that Kubernetes cannot place: the pool pods give their room up, the ready
/// ones and those being made (each deleted; its maker sees it gone and stops), and the
/// scheduler places the waiting pod when they are gone. Returns whether any was.
pub async fn evict_for(inner: &Inner, kernel: Uuid) -> bool {
    let (ready, making) = {
        let mut pools = inner.pools();
        let ready: Vec<Uuid> = pools.ready.drain(..).map(|r| r.id).collect();
        let making: Vec<Uuid> = pools.making.drain(..).map(|(id, _)| id).collect();
        pools.counters.evictions += (ready.len() + making.len()) as u64;
        (ready, making)
    };
    if ready.is_empty() && making.is_empty() {
        return false;
    }
    tracing::info!(kernel = %kernel, pods = ready.len() + making.len(),
        "Kubernetes cannot place a kernel while pool pods hold room: removing them");
    for id in ready.into_iter().chain(making) {
        make::remove(inner, id).await;
    }
    inner.pool_wake.notify_one();
    true
}

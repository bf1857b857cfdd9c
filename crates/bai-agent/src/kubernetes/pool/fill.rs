//! Keeping the pools full: one task makes the pool pods the pools keep and lack, one at a
//! time, and removes those past what they keep (a target gone or lowered, an idle pool: it
//! looks at least every [`LOOK_EVERY`]). A pod is made only into room the node has free for this
//! agent: the offer (the node's allocatable less others' pods) less what this agent's pods,
//! kernels and pool pods, request. So a pool never takes room a session was placed into;
//! room that frees later is used, and given back by [`super::room::evict_for`].

use super::make;
use crate::kubernetes::{Inner, capacity, labels, offer};
use bai_core::pool::PoolShape;
use kube::api::ListParams;
use std::sync::Arc;
use std::time::Duration;

/// How often the pools look again when nothing woke them (room may have freed).
const LOOK_EVERY: Duration = Duration::from_secs(5);
/// Pause after a pool pod could not be made.
const AFTER_FAILURE: Duration = Duration::from_secs(10);

pub fn spawn(inner: &Arc<Inner>) -> tokio::task::AbortHandle {
    let inner = inner.clone();
    tokio::spawn(async move {
        loop {
            let woken = inner.pool_wake.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            let unwanted = inner.pools().unwanted();
            for r in unwanted {
                make::remove(&inner, r.id).await;
            }
            let wanted = inner.pools().wanting();
            match wanted {
                Some(shape) if has_room(&inner, &shape).await => {
                    let id = uuid::Uuid::new_v4();
                    inner.pools().making.push((id, shape.clone()));
                    let made = make::make(&inner, id, &shape).await;
                    // What to do after the lock: nothing, pause, or remove the pod.
                    let (failed, evicted) = {
                        let mut pools = inner.pools();
                        let listed = pools.making.iter().position(|(m, _)| *m == id);
                        if let Some(i) = listed {
                            pools.making.swap_remove(i);
                        }
                        match made {
                            // Evicted while it was made, just as its runner answered.
                            Ok(r) if listed.is_none() => (false, Some(r.id)),
                            Ok(r) => {
                                tracing::info!(pool_pod = %r.id, shape = %shape, "pool pod ready");
                                pools.counters.refills += 1;
                                pools.ready.push(r);
                                (false, None)
                            }
                            Err(e) => {
                                tracing::warn!(shape = %shape, error = %e, "a pool pod could not be made");
                                (listed.is_some(), None)
                            }
                        }
                    };
                    if let Some(id) = evicted {
                        make::remove(&inner, id).await;
                    }
                    if failed {
                        tokio::time::sleep(AFTER_FAILURE).await;
                    }
                    continue;
                }
                _ => {}
            }
            let _ = tokio::time::timeout(LOOK_EVERY, woken).await;
        }
    })
    .abort_handle()
}

/// Whether `shape` fits the node's room left to this agent now.
async fn has_room(inner: &Inner, shape: &PoolShape) -> bool {
    let Ok(offered) = offer::read(inner).await else {
        return false;
    };
    if offered.withheld.is_some() {
        return false;
    }
    let lp = ListParams::default().labels(&labels::agent_selector(&inner.config.agent_id));
    let Ok(mine) = inner.pods.list(&lp).await else {
        return false;
    };
    let (cpu, mem) = capacity::held_by(&mine.items);
    let cap = &offered.capacity;
    cap.cpu_milli.saturating_sub(cpu) >= shape.cpu_milli && cap.mem.saturating_sub(mem) >= shape.mem
}

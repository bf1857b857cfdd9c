//! The manager's bus: session events for live subscribers (SSE, the proxies' closer, the
//! serving reconciler) and the scheduler's wake-up. Events are persisted by the store before
//! they are published here.

use crate::metrics::Metrics;
use bai_core::event::SessionEvent;
use std::sync::Arc;
use tokio::sync::{Notify, broadcast};

pub struct Bus {
    events: broadcast::Sender<SessionEvent>,
    wake: Notify,
    metrics: Arc<Metrics>,
}

impl Bus {
    /// A bus whose events are counted in `metrics`.
    pub fn new(metrics: Arc<Metrics>) -> Bus {
        let (events, _) = broadcast::channel(4096);
        Bus {
            events,
            wake: Notify::new(),
            metrics,
        }
    }

    /// Publishes persisted events to live subscribers and logs them.
    pub fn publish(&self, events: Vec<SessionEvent>) {
        for ev in events {
            tracing::info!(
                event = ev.kind.as_str(),
                session = %ev.session_id,
                name = %ev.session_name,
                reason = %ev.reason,
                "session event"
            );
            self.metrics.event(ev.kind.as_str());
            // No subscribers is fine.
            let _ = self.events.send(ev);
        }
    }

    /// Session events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<SessionEvent> {
        self.events.subscribe()
    }

    /// Asks for a scheduling pass soon (a session was queued, or resources were freed).
    pub fn wake_scheduler(&self) {
        self.wake.notify_one();
    }

    /// Resolves on the next [`Bus::wake_scheduler`] (one waiter: the scheduler loop).
    pub async fn scheduler_woken(&self) {
        self.wake.notified().await
    }
}

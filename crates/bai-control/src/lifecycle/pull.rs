//! PULLING: the agents of a session that lack its image pull it from the cluster's registry,
//! all at once; each agent's image list is read again afterwards, so the catalogue and the
//! scheduler know it holds the image from then on. While they pull, their progress reaches
//! the session's event stream as `kernel_pulling` events (at most one every 2 seconds) and
//! its status info, which the session list shows.

use super::Lifecycle;
use bai_core::Reason;
use bai_core::agent::AgentEvent;
use bai_core::event::EventKind as E;
use bai_ground::agents::AgentHandle;
use bai_store::SessionRow;
use futures::StreamExt;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

const EVERY: Duration = Duration::from_secs(2);

pub async fn pull_all(
    lifecycle: &Arc<Lifecycle>,
    row: &SessionRow,
    agents: &[Arc<AgentHandle>],
) -> Result<(), Reason> {
    let image = row.spec.image.as_str();
    let mut progress = futures::stream::select_all(
        agents
            .iter()
            .enumerate()
            .map(|(i, a)| a.rpc.events().map(move |e| (i, e))),
    );
    let pulls = futures::future::join_all(agents.iter().map(|a| async move {
        tracing::info!(agent = %a.id, image, "pulling an image from the registry");
        let r = a.rpc.pull_image(image.to_string()).await;
        crate::images::refresh_agent(&lifecycle.agents, &a.id).await;
        r.map_err(|e| Reason::CreationFailed(format!("agent {} cannot pull {image}: {e}", a.id)))
    }));
    tokio::pin!(pulls);
    // Per agent: the latest (current, total); summed over the agents.
    let mut seen: HashMap<usize, (u64, u64)> = HashMap::new();
    let mut last = Instant::now();
    let results = loop {
        tokio::select! {
            results = &mut pulls => break results,
            Some((agent, ev)) = progress.next() => {
                if let AgentEvent::ImagePull { image: i, current, total } = ev
                    && i == image
                {
                    seen.insert(agent, (current, total));
                    if last.elapsed() >= EVERY && total > 0 {
                        last = Instant::now();
                        let (c, t) = seen.values().fold((0, 0), |(c, t), (a, b)| (c + a, t + b));
                        report(lifecycle, row, c, t);
                    }
                }
            }
        }
    };
    for r in results {
        r?;
    }
    Ok(())
}

fn report(lifecycle: &Lifecycle, row: &SessionRow, current: u64, total: u64) {
    let mb = |b: u64| b / 1_000_000;
    let reason = format!(
        "pulling: {} from the registry ({} of {} MB)",
        row.spec.image,
        mb(current),
        mb(total)
    );
    // The session list shows it beside PULLING (the web UI and `bai ps`).
    if let Err(e) =
        lifecycle
            .store
            .set_status_info_while(row.id, bai_core::SessionStatus::Pulling, &reason)
    {
        tracing::warn!(session = %row.id, error = %e, "cannot record pull progress");
    }
    match lifecycle
        .store
        .add_events(row, &[E::KernelPulling], &reason)
    {
        Ok(evs) => lifecycle.bus.publish(evs),
        Err(e) => tracing::warn!(session = %row.id, error = %e, "cannot record pull progress"),
    }
}

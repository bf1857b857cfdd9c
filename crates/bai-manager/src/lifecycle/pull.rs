//! PULLING: the agents of a session that lack its image pull it from the cluster's registry,
//! all at once; each agent's image list is read again afterwards, so the catalogue and the
//! scheduler know it holds the image from then on.

use crate::state::{AgentHandle, Manager};
use bai_core::Reason;
use std::sync::Arc;

pub async fn pull_all(
    m: &Arc<Manager>,
    image: &str,
    agents: &[Arc<AgentHandle>],
) -> Result<(), Reason> {
    let pulls = agents.iter().map(|a| async move {
        tracing::info!(agent = %a.id, image, "pulling an image from the registry");
        let r = a.rpc.pull_image(image.to_string()).await;
        crate::images::refresh_agent(m, &a.id).await;
        r.map_err(|e| Reason::CreationFailed(format!("agent {} cannot pull {image}: {e}", a.id)))
    });
    for r in futures::future::join_all(pulls).await {
        r?;
    }
    Ok(())
}

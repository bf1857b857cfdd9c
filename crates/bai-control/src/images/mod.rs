//! Images: the catalogue (what agents hold, aliases, images made from sessions), session
//! commits to a tarball on the agent, and conversions of a session to a private image.

pub mod aliases;
pub mod catalogue;
pub mod commit_file;
pub mod committing;
pub mod convert;
mod ctx;
pub mod reference;
pub mod registry;
pub mod registry_view;

pub use catalogue::{
    CatalogueImage, LABEL_EMAIL, LABEL_ID, LABEL_NAME, LABEL_OWNER, Sources, catalogue, known,
    resolve,
};
pub use ctx::Images;

use bai_core::Problem;
use bai_core::status::SessionStatus;
use bai_store::SessionRow;
use std::sync::Arc;

/// Reads an agent's images again (after a commit or a removal) so the catalogue and the
/// scheduler see them.
pub async fn refresh_agent(agents: &bai_ground::agents::Agents, agent_id: &str) {
    let Some(a) = agents.get(agent_id) else {
        return;
    };
    match a.rpc.info().await {
        Ok(info) => a.set_images(info.images),
        Err(e) => tracing::warn!(agent = %agent_id, error = %e, "cannot read the agent's images"),
    }
}

/// The agent of a session's main kernel, when the session can be committed now.
pub fn commit_target(
    images: &Images,
    row: &SessionRow,
) -> Result<Arc<bai_ground::agents::AgentHandle>, Problem> {
    if row.state.status != SessionStatus::Running {
        return Err(Problem::invalid(format!(
            "session {:?} is {}: only a RUNNING session can be committed",
            row.name,
            row.state.status.as_str()
        )));
    }
    let agent_id = row.state.agent_id.clone().unwrap_or_default();
    let agent = images.agents.get(&agent_id).ok_or_else(|| {
        Problem::internal(format!("the session's agent {agent_id:?} is not known"))
    })?;
    if !agent.is_alive() {
        return Err(Problem::new(
            503,
            "agent-lost",
            "Agent not reachable.",
            format!("the session's agent {agent_id} is not reachable now"),
        ));
    }
    Ok(agent)
}

//! What administrators do with remote agents: mint, list and revoke join tokens (a revoked
//! token's agents are disconnected and cannot come back), drain and undrain agents, and
//! remove an agent the cluster no longer has.

use super::Remote;
use bai_core::Problem;
use bai_link::JoinToken;
use bai_store::{AgentRow, AgentTokenRow};
use std::sync::atomic::Ordering;

fn no_agent(id: &str) -> Problem {
    Problem::not_found("agent", format!("there is no agent {id:?}"))
}

/// A new join token for `group` (which must exist). The token is returned once.
pub fn create_token(
    remote: &Remote,
    group: &str,
    created_by: &str,
) -> Result<(JoinToken, AgentTokenRow), Problem> {
    let Some(fingerprint) = remote.fingerprint() else {
        return Err(Problem::conflict(
            "no-agent-listener",
            "Remote agents are off",
            "this manager does not listen for remote agents (start it with --agent-listen)",
        ));
    };
    if remote.store.resource_group(group)?.is_none() {
        return Err(Problem::invalid(format!(
            "there is no resource group {group:?} (create it first: bai admin resource-group create)"
        )));
    }
    let token = JoinToken::new(&fingerprint);
    let row = AgentTokenRow {
        id: token.id.clone(),
        secret_hash: token.secret_hash(),
        scaling_group: group.to_string(),
        created_by: created_by.to_string(),
        created_at: String::new(),
        revoked_at: None,
    };
    remote.store.insert_agent_token(&row)?;
    let row = remote.store.agent_token(&token.id)?.unwrap_or(row);
    tracing::info!(token = %token.id, group, by = created_by, "join token created");
    Ok((token, row))
}

/// Revokes a token and disconnects the agents it admitted. Returns how many were connected.
pub fn revoke_token(remote: &Remote, id: &str) -> Result<usize, Problem> {
    if remote.store.agent_token(id)?.is_none() {
        return Err(Problem::not_found(
            "agent-token",
            format!("there is no join token {id:?}"),
        ));
    }
    remote.store.revoke_agent_token(id)?;
    let mut n = 0;
    for h in remote.agents.all() {
        if let Some(slot) = &h.remote
            && slot
                .token_id
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .as_deref()
                == Some(id)
        {
            if slot.connected() {
                n += 1;
            }
            slot.disconnect();
        }
    }
    tracing::warn!(token = id, disconnected = n, "join token revoked");
    Ok(n)
}

/// Drains (no new sessions) or undrains an agent; kept across restarts.
pub fn set_drained(remote: &Remote, id: &str, drained: bool) -> Result<(), Problem> {
    let h = remote.agents.get(id).ok_or_else(|| no_agent(id))?;
    if remote.store.agent_row(id)?.is_none() {
        // An agent inside the manager's process gets a row for its flag.
        let info = h.info();
        let row = AgentRow {
            id: id.to_string(),
            token_id: None,
            credential_hash: None,
            scaling_group: info.scaling_group,
            address: String::new(),
            info: None,
            drained,
            first_seen: String::new(),
            last_seen: String::new(),
        };
        remote.store.upsert_agent(&row)?;
    }
    remote.store.set_agent_drained(id, drained)?;
    h.drained.store(drained, Ordering::Relaxed);
    remote.bus.wake_scheduler();
    tracing::info!(agent = id, drained, "agent drain changed");
    Ok(())
}

/// Forgets a remote agent that holds no sessions (drain it and let them end, or wait until
/// it is gone). It may join again later with a valid token, as a new agent.
pub fn remove_agent(remote: &Remote, id: &str) -> Result<(), Problem> {
    let h = remote.agents.get(id).ok_or_else(|| no_agent(id))?;
    let Some(slot) = h.remote.clone() else {
        return Err(Problem::invalid(format!(
            "agent {id:?} runs inside the manager; stop baid to remove it"
        )));
    };
    let held = remote.store.sessions_on(id)?.len();
    if held > 0 {
        return Err(Problem::conflict(
            "agent-busy",
            "Agent has sessions",
            format!(
                "agent {id:?} still holds {held} session(s); drain it and let them end (or wait until it is gone) first"
            ),
        ));
    }
    slot.disconnect();
    slot.shared.close_listeners();
    remote.agents.remove(id);
    remote.store.delete_agent(id)?;
    tracing::warn!(agent = id, "agent removed");
    Ok(())
}

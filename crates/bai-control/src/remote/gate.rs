//! Who may connect: a join token that exists and is not revoked, and, for an agent id the
//! manager already knows, the credential it was given on its first join. An agent is never
//! known by its address.

use super::Remote;
use bai_link::hello::{self, Hello, Purpose};
use bai_link::token::{hash_secret, new_secret};
use bai_store::{AgentRow, AgentTokenRow};

/// An admitted connection.
#[derive(Debug)]
pub struct Admitted {
    pub token: AgentTokenRow,
    /// A first join: the credential to hand the agent (only its hash is kept).
    pub new_credential: Option<String>,
}

/// A refusal in words; `retry` false when trying again cannot help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub reason: String,
    pub retry: bool,
}

fn refused(reason: impl Into<String>) -> Refused {
    Refused {
        reason: reason.into(),
        retry: false,
    }
}

/// Agent ids are names: letters, digits, `.`, `_`, `-`; 1 to 64 of them.
pub fn valid_agent_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Decides on a hello. A first join of a new id records the agent (with its credential's
/// hash) at once, so two agents racing for one id cannot both win.
pub fn admit(remote: &Remote, h: &Hello, address: &str) -> Result<Admitted, Refused> {
    let db = |e: bai_store::StoreError| Refused {
        reason: format!("the manager cannot read its database: {e}"),
        retry: true,
    };
    if h.protocol != hello::PROTOCOL {
        return Err(refused(format!(
            "this agent speaks link protocol {}, the manager {}; run the same bai version on both",
            h.protocol,
            hello::PROTOCOL
        )));
    }
    let token = match remote.store.agent_token(&h.token_id).map_err(db)? {
        Some(t) if t.secret_hash == hash_secret(&h.token_secret) => t,
        _ => return Err(refused("the join token is not valid")),
    };
    if token.revoked_at.is_some() {
        return Err(refused(format!("join token {} was revoked", token.id)));
    }
    if !valid_agent_id(&h.agent_id) {
        return Err(refused(format!(
            "agent id {:?} is not a name (letters, digits, '.', '_', '-'; at most 64)",
            h.agent_id
        )));
    }
    if let Some(group) = &h.group
        && *group != token.scaling_group
    {
        return Err(refused(format!(
            "this join token admits agents to resource group {:?}, not {group:?}",
            token.scaling_group
        )));
    }
    let known = remote.store.agent_row(&h.agent_id).map_err(db)?;
    let local = remote
        .agents
        .get(&h.agent_id)
        .is_some_and(|a| a.remote.is_none());
    match known {
        _ if local => Err(refused(format!(
            "agent id {:?} is the manager's own agent",
            h.agent_id
        ))),
        Some(AgentRow {
            credential_hash: Some(hash),
            ..
        }) => match &h.credential {
            Some(c) if hash_secret(c) == hash => Ok(Admitted {
                token,
                new_credential: None,
            }),
            _ => Err(refused(format!(
                "agent id {:?} belongs to another agent (its credential does not match)",
                h.agent_id
            ))),
        },
        Some(_) => Err(refused(format!(
            "agent id {:?} is the manager's own agent",
            h.agent_id
        ))),
        None if h.purpose != Purpose::Control => {
            Err(refused("an unknown agent cannot open tunnels"))
        }
        None => {
            let credential = new_secret();
            let row = AgentRow {
                id: h.agent_id.clone(),
                token_id: Some(token.id.clone()),
                credential_hash: Some(hash_secret(&credential)),
                scaling_group: token.scaling_group.clone(),
                address: address.to_string(),
                info: None,
                drained: false,
                first_seen: String::new(),
                last_seen: String::new(),
            };
            if !remote.store.insert_agent(&row).map_err(db)? {
                return Err(Refused {
                    reason: format!("agent id {:?} was just taken; try again", h.agent_id),
                    retry: true,
                });
            }
            Ok(Admitted {
                token,
                new_credential: Some(credential),
            })
        }
    }
}

//! Administrators' handling of remote agents: join tokens (`/admin/agent-tokens`) and
//! drain, undrain and remove (`/admin/agents/{id}`). Typed with `bai_api`.

use crate::error::ApiResult;
use crate::state::Manager;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use bai_api::resources::{AgentToken, AgentTokenList, NewAgentToken};
use bai_control::remote::admin;
use bai_core::Problem;
use bai_ground::identity::Caller;
use bai_store::AgentTokenRow;
use std::sync::Arc;

fn token_view(row: AgentTokenRow) -> AgentToken {
    AgentToken {
        id: row.id,
        group: row.scaling_group,
        created_by: row.created_by,
        created_at: row.created_at,
        revoked_at: row.revoked_at,
        token: None,
        agent_listen: None,
    }
}

/// `POST /admin/agent-tokens`: `{"group"}` → the token, shown this once.
pub async fn create_token(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: axum::body::Bytes,
) -> ApiResult<(StatusCode, Json<AgentToken>)> {
    let req: NewAgentToken = if body.iter().all(u8::is_ascii_whitespace) {
        NewAgentToken { group: None }
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| Problem::invalid(format!("the body must be {{\"group\": NAME}}: {e}")))?
    };
    let group = req.group.as_deref().unwrap_or("default");
    let (token, row) = admin::create_token(&m.remote, group, &caller.email)?;
    let mut view = token_view(row);
    view.token = Some(token.to_string());
    view.agent_listen = m.remote.listen.get().map(|a| a.to_string());
    Ok((StatusCode::CREATED, Json(view)))
}

/// `GET /admin/agent-tokens`.
pub async fn list_tokens(State(m): State<Arc<Manager>>) -> ApiResult<Json<AgentTokenList>> {
    let tokens = m
        .store
        .agent_tokens()?
        .into_iter()
        .map(token_view)
        .collect();
    Ok(Json(AgentTokenList { tokens }))
}

/// `DELETE /admin/agent-tokens/{id}`: revoked; its agents are disconnected.
pub async fn revoke_token(
    State(m): State<Arc<Manager>>,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    admin::revoke_token(&m.remote, &id)?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /admin/agents/{id}/drain`.
pub async fn drain(State(m): State<Arc<Manager>>, Path(id): Path<String>) -> ApiResult<StatusCode> {
    admin::set_drained(&m.remote, &id, true)?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /admin/agents/{id}/undrain`.
pub async fn undrain(
    State(m): State<Arc<Manager>>,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    admin::set_drained(&m.remote, &id, false)?;
    Ok(StatusCode::NO_CONTENT)
}

/// `DELETE /admin/agents/{id}`.
pub async fn remove(
    State(m): State<Arc<Manager>>,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    admin::remove_agent(&m.remote, &id)?;
    Ok(StatusCode::NO_CONTENT)
}

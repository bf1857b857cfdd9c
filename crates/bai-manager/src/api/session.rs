//! REST handlers under `/session`.

use super::session_info::session_info;
use super::visible_session;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::state::Manager;
use axum::Extension;
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Multipart, Path, Query, State};
use axum::http::StatusCode;
use bai_api::sessions::{
    CreateReply, CreateStatus, CreatedSession, Destroyed, DestroyedStats, Logs, LogsResult,
    SchedulingHistory, StatusHistory,
};
use bai_control::lifecycle::create::{Created, create as create_session, create_many, plan_spec};
use bai_control::lifecycle::terminate::terminate;
use bai_core::Problem;
use bai_core::history::{HistoryFilter, HistoryResult};
use bai_core::status::{SessionResult, SessionStatus as S, SessionType};
use bai_store::SessionRow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

fn create_reply(row: &SessionRow, status: CreateStatus, created: bool) -> CreateReply {
    CreateReply {
        session_id: row.id.to_string(),
        session_name: row.name.clone(),
        status,
        service_ports: Vec::new(),
        created,
        sessions: None,
    }
}

/// `POST /session`: validate, enqueue, and (unless `enqueueOnly`) wait until the session
/// runs, fails, or — for batch sessions — finishes; `maxWaitSeconds` bounds the wait.
/// `Idempotency-Key` makes it safe to retry (`lifecycle::idempotent`).
pub async fn create(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> ApiResult<(
    StatusCode,
    Extension<bai_ground::audit::AuditTarget>,
    Json<CreateReply>,
)> {
    create_answer(&m, &caller, &headers, &body).await
}

/// Creates a session from a `POST /session` body: the answer and the audit target (its id).
pub(crate) async fn create_answer(
    m: &Arc<Manager>,
    caller: &Caller,
    headers: &axum::http::HeaderMap,
    body: &[u8],
) -> ApiResult<(
    StatusCode,
    Extension<bai_ground::audit::AuditTarget>,
    Json<CreateReply>,
)> {
    let (status, reply) = create_session_reply(m, caller, headers, body).await?;
    let target = reply.session_id.clone();
    Ok((
        status,
        Extension(bai_ground::audit::AuditTarget(target)),
        reply,
    ))
}

async fn create_session_reply(
    m: &Arc<Manager>,
    caller: &Caller,
    headers: &axum::http::HeaderMap,
    body: &[u8],
) -> ApiResult<(StatusCode, Json<CreateReply>)> {
    let m = m.clone();
    let body = bai_api::sessions::read_create(body)?;
    let header = headers.get("idempotency-key").map(|v| v.as_bytes());
    let idempotency = bai_control::lifecycle::idempotent::key_of(header, &body.digest)?;
    // The wire request becomes a spec here, at the edge; the lifecycle checks the rest.
    let spec = super::session_spec::spec_of(&m.lifecycle, &body.request)?;
    let mut plan = plan_spec(&m.lifecycle, caller, &spec)?;
    plan.idempotency = idempotency;
    let mut rx = m.bus.subscribe();
    if plan.count > 1 {
        let rows = create_many(&m.lifecycle, &plan)?;
        let first = rows
            .first()
            .ok_or_else(|| Problem::internal("no session was created"))?;
        let mut reply = create_reply(first, CreateStatus::Pending, true);
        reply.sessions = Some(
            rows.iter()
                .map(|r| CreatedSession {
                    session_id: r.id.to_string(),
                    session_name: r.name.clone(),
                    status: S::Pending,
                })
                .collect(),
        );
        return Ok((StatusCode::CREATED, Json(reply)));
    }
    let row = match create_session(&m.lifecycle, &plan)? {
        Created::Reused(row) => {
            return Ok((
                StatusCode::OK,
                Json(create_reply(&row, row.state.status.into(), false)),
            ));
        }
        // A retry waits as the first attempt would have.
        Created::New(row) | Created::Retried(row) => row,
    };
    if plan.enqueue_only {
        return Ok((
            StatusCode::CREATED,
            Json(create_reply(&row, CreateStatus::Pending, true)),
        ));
    }
    let deadline = (plan.max_wait_secs > 0)
        .then(|| tokio::time::Instant::now() + Duration::from_secs(plan.max_wait_secs));
    loop {
        let now = m
            .store
            .session(row.id)?
            .ok_or_else(|| Problem::internal("session vanished"))?;
        let done = match now.spec.session_type {
            SessionType::Batch => now.state.status.is_terminal() || now.state.status == S::Error,
            _ => {
                matches!(now.state.status, S::Running | S::Error) || now.state.status.is_terminal()
            }
        };
        if done {
            return Ok((
                StatusCode::CREATED,
                Json(create_reply(&now, now.state.status.into(), true)),
            ));
        }
        let step = tokio::time::Instant::now() + Duration::from_millis(500);
        let until = deadline.map(|d| d.min(step)).unwrap_or(step);
        let _ = tokio::time::timeout_at(until, rx.recv()).await;
        if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
            return Ok((
                StatusCode::CREATED,
                Json(create_reply(&now, CreateStatus::Timeout, true)),
            ));
        }
    }
}

pub async fn info(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
) -> ApiResult<Json<bai_api::sessions::SessionInfo>> {
    let row = visible_session(&m, &caller, &reference)?;
    Ok(Json(session_info(&m, &row)))
}

pub async fn destroy(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> ApiResult<Json<Destroyed>> {
    let row = visible_session(&m, &caller, &reference)?;
    let forced = q
        .get("forced")
        .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "true" | "1" | "yes"));
    if m.images.commits.ongoing(row.id).is_some() {
        if !forced {
            return Err(Problem::conflict(
                "session-busy",
                "The session is being committed.",
                format!(
                    "session {:?} is being committed; wait until the commit is done, or \
                     terminate it by force (forced=true, `-f`) to stop the commit",
                    row.name
                ),
            )
            .into());
        }
        // The commit task removes what it made once its engine call returns.
        m.images.commits.cancel(row.id);
    }
    let st = terminate(
        &m.lifecycle,
        row.id,
        bai_core::Reason::UserRequested,
        SessionResult::Undefined,
    )
    .await
    .map_err(ApiError)?;
    Ok(Json(Destroyed {
        stats: DestroyedStats {
            status: st.as_str().to_ascii_lowercase(),
        },
        status: st,
        session_id: row.id.to_string(),
    }))
}

/// `GET /session/{ref}/logs[?kernel_id=ID]`: the logs of the session's main kernel, or of
/// the kernel asked for (which must be one of the session's).
pub async fn logs(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> ApiResult<Json<Logs>> {
    let row = visible_session(&m, &caller, &reference)?;
    // A kernel by its id or (bai's addition) its hostname: `main1`, `sub1`, …
    let subs = if row.spec.cluster_size > 1 {
        m.store.sub_kernels(row.id)?
    } else {
        Vec::new()
    };
    let sub = match q.get("kernel_id").or_else(|| q.get("kernelId")) {
        None => None,
        Some(k) if *k == row.main_kernel_id.to_string() || k == "main1" => None,
        Some(k) => Some(
            subs.iter()
                .find(|s| s.id.to_string() == *k || s.hostname() == *k)
                .ok_or_else(|| {
                    Problem::not_found(
                        "kernel",
                        format!("session {:?} has no kernel {k:?}", row.name),
                    )
                })?,
        ),
    };
    let (kernel, agent) = match sub {
        Some(k) => (k.id, k.agent_id.clone()),
        None => (row.main_kernel_id, row.state.agent_id.clone()),
    };
    let live = row.state.status.is_up() || row.state.status == S::Terminating;
    let mut text = None;
    if live && let Some(agent) = agent.as_deref().and_then(|a| m.agents.get(a)) {
        text = agent.rpc.logs(kernel).await.ok();
    }
    let text = match (text, sub) {
        (Some(t), _) => t,
        (None, Some(k)) => m.store.sub_kernel_logs(k.id)?.unwrap_or_default(),
        (None, None) => m.store.logs(row.id)?.unwrap_or_default(),
    };
    Ok(Json(Logs {
        result: LogsResult { logs: text },
    }))
}

/// `GET /session/{ref}/stats`: the session's recent resource use (one sample per monitor
/// interval: CPU and memory in percent of the allocation, network and disk in bytes per
/// second) and the idle checkers' reports.
pub async fn stats(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
) -> ApiResult<Json<bai_api::sessions::Stats>> {
    let row = visible_session(&m, &caller, &reference)?;
    Ok(Json(super::views::stats::stats(&m.readings, &row)))
}

pub async fn rename(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> ApiResult<StatusCode> {
    let row = visible_session(&m, &caller, &reference)?;
    let new = q
        .get("name")
        .ok_or_else(|| Problem::invalid("give the new name as ?name=NEW"))?;
    let name = bai_core::SessionName::parse(new).map_err(|e| Problem::invalid(e.to_string()))?;
    if row.state.status.is_terminal() {
        return Err(Problem::invalid(format!(
            "session {:?} has ended; only live sessions can be renamed",
            row.name
        ))
        .into());
    }
    if let Some(other) = m
        .store
        .live_session_named(&row.spec.access_key, name.as_str())?
        && other.id != row.id
    {
        return Err(Problem::conflict(
            "session-already-exists",
            "The session already exists.",
            format!("you already have a live session named {new:?}; pick another name"),
        )
        .into());
    }
    m.store.rename_session(row.id, name.as_str())?;
    Ok(StatusCode::NO_CONTENT)
}

/// Checks a user-given relative path: no absolute paths, no `..`, no NUL, bounded length.
pub fn safe_relative_path(p: &str) -> Result<String, Problem> {
    if p.is_empty() || p.len() > 4096 {
        return Err(Problem::invalid("file path must be 1 to 4096 bytes long"));
    }
    if p.contains('\0') {
        return Err(Problem::invalid("file path contains a NUL byte"));
    }
    if p.starts_with('/') {
        return Err(Problem::invalid(format!(
            "file path {p:?} must be relative to /home/work"
        )));
    }
    let mut parts = Vec::new();
    for c in p.split('/') {
        match c {
            "" | "." => continue,
            ".." => {
                return Err(Problem::invalid(format!(
                    "file path {p:?} must not contain '..'"
                )));
            }
            c if c.len() > 255 => {
                return Err(Problem::invalid("a file name is longer than 255 bytes"));
            }
            c => parts.push(c),
        }
    }
    if parts.is_empty() {
        return Err(Problem::invalid(format!("file path {p:?} names no file")));
    }
    Ok(parts.join("/"))
}

pub async fn upload(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
    mut multipart: Multipart,
) -> ApiResult<StatusCode> {
    let row = visible_session(&m, &caller, &reference)?;
    if row.state.status != S::Running {
        return Err(Problem::invalid(format!(
            "session {:?} is {}, files can be uploaded only while it runs",
            row.name, row.state.status
        ))
        .into());
    }
    let mut files = Vec::new();
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|e| Problem::invalid(format!("bad multipart body: {e}")))?
    {
        let Some(name) = field.file_name().map(str::to_string) else {
            continue;
        };
        let path = safe_relative_path(&name)?;
        let data = field
            .bytes()
            .await
            .map_err(|e| Problem::invalid(format!("upload of {name:?} broke off: {e}")))?;
        files.push((path, data));
    }
    let agent = m.agents.holding(&row)?;
    agent
        .rpc
        .upload_files(row.main_kernel_id, files)
        .await
        .map_err(|e| Problem::from(e).context("upload failed"))?;
    Ok(StatusCode::NO_CONTENT)
}

pub async fn status_history(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
) -> ApiResult<Json<StatusHistory>> {
    let row = visible_session(&m, &caller, &reference)?;
    Ok(Json(StatusHistory {
        result: row.state.status_history,
    }))
}

pub async fn scheduling_history(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
    Query(filter): Query<HistoryFilter>,
) -> ApiResult<Json<SchedulingHistory>> {
    let row = visible_session(&m, &caller, &reference)?;
    if let Some(r) = &filter.result
        && !HistoryResult::ALL
            .iter()
            .any(|x| x.as_str().eq_ignore_ascii_case(r))
    {
        return Err(Problem::invalid(format!(
            "result {r:?} is not one of {}",
            HistoryResult::ALL.map(|x| x.as_str()).join(", ")
        ))
        .into());
    }
    let result = m
        .store
        .history(row.id)?
        .into_iter()
        .filter(|h| filter.matches(h))
        .collect();
    Ok(Json(SchedulingHistory { result }))
}

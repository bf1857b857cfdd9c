//! Session commits (wire reference next §1): `POST /session/{ref}/commit` (a tarball on the
//! agent), `GET /session/{ref}/commit` (ready or ongoing), `POST /session/{ref}/imagify`
//! (convert to a private image; `image_name` from the JSON body or the query string), and
//! `GET /events/background-task?task_id=` to follow them.

use super::visible_session;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::Extension;
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use bai_api::body::Fields;
use bai_api::images::{CommitStarted, CommitStatus, ImagifyStarted};
use bai_control::images::convert::Owner;
use bai_core::Problem;
use bai_ground::bgtask::BgEvent;
use futures::Stream;
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio_stream::wrappers::ReceiverStream;
use uuid::Uuid;

fn owner_email(m: &Manager, access_key: &str, fallback: &str) -> String {
    m.store
        .keypair(access_key)
        .ok()
        .flatten()
        .map(|k| k.email)
        .unwrap_or_else(|| fallback.to_string())
}

pub async fn commit(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
) -> ApiResult<(StatusCode, Json<CommitStarted>)> {
    let row = visible_session(&m, &caller, &reference)?;
    let email = owner_email(&m, &row.spec.access_key, &caller.email);
    let s = bai_control::images::commit_file::start(&m.images, &row.spec.access_key, &email, &row)?;
    Ok((
        StatusCode::CREATED,
        Json(CommitStarted {
            bgtask_id: s.task_id.to_string(),
            kernel: s.kernel.to_string(),
            path: s.path,
        }),
    ))
}

pub async fn commit_status(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
) -> ApiResult<Json<CommitStatus>> {
    let row = visible_session(&m, &caller, &reference)?;
    let ongoing = m.images.commits.ongoing(row.id);
    Ok(Json(CommitStatus {
        status: if ongoing.is_some() {
            "ongoing"
        } else {
            "ready"
        }
        .into(),
        kernel: row.main_kernel_id.to_string(),
        bgtask_id: ongoing.map(|t| t.id.to_string()),
    }))
}

/// Backend.AI's clients send the fields in the query (CLI) or a JSON body (web UI).
fn field(body: &Fields, q: &HashMap<String, String>, key: &str) -> Option<String> {
    body.text(key).or_else(|| q.get(key).cloned())
}

pub async fn imagify(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    body: Bytes,
) -> ApiResult<Json<ImagifyStarted>> {
    let body = Fields::read(body.trim_ascii())?;
    let row = visible_session(&m, &caller, &reference)?;
    let name = field(&body, &q, "image_name")
        .ok_or_else(|| Problem::invalid("image_name is required: the new image's name"))?;
    let visibility = field(&body, &q, "image_visibility");
    let owner = Owner {
        user_id: row.spec.user_id.clone(),
        email: owner_email(&m, &row.spec.access_key, &caller.email),
        access_key: row.spec.access_key.clone(),
    };
    let task =
        bai_control::images::convert::start(&m.images, owner, &row, &name, visibility.as_deref())?;
    Ok(Json(ImagifyStarted {
        task_id: task.to_string(),
    }))
}

type Tx = tokio::sync::mpsc::Sender<Result<Event, Infallible>>;

/// Sends one event and, after the task's final one, `server_close`. Returns whether the
/// stream goes on.
async fn forward(tx: &Tx, ev: &BgEvent) -> bool {
    let sse = Event::default()
        .event(ev.kind.as_str())
        .data(serde_json::to_string(&super::views::bgtask::event_data(ev)).unwrap_or_default());
    if tx.send(Ok(sse)).await.is_err() {
        return false;
    }
    if ev.kind.is_final() {
        let _ = tx.send(Ok(super::events::server_close())).await;
        return false;
    }
    true
}

pub async fn bgtask_events(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Query(q): Query<HashMap<String, String>>,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let id = q
        .get("task_id")
        .or_else(|| q.get("taskId"))
        .ok_or_else(|| Problem::invalid("name the task: ?task_id=UUID"))?;
    let id = Uuid::parse_str(id)
        .map_err(|_| Problem::invalid(format!("task_id {id:?} is not a UUID")))?;
    let task = m
        .bgtasks
        .get(id)
        .filter(|t| caller.is_admin || t.owner_access_key == caller.access_key)
        .ok_or_else(|| {
            Problem::not_found("task", format!("no background task {id} is visible to you"))
        })?;
    let (last, mut rx) = task.subscribe();
    let (tx, out) = tokio::sync::mpsc::channel::<Result<Event, Infallible>>(16);
    tokio::spawn(async move {
        if let Some(ev) = last
            && !forward(&tx, &ev).await
        {
            return;
        }
        loop {
            let ev = match rx.recv().await {
                Ok(ev) => ev,
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return,
            };
            if !forward(&tx, &ev).await {
                return;
            }
        }
    });
    Ok(Sse::new(ReceiverStream::new(out))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

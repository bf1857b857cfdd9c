//! `POST /session/{ref}`: code execution by long poll (wire contract §6.3), what the official
//! SDK's `ComputeSession.execute` (and Backend.AI's integration specs) use. A `query` or
//! `batch` request starts a run under a `runId`; each answer carries the output since the last
//! one and a status: `finished` (with `exitCode`), `waiting-input` (send `mode: input` with the
//! line as `code`), or `continued` (ask again with `mode: continue`).

use super::execute::{parse_request, runs_code};
use super::visible_session;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::exec_runs::Run;
use crate::state::Manager;
use axum::extract::{Path, State};
use axum::{Extension, Json};
use bai_api::sessions::{ExecuteReply, ExecuteRequest, ExecuteResult};
use bai_core::Problem;
use bai_core::agent::{ExecEvent, ExecRequest};
use futures::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// How long one answer waits for output before it says `continued`.
const POLL: Duration = Duration::from_secs(5);
fn push(console: &mut Vec<(String, String)>, kind: &str, text: String) {
    match console.last_mut() {
        Some((k, t)) if k == kind => t.push_str(&text),
        _ => console.push((kind.to_string(), text)),
    }
}

/// Reads the run's output until it finishes, waits for input, or `POLL` passes.
async fn poll(run: &mut Run) -> ExecuteResult {
    let mut console = Vec::new();
    let deadline = tokio::time::Instant::now() + POLL;
    loop {
        match tokio::time::timeout_at(deadline, run.stream.next()).await {
            Ok(Some(ExecEvent::Stdout { data })) => push(&mut console, "stdout", data),
            Ok(Some(ExecEvent::Stderr { data })) => push(&mut console, "stderr", data),
            Ok(Some(ExecEvent::WaitingInput { prompt, password })) => {
                if !prompt.is_empty() {
                    push(&mut console, "stdout", prompt);
                }
                return ExecuteResult::waiting_input(console, password);
            }
            Ok(Some(ExecEvent::Finished { exit_code })) => {
                return ExecuteResult::new("finished", console, Some(exit_code));
            }
            Ok(None) => {
                push(
                    &mut console,
                    "stderr",
                    "the kernel stopped answering\n".into(),
                );
                return ExecuteResult::new("finished", console, Some(1));
            }
            Err(_) => return ExecuteResult::new("continued", console, None),
        }
    }
}

pub async fn execute(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<Json<ExecuteReply>> {
    let row = visible_session(&m, &caller, &reference)?;
    let body: ExecuteRequest = super::typed_body(&body)?;
    let mode = body.mode.as_deref().unwrap_or("");
    if mode.is_empty() {
        // Code completion (no mode): bai offers none.
        return Ok(Json(ExecuteReply {
            result: ExecuteResult {
                run_id: None,
                status: "finished".into(),
                console: Vec::new(),
                exit_code: None,
                options: None,
                files: Vec::new(),
                completions: Some(Vec::new()),
            },
        }));
    }
    let agent = runs_code(&m, &row)?;
    let kernel = row.main_kernel_id;
    let given = body.run_id.clone().filter(|r| !r.is_empty());
    let traffic = m.traffic.of(row.id);
    let run_id = given.unwrap_or_else(|| Uuid::new_v4().simple().to_string());
    let key = (row.id, run_id.clone());
    let run = match mode {
        "continue" | "input" => {
            let run = m.exec_runs.get(&key).ok_or_else(|| {
                Problem::not_found(
                    "run",
                    format!(
                        "no execution {run_id:?} is waiting in session {:?}",
                        row.name
                    ),
                )
            })?;
            if mode == "input" {
                let line = body.code.clone();
                traffic.add(line.len() as u64, 0);
                let mut ack = agent
                    .rpc
                    .execute(kernel, ExecRequest::Input { line })
                    .await?;
                while ack.next().await.is_some() {}
            }
            run
        }
        _ => {
            let req = parse_request(&body).map_err(Problem::invalid)?;
            traffic.add(body.code.len() as u64, 0);
            let stream = agent.rpc.execute(kernel, req).await?;
            m.exec_runs.put(key.clone(), Run { stream })
        }
    };
    let mut result = poll(&mut *run.lock().await).await;
    if result.status == "finished" {
        m.exec_runs.remove(&key);
    }
    let out: u64 = result.console.iter().map(|(_, t)| t.len() as u64).sum();
    traffic.add(0, out);
    result.run_id = Some(run_id);
    Ok(Json(ExecuteReply { result }))
}

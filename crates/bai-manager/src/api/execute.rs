//! `GET /stream/session/{ref}/execute`: code execution over a WebSocket (wire contract §6.2).
//! Output is coalesced: short snippets answer with one `finished` frame holding all their
//! output; long ones send `continued` frames at most once a second.

use super::visible_session;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::Extension;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::response::Response;
use bai_api::sessions::{ExecuteRequest, ExecuteResult};
use bai_core::Problem;
use bai_core::agent::{ExecEvent, ExecRequest};
use bai_core::status::SessionStatus;
use bai_ground::agents::AgentHandle;
use futures::{SinkExt, StreamExt};
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

pub async fn execute_ws(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
    ws: WebSocketUpgrade,
) -> ApiResult<Response> {
    let row = visible_session(&m, &caller, &reference)?;
    let agent = runs_code(&m, &row)?;
    let kernel = row.main_kernel_id;
    let traffic = m.traffic.of(row.id);
    Ok(ws.on_upgrade(move |socket| serve(agent, kernel, traffic, socket)))
}

/// The agent of a session that can run code now (RUNNING; code goes to its main kernel).
pub fn runs_code(m: &Manager, row: &bai_store::SessionRow) -> Result<Arc<AgentHandle>, Problem> {
    if row.state.status != SessionStatus::Running {
        return Err(Problem::invalid(format!(
            "session {:?} is {}; code runs only in RUNNING sessions",
            row.name, row.state.status
        )));
    }
    row.state
        .agent_id
        .as_deref()
        .and_then(|a| m.agents.get(a))
        .ok_or_else(|| Problem::internal("the session's agent is gone"))
}

/// The execution a request asks for (`mode` absent: `query`).
pub fn parse_request(r: &ExecuteRequest) -> Result<ExecRequest, String> {
    let code = r.code.clone();
    let opt = |k: &str| r.option(k);
    match r.mode.as_deref().unwrap_or("query") {
        "query" => Ok(ExecRequest::Query { code }),
        "batch" => Ok(ExecRequest::Batch {
            clean: opt("clean"),
            build: opt("build"),
            exec: opt("exec"),
        }),
        "input" => Ok(ExecRequest::Input { line: code }),
        other => Err(format!(
            "unknown execution mode {other:?}: use query or batch"
        )),
    }
}

#[derive(Default)]
struct Console(Vec<(String, String)>);

impl Console {
    fn push(&mut self, kind: &str, text: String) {
        match self.0.last_mut() {
            Some((k, t)) if k == kind => t.push_str(&text),
            _ => self.0.push((kind.to_string(), text)),
        }
    }
    fn take(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.0)
    }
}

fn frame(result: ExecuteResult) -> Message {
    Message::Text(result.frame().into())
}

/// The one frame of a run that could not start.
fn refused(why: String) -> Message {
    frame(ExecuteResult::new(
        "finished",
        vec![("stderr".into(), why)],
        Some(1),
    ))
}

/// Serves one execution; the code, input and output bytes count as the session's network
/// activity (for the idle checker).
async fn serve(
    agent: Arc<AgentHandle>,
    kernel: Uuid,
    traffic: Arc<bai_ground::apps::Traffic>,
    socket: WebSocket,
) {
    let (mut tx, mut rx) = socket.split();
    let first = loop {
        match rx.next().await {
            Some(Ok(Message::Text(t))) => break t.to_string(),
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
            _ => continue,
        }
    };
    traffic.add(first.len() as u64, 0);
    let req = match super::typed_body::<ExecuteRequest>(first.as_bytes())
        .map_err(|p| p.msg)
        .and_then(|r| parse_request(&r))
    {
        Ok(r) => r,
        Err(e) => {
            let _ = tx
                .send(refused(format!("bad execute request: {e}\n")))
                .await;
            let _ = tx.close().await;
            return;
        }
    };
    let mut stream = match agent.rpc.execute(kernel, req).await {
        Ok(s) => s,
        Err(e) => {
            let _ = tx.send(refused(format!("{e}\n"))).await;
            let _ = tx.close().await;
            return;
        }
    };
    let mut console = Console::default();
    let mut last_flush = tokio::time::Instant::now();
    loop {
        let next = tokio::time::timeout(Duration::from_millis(250), stream.next()).await;
        match next {
            Ok(Some(ExecEvent::Stdout { data })) => {
                traffic.add(0, data.len() as u64);
                console.push("stdout", data)
            }
            Ok(Some(ExecEvent::Stderr { data })) => {
                traffic.add(0, data.len() as u64);
                console.push("stderr", data)
            }
            Ok(Some(ExecEvent::WaitingInput { prompt, password })) => {
                if !prompt.is_empty() {
                    console.push("stdout", prompt);
                }
                if tx
                    .send(frame(ExecuteResult::waiting_input(
                        console.take(),
                        password,
                    )))
                    .await
                    .is_err()
                {
                    return;
                }
                last_flush = tokio::time::Instant::now();
                let line = loop {
                    match rx.next().await {
                        Some(Ok(Message::Text(t))) => break t.to_string(),
                        Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                        _ => continue,
                    }
                };
                traffic.add(line.len() as u64, 0);
                if let Ok(mut ack) = agent.rpc.execute(kernel, ExecRequest::Input { line }).await {
                    while ack.next().await.is_some() {}
                }
            }
            Ok(Some(ExecEvent::Finished { exit_code })) => {
                let _ = tx
                    .send(frame(ExecuteResult::new(
                        "finished",
                        console.take(),
                        Some(exit_code),
                    )))
                    .await;
                break;
            }
            Ok(None) => {
                console.push("stderr", "the kernel stopped answering\n".into());
                let _ = tx
                    .send(frame(ExecuteResult::new(
                        "finished",
                        console.take(),
                        Some(1),
                    )))
                    .await;
                break;
            }
            Err(_) => {}
        }
        if !console.0.is_empty() && last_flush.elapsed() >= Duration::from_secs(1) {
            if tx
                .send(frame(ExecuteResult::new("continued", console.take(), None)))
                .await
                .is_err()
            {
                return;
            }
            last_flush = tokio::time::Instant::now();
        }
    }
    // Wait briefly for the client's close so it sees a clean shutdown.
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while let Some(Ok(msg)) = rx.next().await {
            if matches!(msg, Message::Close(_)) {
                break;
            }
        }
    })
    .await;
    let _ = tx.close().await;
}

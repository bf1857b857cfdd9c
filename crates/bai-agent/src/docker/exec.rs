//! Code execution: one connection to the kernel's krunner per request, its event lines
//! turned into a stream of [`ExecEvent`]s that always ends with `Finished`.

use super::Inner;
use crate::error::runtime;
use crate::krunner_proto::{list_files_line, parse_event, request_line, start_app_line};
use bai_core::agent::{AgentError, ExecEvent, ExecRequest, FileEntry};
use futures::StreamExt;
use futures::stream::BoxStream;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use uuid::Uuid;

/// The longest event line accepted from a kernel (krunner sends at most 64 KiB of output
/// per event; anything far longer is a broken or hostile kernel).
const MAX_LINE: u64 = 16 << 20;
/// Exit code reported when the kernel vanishes mid-execution (as if killed).
const GONE_EXIT_CODE: i32 = 137;

enum Reading {
    Open(BufReader<UnixStream>),
    /// The connection ended before `Finished` (and that was said): finish now.
    Gone,
    Done,
}

pub async fn execute(
    inner: &Inner,
    kernel_id: Uuid,
    req: ExecRequest,
) -> Result<BoxStream<'static, ExecEvent>, AgentError> {
    request(inner, kernel_id, request_line(&req)?).await
}

/// Asks krunner to start an app and waits until it is ready (or refused).
pub async fn start_app(inner: &Inner, kernel_id: Uuid, name: &str) -> Result<(), AgentError> {
    let mut events = request(inner, kernel_id, start_app_line(name)?).await?;
    let mut why = String::new();
    while let Some(ev) = events.next().await {
        match ev {
            ExecEvent::Stderr { data } | ExecEvent::Stdout { data } => why.push_str(&data),
            ExecEvent::Finished { exit_code: 0 } => return Ok(()),
            ExecEvent::Finished { .. } => break,
            _ => {}
        }
    }
    Err(AgentError::BadRequest(format!(
        "the app {name:?} did not start: {}",
        why.trim()
    )))
}

/// Asks krunner for one directory's entries (it lists as the kernel's user, inside the
/// container, so mounted folders are seen and nothing of the host is).
pub async fn list_files(
    inner: &Inner,
    kernel_id: Uuid,
    path: &str,
) -> Result<Vec<FileEntry>, AgentError> {
    let mut events = request(inner, kernel_id, list_files_line(path)).await?;
    let (mut out, mut err) = (String::new(), String::new());
    while let Some(ev) = events.next().await {
        match ev {
            ExecEvent::Stdout { data } => out.push_str(&data),
            ExecEvent::Stderr { data } => err.push_str(&data),
            ExecEvent::Finished { exit_code: 0 } => {
                return serde_json::from_str(&out).map_err(|e| {
                    AgentError::Runtime(format!("the kernel's runner sent a bad listing: {e}"))
                });
            }
            ExecEvent::Finished { .. } => break,
            _ => {}
        }
    }
    Err(AgentError::BadRequest(format!(
        "cannot list {path:?}: {}",
        err.trim()
    )))
}

/// Sends one request line to the kernel's krunner; its event lines become a stream.
async fn request(
    inner: &Inner,
    kernel_id: Uuid,
    line: String,
) -> Result<BoxStream<'static, ExecEvent>, AgentError> {
    let dirs = inner.dirs(kernel_id);
    if !dirs.root.exists() {
        return Err(AgentError::KernelNotFound(kernel_id));
    }
    let mut stream = UnixStream::connect(&dirs.socket)
        .await
        .map_err(|e| runtime("cannot reach the kernel's runner", e))?;
    stream
        .write_all(line.as_bytes())
        .await
        .map_err(|e| runtime("cannot send the request to the kernel's runner", e))?;
    let start = Reading::Open(BufReader::new(stream));
    let events = futures::stream::unfold(start, move |st| async move {
        match st {
            Reading::Open(reader) => Some(next_event(reader, kernel_id).await),
            Reading::Gone => Some((
                ExecEvent::Finished {
                    exit_code: GONE_EXIT_CODE,
                },
                Reading::Done,
            )),
            Reading::Done => None,
        }
    });
    Ok(events.boxed())
}

/// Reads the next event; a broken connection becomes a stderr explanation.
async fn next_event(mut reader: BufReader<UnixStream>, kernel_id: Uuid) -> (ExecEvent, Reading) {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let read = (&mut reader)
            .take(MAX_LINE)
            .read_until(b'\n', &mut buf)
            .await;
        let why = match read {
            Ok(0) => "the kernel went away during the execution (its runner closed the connection)"
                .to_string(),
            Ok(_) if buf.last() != Some(&b'\n') => {
                if buf.len() as u64 >= MAX_LINE {
                    "the kernel sent an oversized message; the execution is abandoned".to_string()
                } else {
                    "the kernel went away during the execution (its runner closed the connection)"
                        .to_string()
                }
            }
            Ok(_) => match parse_event(&buf) {
                Some(ev) => {
                    let next = if matches!(ev, ExecEvent::Finished { .. }) {
                        Reading::Done
                    } else {
                        Reading::Open(reader)
                    };
                    return (ev, next);
                }
                None => {
                    tracing::warn!(kernel = %kernel_id, line = %String::from_utf8_lossy(&buf).trim_end(), "ignoring an unknown line from krunner");
                    continue;
                }
            },
            Err(e) => format!("the connection to the kernel broke during the execution: {e}"),
        };
        tracing::warn!(kernel = %kernel_id, %why, "execution ended without finishing");
        return (
            ExecEvent::Stderr {
                data: format!("bai: {why}\n"),
            },
            Reading::Gone,
        );
    }
}

//! Talking to a kernel's runner. The pod's `/opt/bai/run` is a hostPath of the node, so the
//! agent (on that node) reaches krunner's socket there, as the Docker backend does: one
//! connection per request, one JSON line out, event lines back until `finished`.

use crate::krunner_proto::{PING, is_pong, parse_event};
use bai_core::agent::{AgentError, ExecEvent};
use futures::StreamExt;
use futures::stream::BoxStream;
use std::path::{Path, PathBuf};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

/// The longest event line accepted (krunner sends at most 64 KiB of output per event).
const MAX_LINE: u64 = 16 << 20;
/// The exit code reported when the kernel goes away mid-execution (as if killed).
const GONE_EXIT_CODE: i32 = 137;

/// One ping; Ok when krunner answers `pong`.
pub async fn ping(socket: &Path) -> std::io::Result<()> {
    let mut s = UnixStream::connect(socket).await?;
    s.write_all(PING).await?;
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).await?;
    if is_pong(&line) {
        Ok(())
    } else {
        Err(std::io::Error::other(format!("unexpected answer {line:?}")))
    }
}

/// Sends `line`; the answer's events as a stream that always ends with `Finished`.
pub async fn request(
    socket: PathBuf,
    line: String,
) -> Result<BoxStream<'static, ExecEvent>, AgentError> {
    let mut s = UnixStream::connect(&socket)
        .await
        .map_err(|e| AgentError::Runtime(format!("cannot reach the kernel's runner: {e}")))?;
    s.write_all(line.as_bytes())
        .await
        .map_err(|e| AgentError::Runtime(format!("cannot send to the kernel's runner: {e}")))?;
    let events = futures::stream::unfold(Some(BufReader::new(s)), |reader| async move {
        let mut reader = reader?;
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let read = (&mut reader)
                .take(MAX_LINE)
                .read_until(b'\n', &mut buf)
                .await;
            match read {
                Ok(n) if n > 0 && buf.last() == Some(&b'\n') => match parse_event(&buf) {
                    Some(ev @ ExecEvent::Finished { .. }) => return Some((ev, None)),
                    Some(ev) => return Some((ev, Some(reader))),
                    None => continue,
                },
                _ => {
                    tracing::warn!("a kernel's runner went away during an execution");
                    return Some((
                        ExecEvent::Finished {
                            exit_code: GONE_EXIT_CODE,
                        },
                        None,
                    ));
                }
            }
        }
    });
    Ok(events.boxed())
}

/// The output of a request that must succeed (exit 0): its stdout, or its stderr as the error.
pub async fn collect(socket: PathBuf, line: String) -> Result<Result<String, String>, AgentError> {
    let mut events = request(socket, line).await?;
    let (mut out, mut err) = (String::new(), String::new());
    while let Some(ev) = events.next().await {
        match ev {
            ExecEvent::Stdout { data } => out.push_str(&data),
            ExecEvent::Stderr { data } => err.push_str(&data),
            ExecEvent::Finished { exit_code: 0 } => return Ok(Ok(out)),
            ExecEvent::Finished { .. } => break,
            ExecEvent::WaitingInput { .. } => {}
        }
    }
    Ok(Err(if err.trim().is_empty() { out } else { err }))
}
